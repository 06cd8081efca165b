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
