package telemetry_test

import (
	"slices"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
)

// TestCatalogKeepsTheFormatsLimits: every metric can be written as EMF
// (a unit from CloudWatch's list, sets made of its own dimensions, at most
// MaxDims of them) and one line never needs more than 100 metrics.
func TestCatalogKeepsTheFormatsLimits(t *testing.T) {
	cat := telemetry.Catalog()
	if len(cat) > emf.MaxMetrics {
		t.Errorf("%d metrics: a line could exceed %d", len(cat), emf.MaxMetrics)
	}
	names := map[string]bool{}
	for _, m := range cat {
		if names[m.Name] {
			t.Errorf("%s defined twice", m.Name)
		}
		names[m.Name] = true
		if !emf.Units[string(m.Unit)] {
			t.Errorf("%s: unit %q is not CloudWatch's", m.Name, m.Unit)
		}
		if len(m.Dims) > telemetry.MaxDims || len(m.Sets) == 0 || m.Help == "" {
			t.Errorf("%s: %d dimensions (at most %d), %d sets (at least 1), help %q", m.Name, len(m.Dims), telemetry.MaxDims, len(m.Sets), m.Help)
		}
		for _, set := range m.Sets {
			for _, d := range set {
				if !slices.Contains(m.Dims, d) {
					t.Errorf("%s: set %v names %s, not one of its dimensions %v", m.Name, set, d, m.Dims)
				}
			}
		}
	}
}
