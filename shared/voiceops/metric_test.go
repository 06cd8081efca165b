package voiceops

import (
	"slices"
	"testing"
)

// TestMetricSources: every rule metric reads a known kind, a count as a
// sum, turn latencies as a percentile.
func TestMetricSources(t *testing.T) {
	want := []Metric{"turn_latency_p50", "turn_latency_p95", "api_errors", "function_errors", "call_crashes", "call_volume"}
	if !slices.Equal(Metrics, want) {
		t.Errorf("Metrics = %v, want %v", Metrics, want)
	}
	for _, m := range Metrics {
		src, ok := m.Source()
		switch {
		case !ok:
			t.Errorf("%s: no source", m)
		case !slices.Contains(MetricKinds, src.Kind):
			t.Errorf("%s reads unknown kind %q", m, src.Kind)
		case src.Kind == KindTurnLatency && !(src.Quantile > 0 && src.Quantile < 1):
			t.Errorf("%s: quantile %v", m, src.Quantile)
		case src.Kind != KindTurnLatency && (!src.Kind.IsCount() || src.Quantile != 0):
			t.Errorf("%s: %+v is neither a count nor a latency", m, src)
		}
	}
	if _, ok := Metric("activity").Source(); ok {
		t.Error(`"activity" is not a rule metric`)
	}
}
