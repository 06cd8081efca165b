package voiceops

import (
	"encoding/json"
	"testing"
	"time"
)

func TestEvaluationStateMachine(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := t0.Add(5 * time.Minute)
	val := func(v int64) Outcome { return Outcome{Value: v} }
	noData, failed := Outcome{NoData: true}, Outcome{Failed: true}
	cases := []struct {
		from      State
		outcome   Outcome
		to        State
		event     EventType // "" = none
		sinceMove bool
	}{
		{StateOK, val(11), StateAlert, EventTriggered, true},
		{StateOK, val(10), StateOK, "", false},
		{StateOK, noData, StateNoData, "", true},
		{StateOK, failed, StateUnknown, "", true},
		{StateAlert, val(11), StateAlert, "", false},
		{StateAlert, val(10), StateOK, EventResolved, true},
		{StateAlert, noData, StateNoData, EventResolved, true},
		{StateAlert, failed, StateAlert, "", false},
		{StateNoData, val(11), StateAlert, EventTriggered, true},
		{StateNoData, val(0), StateOK, "", true},
		{StateNoData, noData, StateNoData, "", false},
		{StateNoData, failed, StateUnknown, "", true},
		{StateUnknown, val(11), StateAlert, EventTriggered, true},
		{StateUnknown, val(1), StateOK, "", true},
		{StateUnknown, noData, StateNoData, "", true},
		{StateUnknown, failed, StateUnknown, "", false},
	}
	for _, c := range cases {
		r := NewRule("ar_1", "acct", RuleInput{Name: "n", Metric: MetricAPIErrors, Operator: OpGreater, Threshold: 10, Window: Window5m}, t0)
		r.State = c.from
		got, ev := r.Evaluated(c.outcome, at)
		name := string(c.from) + "->" + string(c.to)
		if got.State != c.to {
			t.Errorf("%s: state %s", name, got.State)
		}
		if got.Version != r.Version+1 {
			t.Errorf("%s: version %d", name, got.Version)
		}
		if c.sinceMove != got.Since.Equal(at) {
			t.Errorf("%s: since %v", name, got.Since)
		}
		if (ev == nil) != (c.event == "") || (ev != nil && ev.Type != c.event) {
			t.Errorf("%s: event %+v, want %q", name, ev, c.event)
		}
		if c.outcome.Failed && c.from == StateAlert && got.LastEvaluatedAt != nil {
			t.Errorf("%s: a failed evaluation moved last_evaluated_at", name)
		}
		if !c.outcome.Failed && !got.LastEvaluatedAt.Equal(at) {
			t.Errorf("%s: last_evaluated_at %v", name, got.LastEvaluatedAt)
		}
		if c.outcome.NoData && got.CurrentValue != nil {
			t.Errorf("%s: current_value %v on no_data", name, *got.CurrentValue)
		}
		if ev != nil {
			var body map[string]any
			if err := json.Unmarshal(ev.Body, &body); err != nil {
				t.Fatal(err)
			}
			alert := body["alert"].(map[string]any)
			if body["event_type"] != string(c.event) || body["event_id"] != ev.ID || alert["previous_state"] != string(c.from) ||
				alert["current_state"] != string(c.to) || alert["operator"] != ">" || alert["threshold_value"] != float64(10) {
				t.Errorf("%s: body %s", name, ev.Body)
			}
			stamp := "triggered_at"
			if c.event == EventResolved {
				stamp = "resolved_at"
			}
			if alert[stamp] != "2026-11-22T10:05:00.000Z" {
				t.Errorf("%s: %s = %v", name, stamp, alert[stamp])
			}
		}
	}
}

func TestTriggeredAndResolvedAlternate(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r := NewRule("ar_1", "acct", RuleInput{Name: "n", Metric: MetricCallVolume, Operator: OpGreaterEqual, Threshold: 3, Window: Window5m}, t0)
	seq := []Outcome{{Value: 5}, {Failed: true}, {Value: 4}, {NoData: true}, {Failed: true}, {Value: 3}, {Value: 1}, {Value: 9}}
	var events []EventType
	for i, o := range seq {
		var ev *AlertEvent
		r, ev = r.Evaluated(o, t0.Add(time.Duration(i+1)*time.Minute))
		if ev != nil {
			events = append(events, ev.Type)
		}
	}
	want := []EventType{EventTriggered, EventResolved, EventTriggered, EventResolved, EventTriggered}
	if len(events) != len(want) {
		t.Fatalf("events %v, want %v", events, want)
	}
	for i := range want {
		if events[i] != want[i] {
			t.Fatalf("events %v, want %v", events, want)
		}
	}
}

