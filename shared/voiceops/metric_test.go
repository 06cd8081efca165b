package voiceops

import (
	"slices"
	"strings"
	"testing"
)

// TestMetricSources: every rule metric reads a known kind, a count as a
// sum, turn latencies as a percentile.
func TestMetricSources(t *testing.T) {
	// The metrics of the kinds before keep their names and order (stored
	// rules name them); a new kind adds to them.
	want := []Metric{"turn_latency_p50", "turn_latency_p95", "api_errors", "function_errors", "call_crashes", "call_volume"}
	if !slices.Equal(Metrics[:min(len(want), len(Metrics))], want) {
		t.Errorf("Metrics = %v, want them to begin with %v", Metrics, want)
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

// TestMetricKindDefs holds the table to what the code derived from it
// assumes.
func TestMetricKindDefs(t *testing.T) {
	seen := map[MetricKind]bool{}
	var latency, ignored []MetricKind
	for i, d := range MetricKindDefs() {
		if d.Kind == "" || seen[d.Kind] {
			t.Errorf("kind %d %q: empty or listed twice", i, d.Kind)
		}
		seen[d.Kind] = true
		if got, ok := d.Kind.Index(); !ok || got != i {
			t.Errorf("%s.Index() = %d, %v; want %d", d.Kind, got, ok, i)
		}
		if strings.Trim(string(d.Kind), "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			// It names a DynamoDB attribute and a JSON enum value.
			t.Errorf("kind %q: use lower-case letters, digits and _", d.Kind)
		}
		switch d.Value {
		case ValueLatency:
			latency = append(latency, d.Kind)
			if len(d.Percentiles) == 0 {
				t.Errorf("latency kind %s feeds no rule metric (Percentiles)", d.Kind)
			}
			for j, p := range d.Percentiles {
				if p <= 0 || p >= 100 || (j > 0 && p <= d.Percentiles[j-1]) {
					t.Errorf("%s: percentiles %v: want ascending, within (0, 100)", d.Kind, d.Percentiles)
				}
			}
		case ValueCount:
			if len(d.Percentiles) != 0 {
				t.Errorf("count kind %s has percentiles", d.Kind)
			}
		case ValueIgnored:
			ignored = append(ignored, d.Kind)
		default:
			t.Errorf("%s: value %d is none of ValueCount, ValueLatency, ValueIgnored", d.Kind, d.Value)
		}
	}
	if len(MetricKinds) != NumMetricKinds || NumMetricKinds != len(seen) {
		t.Errorf("MetricKinds %v, NumMetricKinds %d", MetricKinds, NumMetricKinds)
	}
	// A bucket has one sketch, turn_latency's: a second latency kind needs
	// a sketch of its own in shared/metrics/buckets and its bins in shared/store/dynamo.
	if !slices.Equal(latency, []MetricKind{KindTurnLatency}) {
		t.Errorf("latency kinds %v: shared/metrics/buckets keeps one sketch, turn_latency's", latency)
	}
	// Activity counts every event (shared/metrics/buckets).
	if !slices.Equal(ignored, []MetricKind{KindActivity}) {
		t.Errorf("kinds with ignored values %v, want [activity]", ignored)
	}
	if _, ok := MetricKind("cpu").Index(); ok || MetricKind("cpu").Value() != 0 {
		t.Error(`"cpu" is a kind`)
	}
	names := map[Metric]bool{}
	for _, m := range Metrics {
		if names[m] {
			t.Errorf("rule metric %s defined twice", m)
		}
		names[m] = true
	}
}
