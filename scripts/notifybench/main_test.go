package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestTallyDiscardsTrialsThatFiredBeforeTheirBreach: a trial whose
// delivery arrived before its breach was sent (a rule firing on an earlier
// run's data), or whose rule was firing already, is discarded and
// reported, never counted as a (negative) time to notify.
func TestTallyDiscardsTrialsThatFiredBeforeTheirBreach(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	all := []trial{
		{rule: "ar_1", sent: t0, arrived: t0.Add(300 * time.Millisecond)},
		{rule: "ar_2", sent: t0, arrived: t0.Add(-2 * time.Second)},
		{rule: "ar_3", sent: t0, early: true},
		{rule: "ar_4", sent: t0, arrived: t0.Add(700 * time.Millisecond), busy: true},
		{rule: "ar_5", sent: t0},
	}
	r := tally(all, func(string) int { return 1 })
	if r.trials != 5 || r.discarded != 2 || r.missing != 1 || len(r.lat) != 2 || len(r.quiet) != 1 || len(r.busy) != 1 {
		t.Fatalf("%+v", r)
	}
	for _, d := range r.lat {
		if d < 0 {
			t.Errorf("a negative time to notify was measured: %v", d)
		}
	}
	var out bytes.Buffer
	r.print(&out)
	if !strings.Contains(out.String(), "discarded 2 (fired before their breach)") || !strings.Contains(out.String(), "quiet scopes: n 1, p50 300ms, p99 n/a (max of 1)") ||
		!strings.Contains(out.String(), "busy scopes:  n 1, p50 700ms") {
		t.Errorf("report:\n%s", out.String())
	}
}

// TestThresholdsStartFromAQuietScope: whatever the scope already holds in
// the window, the rule is not breached by it, and the trial's event alone
// breaches it.
func TestThresholdsStartFromAQuietScope(t *testing.T) {
	for _, c := range []struct {
		kind        string
		round, held int64
	}{
		{"api_errors", 2, 0}, {"api_errors", 2, 30}, {"function_errors", 4, 7},
		{"turn_latency", 1000, 0}, {"turn_latency", 1000, 1500}, {"turn_latency", 2000, 900},
	} {
		threshold, value := thresholds(c.kind, c.round, c.held)
		if c.kind == "turn_latency" {
			// The rule is "p95 > threshold".
			if c.held > threshold || value <= float64(threshold) || threshold < c.round {
				t.Errorf("%+v: threshold %d, value %v", c, threshold, value)
			}
			continue
		}
		// The rule is "count >= threshold".
		if c.held >= threshold || value < float64(threshold) || threshold < c.round {
			t.Errorf("%+v: threshold %d, value %v", c, threshold, value)
		}
	}
}
