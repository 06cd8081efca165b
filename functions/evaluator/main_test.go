package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/alerts/evaluator"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/testsupport/samples"
	"github.com/voiceops/opsapi/shared/voiceops"
)

type recordingQueue struct {
	msgs []queue.Message
	deny error // every Send fails with it (sqs:SendMessage denied)
}

func (q *recordingQueue) Send(_ context.Context, m queue.Message, _ time.Duration) error {
	if q.deny != nil {
		return q.deny
	}
	q.msgs = append(q.msgs, m)
	return nil
}

// world is the sample account with slow turns (the sample rule, p95 >
// 1500 ms over 5 min, breaches), and the handler over it.
type world struct {
	stores voiceops.Stores
	queue  *recordingQueue
	shards []string
	h      func(context.Context, json.RawMessage) (any, error)
}

func newWorld(t *testing.T, failMetrics bool) *world {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	w := &world{stores: memory.New().Stores(), queue: &recordingQueue{}}
	if err := samples.Seed(ctx, w.stores, now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	m := memory.NewMetrics()
	rec := buckets.Recorder{Store: m}
	for range 20 {
		if err := rec.Record(ctx, metrics.Event{AccountID: samples.AccountID, ProjectID: samples.ProjectID, Kind: metrics.TurnLatency, Value: 2500, At: now.Add(-2 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	var store buckets.Store = m
	if failMetrics {
		store = failingMetrics{m}
	}
	w.h = handler(newEvaluator(backend{Stores: w.stores, Metrics: store, Queue: w.queue, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		SendShard: func(_ context.Context, body string) error {
			w.shards = append(w.shards, body)
			return nil
		}}, func() time.Time { return now }))
	return w
}

type failingMetrics struct{ buckets.Store }

func (failingMetrics) ReadBuckets(context.Context, metrics.Scope, time.Time, time.Time) ([]buckets.Bucket, error) {
	return nil, errors.New("throttled")
}

func replay(t *testing.T, w *world, name string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samples.Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.h(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (w *world) ruleState(t *testing.T) voiceops.State {
	t.Helper()
	r, err := w.stores.Rules.GetRule(context.Background(), samples.AccountID, samples.RuleID)
	if err != nil {
		t.Fatal(err)
	}
	return r.State
}

// TestReplayScheduledEvent: the schedule sends one message per rule shard
// (the fan-out) and evaluates nothing itself.
func TestReplayScheduledEvent(t *testing.T) {
	w := newWorld(t, false)
	replay(t, w, "evaluator-scheduled.json")
	if len(w.shards) != voiceops.RuleShards {
		t.Fatalf("%d shard messages, want %d", len(w.shards), voiceops.RuleShards)
	}
	seen := map[int]bool{}
	for _, body := range w.shards {
		var m evaluator.ShardMessage
		if err := json.Unmarshal([]byte(body), &m); err != nil || m.ScheduledAt.IsZero() {
			t.Fatalf("shard message %s: %v", body, err)
		}
		seen[m.Shard] = true
	}
	if len(seen) != voiceops.RuleShards {
		t.Errorf("shards %v, want each once", seen)
	}
	if got := w.ruleState(t); got != voiceops.StateOK {
		t.Errorf("the schedule itself evaluated: %s", got)
	}
}

// TestReplayShardMessage: the message of the sample account's shard
// evaluates its rule, which fires, and its event is queued.
func TestReplayShardMessage(t *testing.T) {
	w := newWorld(t, false)
	resp := replay(t, w, "evaluator-shard.json").(events.SQSEventResponse)
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("failures %+v", resp.BatchItemFailures)
	}
	if got := w.ruleState(t); got != voiceops.StateAlert {
		t.Errorf("sample rule %s, want alert", got)
	}
	if len(w.queue.msgs) != 1 || w.queue.msgs[0].EndpointID != samples.EndpointID {
		t.Errorf("queued %+v", w.queue.msgs)
	}
}

// TestReplayStreamBatch: the batch's MODIFY of the sample project's
// metrics (a write adding into a shard of its minute) evaluates its rule
// at once; the TTL deletion is skipped; the record that names no scope is
// reported, alone.
func TestReplayStreamBatch(t *testing.T) {
	w := newWorld(t, false)
	resp := replay(t, w, "evaluator-stream.json").(events.DynamoDBEventResponse)
	if got := w.ruleState(t); got != voiceops.StateAlert {
		t.Errorf("sample rule %s, want alert", got)
	}
	if len(w.queue.msgs) != 1 {
		t.Errorf("queued %d deliveries, want 1", len(w.queue.msgs))
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	if !slices.Equal(failed, []string{"111100000000000000000004"}) {
		t.Errorf("failures %v, want only the poison record", failed)
	}
}

// TestStreamBatchFailureReportsTheScopesRecords: with the metric store
// failing, the records of the scope with rules are reported for a retry
// (and the rule becomes unknown, as a failed evaluation does).
func TestStreamBatchFailureReportsTheScopesRecords(t *testing.T) {
	w := newWorld(t, true)
	resp := replay(t, w, "evaluator-stream.json").(events.DynamoDBEventResponse)
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	slices.Sort(failed)
	// The project scope (its rule) and the poison record; the account
	// scope has no rule, so nothing of it failed.
	if !slices.Equal(failed, []string{"111100000000000000000001", "111100000000000000000004"}) {
		t.Errorf("failures %v", failed)
	}
	if got := w.ruleState(t); got != voiceops.StateUnknown {
		t.Errorf("sample rule %s, want unknown", got)
	}
}

// TestAFanoutThatFailsIsTheInvocationsError: with the delivery queue
// refusing every send, the stream batch and the shard message that fire
// the sample rule return an error from the handler (Lambda's Errors
// counts it), and the event stays pending for the repair.
func TestAFanoutThatFailsIsTheInvocationsError(t *testing.T) {
	for _, sample := range []string{"evaluator-stream.json", "evaluator-shard.json"} {
		t.Run(sample, func(t *testing.T) {
			w := newWorld(t, false)
			w.queue.deny = errors.New("AccessDenied: sqs:SendMessage")
			b, err := os.ReadFile(filepath.Join(samples.Dir(), sample))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.h(context.Background(), b); err == nil {
				t.Error("no error from an invocation whose fan-out failed")
			}
			if got := w.ruleState(t); got != voiceops.StateAlert {
				t.Errorf("sample rule %s, want alert", got)
			}
			pending, err := w.stores.Events.PendingEvents(context.Background(), time.Now().Add(time.Hour), 10)
			if err != nil || len(pending) != 1 {
				t.Errorf("pending events %v %v, want the rule's one", pending, err)
			}
		})
	}
}

func TestUnknownEvent(t *testing.T) {
	w := newWorld(t, false)
	if _, err := w.h(context.Background(), json.RawMessage(`{"hello":1}`)); err == nil {
		t.Error("an unknown event was accepted")
	}
}
