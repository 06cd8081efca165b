package evaluator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/platform/telemetry/prom"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestStreamBatchMetrics: a stream batch whose oldest record was stored
// 3 s ago records the scopes, rules and transitions it evaluated, and a
// lag of 3 s, under Source stream.
func TestStreamBatchMetrics(t *testing.T) {
	f := newFixture(t)
	f.rule("acct_a", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	f.record("acct_a", "p1", metrics.APIErrors, 2, time.Second)
	reg := prom.New()
	e := f.evaluator()
	e.Telemetry = reg
	record := func(ago time.Duration) events.DynamoDBEventRecord {
		return events.DynamoDBEventRecord{EventName: "INSERT", Change: events.DynamoDBStreamRecord{
			SequenceNumber:              ago.String(),
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: f.now.Add(-ago)},
			Keys:                        map[string]events.DynamoDBAttributeValue{tables.Metrics.PartitionKey: events.NewStringAttribute("scope")},
		}}
	}
	scopeOf := func(string) (string, string, bool) { return "acct_a", "p1", true }
	if _, _, err := e.HandleStream(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{record(time.Second), record(3 * time.Second)}}, scopeOf); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := reg.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`voiceops_scopes_evaluated_total{source="stream"} 1`,
		`voiceops_rules_evaluated_total{source="stream"} 1`,
		`voiceops_transitions_total{source="stream"} 1`,
		`voiceops_evaluation_lag_milliseconds_sum{source="stream"} 3000`,
	} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("metrics lack %s:\n%s", want, out.String())
		}
	}
}
