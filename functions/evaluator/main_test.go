package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/buckets"
	"github.com/voiceops/opsapi/shared/memory"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/queue"
	"github.com/voiceops/opsapi/shared/testsupport/samples"
	"github.com/voiceops/opsapi/shared/voiceops"
)

type recordingQueue struct{ msgs []queue.Message }

func (q *recordingQueue) Send(_ context.Context, m queue.Message, _ time.Duration) error {
	q.msgs = append(q.msgs, m)
	return nil
}

// TestReplayScheduledEvent runs the real handler on events/evaluator-scheduled.json:
// the sample rule (p95 > 1500 ms over 5 min) fires on slow turns and its
// event is queued for the sample endpoint.
func TestReplayScheduledEvent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(samples.Dir(), "evaluator-scheduled.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.EventBridgeEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now().UTC()
	stores := memory.New().Stores()
	if err := samples.Seed(ctx, stores, now); err != nil {
		t.Fatal(err)
	}
	m := memory.NewMetrics()
	rec := buckets.Recorder{Store: m}
	for i := 0; i < 20; i++ {
		if err := rec.Record(ctx, metrics.Event{AccountID: samples.AccountID, ProjectID: samples.ProjectID, Kind: metrics.TurnLatency, Value: 2500, At: now.Add(-2 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	q := &recordingQueue{}
	h := handler(newEvaluator(backend{Stores: stores, Metrics: m, Queue: q, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, func() time.Time { return now }))
	st, err := h(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rules != 1 || st.Events != 1 {
		t.Errorf("stats %+v, want 1 rule and 1 event", st)
	}
	r, err := stores.Rules.GetRule(ctx, samples.AccountID, samples.RuleID)
	if err != nil || r.State != voiceops.StateAlert {
		t.Errorf("sample rule: %+v %v", r.State, err)
	}
	if len(q.msgs) != 1 || q.msgs[0].EndpointID != samples.EndpointID {
		t.Errorf("queued %+v", q.msgs)
	}
}
