package dynamo

import (
	"testing"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestMetricCountAttrs: every kind's count has an attribute of its own,
// none taken by another attribute of the layout, and the kinds stored
// before keep their names (items in the table carry them: a rename would
// read their counts as 0).
func TestMetricCountAttrs(t *testing.T) {
	stored := map[voiceops.MetricKind]string{
		voiceops.KindTurnLatency:    "turns",
		voiceops.KindAPIErrors:      "api_errors",
		voiceops.KindFunctionErrors: "function_errors",
		voiceops.KindCallCrashes:    "call_crashes",
		voiceops.KindCallVolume:     "call_volume",
		voiceops.KindActivity:       "activity",
	}
	for k, attr := range stored {
		if got := MetricCountAttr(k); got != attr {
			t.Errorf("MetricCountAttr(%s) = %q: items store it as %q (read both to rename it)", k, got, attr)
		}
	}
	taken := map[string]string{
		metricAttrPK: "the partition key", metricAttrSK: "the sort key", metricAttrTTL: "the TTL",
		MetricAttrLatency: "the layout before's sketch", MetricAttrVersion: "the version",
		MetricAttrCompacted: "the compaction flag", MetricAttrCoverFrom: "the cover", MetricAttrCoverTo: "the cover",
	}
	for _, k := range voiceops.MetricKinds {
		attr := MetricCountAttr(k)
		if what, ok := taken[attr]; ok {
			t.Errorf("kind %s: its attribute %q is %s", k, attr, what)
		}
		if _, _, ok := MetricBin(attr); ok {
			t.Errorf("kind %s: its attribute %q reads as a sketch bin", k, attr)
		}
		taken[attr] = "kind " + string(k) + "'s count"
	}
}
