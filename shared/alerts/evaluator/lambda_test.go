package evaluator

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// failingShard is a rule store whose listing of one shard fails.
type failingShard struct {
	voiceops.RuleStore
	shard int
}

func (f failingShard) ListEnabledRules(ctx context.Context, shard int) ([]voiceops.AlertRule, error) {
	if shard == f.shard {
		return nil, errors.New("store down")
	}
	return f.RuleStore.ListEnabledRules(ctx, shard)
}

func shardEvent(t *testing.T, bodies map[string]string) events.SQSEvent {
	t.Helper()
	var ev events.SQSEvent
	for _, id := range slices.Sorted(maps.Keys(bodies)) {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: id, Body: bodies[id], EventSource: "aws:sqs"})
	}
	return ev
}

func shardBody(t *testing.T, shard int) string {
	t.Helper()
	b, err := json.Marshal(ShardMessage{Shard: shard})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHandleShardsReportsAFailedShard: a shard whose evaluation failed (and
// a message that names no shard) is reported by its message ID, so SQS
// delivers it again and finally moves it to the dead-letter queue; a batch
// that failed whole also returns the error, so the invocation counts in
// the function's Errors metric and its alarm (the queue's batches are of
// one message, so every failed shard does).
func TestHandleShardsReportsAFailedShard(t *testing.T) {
	f := newFixture(t)
	e := f.evaluator()
	e.Rules = failingShard{RuleStore: e.Rules, shard: 3}
	ctx := context.Background()

	resp, _, err := e.HandleShards(ctx, shardEvent(t, map[string]string{"m1": shardBody(t, 3)}))
	if err == nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
		t.Errorf("failed shard alone: response %+v, error %v; want m1 reported and an error", resp, err)
	}

	resp, _, err = e.HandleShards(ctx, shardEvent(t, map[string]string{
		"ok": shardBody(t, 2), "bad": shardBody(t, 3), "garbled": "{", "nowhere": shardBody(t, voiceops.RuleShards),
	}))
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	slices.Sort(failed)
	if err != nil || !slices.Equal(failed, []string{"bad", "garbled", "nowhere"}) {
		t.Errorf("mixed batch: failed %v, error %v; want bad, garbled and nowhere reported, no error", failed, err)
	}

	resp, _, err = e.HandleShards(ctx, shardEvent(t, map[string]string{"ok": shardBody(t, 2)}))
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Errorf("good shard: %+v %v", resp, err)
	}
}
