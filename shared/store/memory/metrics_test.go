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
