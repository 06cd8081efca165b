package metrics_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func ev(kind metrics.Kind, acct, proj string, value float64, at time.Time) metrics.Event {
	return metrics.Event{AccountID: acct, ProjectID: proj, Kind: kind, Value: value, At: at}
}

func TestEventCheck(t *testing.T) {
	ok := ev(metrics.CallVolume, "acct_a", "proj_1", 1, t0)
	with := func(f func(*metrics.Event)) metrics.Event { e := ok; f(&e); return e }
	for _, tc := range []struct {
		name  string
		e     metrics.Event
		valid bool
	}{
		{"valid", ok, true},
		{"no project", with(func(e *metrics.Event) { e.ProjectID = "" }), true},
		{"latency 0", with(func(e *metrics.Event) { e.Kind, e.Value = metrics.TurnLatency, 0 }), true},
		{"latency max", with(func(e *metrics.Event) { e.Kind, e.Value = metrics.TurnLatency, metrics.MaxLatencyMS }), true},
		{"activity ignores its value", with(func(e *metrics.Event) { e.Kind, e.Value = metrics.Activity, -5 }), true},
		{"no account", with(func(e *metrics.Event) { e.AccountID = "" }), false},
		{"bad project", with(func(e *metrics.Event) { e.ProjectID = "x/y" }), false},
		{"unknown kind", with(func(e *metrics.Event) { e.Kind = "cpu" }), false},
		{"no time", with(func(e *metrics.Event) { e.At = time.Time{} }), false},
		{"negative latency", with(func(e *metrics.Event) { e.Kind, e.Value = metrics.TurnLatency, -1 }), false},
		{"NaN latency", with(func(e *metrics.Event) { e.Kind, e.Value = metrics.TurnLatency, math.NaN() }), false},
		{"latency too high", with(func(e *metrics.Event) { e.Kind, e.Value = metrics.TurnLatency, metrics.MaxLatencyMS+1 }), false},
		{"fractional count", with(func(e *metrics.Event) { e.Value = 1.5 }), false},
		{"negative count", with(func(e *metrics.Event) { e.Value = -1 }), false},
		{"count too high", with(func(e *metrics.Event) { e.Value = metrics.MaxCount + 1 }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.e.Check(); (err == nil) != tc.valid {
				t.Errorf("Check() = %v, want valid %v", err, tc.valid)
			}
		})
	}
}

// TestEventProblems: the intake's rules, one problem per field in the
// order of the intake's fields; the time may be 2 hours old, 1 minute ahead.

func TestEventProblems(t *testing.T) {
	now := t0.Add(30 * time.Second)
	ok := ev(metrics.CallVolume, "acct_a", "proj_1", 1, t0)
	with := func(f func(*metrics.Event)) metrics.Event { e := ok; f(&e); return e }
	for _, tc := range []struct {
		name string
		e    metrics.Event
		want []voiceops.FieldError
	}{
		{"valid", ok, nil},
		{"oldest", with(func(e *metrics.Event) { e.At = now.Add(-metrics.Retention) }), nil},
		{"latest", with(func(e *metrics.Event) { e.At = now.Add(metrics.MaxFuture) }), nil},
		{"too old", with(func(e *metrics.Event) { e.At = now.Add(-metrics.Retention - time.Nanosecond) }),
			[]voiceops.FieldError{{Field: "at", Message: "must be within the last 2 hours"}}},
		{"too far ahead", with(func(e *metrics.Event) { e.At = now.Add(metrics.MaxFuture + time.Nanosecond) }),
			[]voiceops.FieldError{{Field: "at", Message: "must not be more than 1 minute in the future"}}},
		{"every field", metrics.Event{AccountID: "a b", ProjectID: "x/y", Kind: "cpu", At: now.Add(time.Hour)}, []voiceops.FieldError{
			{Field: "account_id", Message: "must be an account ID: 1 to 64 letters, digits, _ or -"},
			{Field: "project_id", Message: "must be null or a project ID: 1 to 64 letters, digits, _ or -"},
			{Field: "metric", Message: voiceops.OneOf(metrics.Kinds)}, // "must be one of: turn_latency, api_errors, ..."
			{Field: "at", Message: "must not be more than 1 minute in the future"},
		}},
		{"latency", with(func(e *metrics.Event) { e.Kind, e.Value = metrics.TurnLatency, math.NaN() }),
			[]voiceops.FieldError{{Field: "value", Message: "must be a number of milliseconds from 0 to 86400000"}}},
		{"count", with(func(e *metrics.Event) { e.Value = 0.5 }),
			[]voiceops.FieldError{{Field: "value", Message: "must be an integer count from 0 to 2147483647"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.e.Problems(now); !slices.Equal(got, tc.want) {
				t.Errorf("Problems = %v, want %v", got, tc.want)
			}
		})
	}
	// Check does not mind the age.
	if err := with(func(e *metrics.Event) { e.At = now.Add(-24 * time.Hour) }).Check(); err != nil {
		t.Errorf("Check of an old event: %v", err)
	}
}

// TestKinds: the kinds stored before keep their names and value types (a
// new kind adds to them).
func TestKinds(t *testing.T) {
	for _, k := range []metrics.Kind{"api_errors", "function_errors", "call_crashes", "call_volume"} {
		if !k.IsCount() {
			t.Errorf("%s is not a count kind", k)
		}
	}
	if !metrics.Kind("turn_latency").IsLatency() || metrics.Kind("activity").Value() != voiceops.ValueIgnored {
		t.Error("turn_latency is not a latency, or activity's value is not ignored")
	}
	if !strings.HasPrefix(voiceops.OneOf(metrics.Kinds), "must be one of: turn_latency, api_errors, function_errors, call_crashes, call_volume") {
		t.Errorf("the kinds' order changed: %s", voiceops.OneOf(metrics.Kinds))
	}
	// Every count metric of the domain is a kind of the same name.
	for _, m := range voiceops.Metrics {
		if src, _ := m.Source(); src.Quantile == 0 && metrics.Kind(m) != src.Kind {
			t.Errorf("count metric %s reads kind %s", m, src.Kind)
		}
	}
}
