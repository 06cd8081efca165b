package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestMetricsContract(t *testing.T) {
	storetest.RunMetrics(t, func(*testing.T) buckets.Store { return memory.NewMetrics() })
}

// TestMetricsPrune: buckets past the retention are dropped from memory,
// not only hidden from reads.
func TestMetricsPrune(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	m := memory.NewMetrics()
	m.Now = func() time.Time { return now }
	r := &buckets.Recorder{Store: m}
	if err := r.Record(ctx, metrics.Count(metrics.CallVolume, "acct_a", "proj_1", now.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	if n := m.Len(); n != 2 {
		t.Fatalf("%d buckets held, want 2", n)
	}
	now = now.Add(voiceops.MetricMinuteRetention) // kept that long for the series (shared/metrics/series)
	if err := r.Record(ctx, metrics.Count(metrics.CallVolume, "acct_b", "", now)); err != nil {
		t.Fatal(err)
	}
	if n := m.Len(); n != 1 {
		t.Errorf("%d buckets held after the retention, want 1", n)
	}
}

func TestRollupsContract(t *testing.T) {
	storetest.RunRollups(t, func(*testing.T) (buckets.Store, series.HourStore) {
		return memory.NewMetrics(), memory.NewRollups()
	})
}

// TestMetricsMergeInPlaceLeavesCopiesAlone: a minute's bucket takes each
// new one in place; a copy read before, and the bucket the caller passed,
// keep what they held.
func TestMetricsMergeInPlaceLeavesCopiesAlone(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 30, 0, time.UTC)
	m := memory.NewMetrics()
	m.Now = func() time.Time { return now }
	scope := metrics.Scope{AccountID: "acct_a", ProjectID: "proj_1"}
	at := func(v float64) []buckets.Bucket {
		return buckets.Aggregate([]metrics.Event{{AccountID: "acct_a", ProjectID: "proj_1", Kind: metrics.TurnLatency, Value: v, At: now}})
	}
	read := func() buckets.Bucket {
		bs, err := m.ReadBuckets(ctx, scope, now.Add(-time.Hour), now.Add(time.Hour))
		if err != nil || len(bs) != 1 {
			t.Fatalf("%d buckets, %v", len(bs), err)
		}
		return bs[0]
	}
	if err := m.AddBuckets(ctx, at(100)); err != nil {
		t.Fatal(err)
	}
	first := read()
	second := at(900)
	for range 2 {
		if err := m.AddBuckets(ctx, second); err != nil {
			t.Fatal(err)
		}
	}
	if n := first.Latency.GetCount(); n != 1 {
		t.Errorf("the copy read first holds %v latencies, want 1", n)
	}
	if n := second[len(second)-1].Latency.GetCount(); n != 1 {
		t.Errorf("the bucket passed holds %v latencies, want 1", n)
	}
	got := read()
	if n := got.Latency.GetCount(); n != 3 {
		t.Errorf("the stored minute holds %v latencies, want 3", n)
	}
	if p, _ := got.Latency.GetValueAtQuantile(1); p < 891 || p > 909 {
		t.Errorf("max latency %v, want about 900", p)
	}
}
