package buckets_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestCountsPerKind: a bucket keeps one count per kind of the table, as
// the kind's value type says; an unknown kind has none.
func TestCountsPerKind(t *testing.T) {
	var events []metrics.Event
	for i, k := range voiceops.MetricKinds {
		events = append(events, ev(k, "acct_a", "", float64(10+i), t0))
	}
	bs := buckets.Aggregate(events)
	if len(bs) != 1 {
		t.Fatalf("%d buckets", len(bs))
	}
	c := bs[0].Counts
	for i, k := range voiceops.MetricKinds {
		want := int64(10 + i) // a count: its value
		switch k.Value() {
		case voiceops.ValueLatency:
			want = 1 // one latency
		case voiceops.ValueIgnored:
			want = int64(len(voiceops.MetricKinds)) // activity: every event
		}
		if c.Of(k) != want {
			t.Errorf("%s: %d, want %d (counts %v)", k, c.Of(k), want, c)
		}
	}
	if c.Of("cpu") != 0 || c.Set("cpu", 1) {
		t.Error(`an unknown kind "cpu" has a count`)
	}
	var sum buckets.Counts
	sum.Add(c)
	sum.Add(c)
	if sum.Of(metrics.APIErrors) != 2*c.Of(metrics.APIErrors) || sum.IsZero() || !(buckets.Counts{}).IsZero() {
		t.Errorf("Add: %v", sum)
	}
	if got := buckets.NewCounts(map[metrics.Kind]int64{metrics.Activity: 2, metrics.APIErrors: 1}).String(); got != "api_errors=1 activity=2" {
		t.Errorf("String() = %q", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewCounts of an unknown kind did not panic")
		}
	}()
	buckets.NewCounts(map[metrics.Kind]int64{"cpu": 1})
}