// TestEvaluationTimesAreTheInstant: the times an evaluation sets are its
// instant to the millisecond, never rounded to a minute and never before
// the rule's created_at (a rule created at 22:46:05.4 never shows since
// 22:46:00.000).
func TestEvaluationTimesAreTheInstant(t *testing.T) {
	created := time.Date(2026, 11, 22, 22, 46, 5, 400_000_000, time.UTC)
	for _, c := range []struct {
		name string
		at   time.Time
		want time.Time
	}{
		{"later, to the millisecond", created.Add(1234567891 * time.Nanosecond), created.Add(1234 * time.Millisecond)},
		{"before created_at (clock skew, minute start)", created.Truncate(time.Minute), created},
		{"in another zone", created.Add(2 * time.Second).In(time.FixedZone("UTC+2", 7200)), created.Add(2 * time.Second)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewRule("ar_1", "acct", RuleInput{Name: "n", Metric: MetricAPIErrors, Operator: OpGreaterEqual, Threshold: 1, Window: Window5m}, created)
			got, ev := r.Evaluated(Outcome{Value: 3}, c.at)
			if !got.Since.Equal(c.want) || !got.LastEvaluatedAt.Equal(c.want) || got.LastEvaluatedAt.Location() != time.UTC {
				t.Errorf("since %v, last_evaluated_at %v; want %v", got.Since, got.LastEvaluatedAt, c.want)
			}
			if ev == nil || !ev.CreatedAt.Equal(c.want) || !json.Valid(ev.Body) {
				t.Fatalf("event %+v", ev)
			}
			var body EventBody
			_ = json.Unmarshal(ev.Body, &body)
			if body.Alert.TriggeredAt != c.want.Format(TimeFormat) {
				t.Errorf("triggered_at %s, want %s", body.Alert.TriggeredAt, c.want.Format(TimeFormat))
			}
		})
	}
}

func TestEvaluationChanged(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r := NewRule("ar_1", "acct", RuleInput{Name: "n", Metric: MetricAPIErrors, Operator: OpGreaterEqual, Threshold: 5, Window: Window5m}, t0)
	r, _ = r.Evaluated(Outcome{Value: 2}, t0.Add(time.Minute))
	for _, c := range []struct {
		name string
		o    Outcome
		want bool
	}{
		{"same value and state", Outcome{Value: 2}, false},
		{"another value, same state", Outcome{Value: 3}, true},
		{"into alert", Outcome{Value: 5}, true},
		{"no data", Outcome{NoData: true}, true},
		{"failed", Outcome{Failed: true}, true},
	} {
		next, _ := r.Evaluated(c.o, t0.Add(2*time.Minute))
		if got := r.EvaluationChanged(next); got != c.want {
			t.Errorf("%s: EvaluationChanged = %v, want %v", c.name, got, c.want)
		}
	}
	alert, _ := r.Evaluated(Outcome{Value: 9}, t0.Add(2*time.Minute))
	if next, _ := alert.Evaluated(Outcome{Failed: true}, t0.Add(3*time.Minute)); alert.EvaluationChanged(next) {
		t.Error("a failed evaluation of a firing rule changed it")
	}
}

func TestWithMark(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r := NewRule("ar_1", "acct", RuleInput{Name: "n", Metric: MetricAPIErrors, Operator: OpGreater, Threshold: 10, Window: Window5m}, t0)
	own := t0.Add(2 * time.Minute)
	r.LastEvaluatedAt = &own
	for _, c := range []struct {
		name string
		rule func(AlertRule) AlertRule
		mark time.Time
		want time.Time
	}{
		{"a later mark", nil, t0.Add(3 * time.Minute), t0.Add(3 * time.Minute)},
		{"an earlier mark", nil, t0.Add(time.Minute), own},
		{"no mark", nil, time.Time{}, own},
		{"changed after the mark", func(r AlertRule) AlertRule { r.UpdatedAt = t0.Add(4 * time.Minute); return r }, t0.Add(3 * time.Minute), own},
		{"disabled", func(r AlertRule) AlertRule { r.Enabled = false; return r }, t0.Add(3 * time.Minute), own},
	} {
		in := r
		if c.rule != nil {
			in = c.rule(r)
		}
		if got := in.WithMark(c.mark); !got.LastEvaluatedAt.Equal(c.want) {
			t.Errorf("%s: last_evaluated_at %v, want %v", c.name, got.LastEvaluatedAt, c.want)
		}
	}
	if !r.LastEvaluatedAt.Equal(own) {
		t.Error("WithMark changed its receiver's copy")
	}
}
