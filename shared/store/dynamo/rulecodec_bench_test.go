package dynamo

import (
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// BenchmarkRuleCodec encodes and decodes one rule with every field set:
// the evaluator decodes every enabled rule of its shard each minute
// (ListEnabledRules), and every rule write encodes one.
func BenchmarkRuleCodec(b *testing.B) {
	at := time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)
	pid, v := "proj_a", int64(9)
	r := voiceops.AlertRule{ID: "ar_1", AccountID: "acct_a", Name: "errors", ProjectID: &pid, Metric: voiceops.MetricAPIErrors,
		Operator: voiceops.OpGreater, Threshold: 5, Window: voiceops.Window5m, Enabled: true, State: voiceops.StateAlert,
		CreatedAt: at, UpdatedAt: at, Since: &at, LastEvaluatedAt: &at, CurrentValue: &v, Sequence: 3, Version: 4}
	for b.Loop() {
		if _, err := DecodeRule(encodeRule(r)); err != nil {
			b.Fatal(err)
		}
	}
}
