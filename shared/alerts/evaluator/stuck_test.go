package evaluator

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// observations is a telemetry.Recorder that keeps every observation.
type observations struct {
	mu  sync.Mutex
	obs []observation
}

type observation struct {
	name  string
	value float64
	dims  []string
}

var _ telemetry.Recorder = (*observations)(nil)

func (o *observations) Record(m telemetry.Metric, v float64, dims ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.obs = append(o.obs, observation{m.Name, v, slices.Clone(dims)})
}

// values are the observed values of m with the given dimension values.
func (o *observations) values(m telemetry.Metric, dims ...string) []float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []float64
	for _, ob := range o.obs {
		if ob.name == m.Name && slices.Equal(ob.dims, dims) {
			out = append(out, ob.value)
		}
	}
	return out
}

var errSendDenied = errors.New("sqs:SendMessage denied")

// TestAStuckFanoutIsAnErrorAndItsAgeIsMeasured: with the fan-out failing
// (the evaluator may not send to the delivery queue), the stream batch
// that wrote the event, the scheduled run whose repair cannot send it and
// a shard run that writes one each return an error, so that the
// function's Errors metric counts them; the repair records the age of
// the event it leaves pending, and still fans the shards out. Once the
// fan-out works, the repair sends the event and records an age of 0.
func TestAStuckFanoutIsAnErrorAndItsAgeIsMeasured(t *testing.T) {
	f := newFixture(t)
	r := f.rule("acct_a", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	f.record("acct_a", "p1", metrics.APIErrors, 2, time.Second)
	rec := &observations{}
	e := f.evaluator()
	e.Telemetry = rec
	fanout := e.Fanout
	denied := true
	e.Fanout = func(ctx context.Context, ev voiceops.AlertEvent) error {
		if denied {
			return errSendDenied
		}
		return fanout(ctx, ev)
	}
	ctx := context.Background()

	batch := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{EventName: "INSERT", Change: events.DynamoDBStreamRecord{
		SequenceNumber: "1", Keys: map[string]events.DynamoDBAttributeValue{tables.Metrics.PartitionKey: events.NewStringAttribute("scope")},
	}}}}
	scopeOf := func(string) (string, string, bool) { return "acct_a", "p1", true }
	_, st, err := e.HandleStream(ctx, batch, scopeOf)
	if err == nil || st.FanoutFailures != 1 {
		t.Fatalf("stream batch with a failed fan-out: stats %+v, error %v; want an error", st, err)
	}
	if got := f.get(r); got.State != voiceops.StateAlert {
		t.Fatalf("rule %s, want alert", got.State)
	}
	// The retried batch finds the rule unchanged: it succeeds, the event
	// stays pending.
	if _, st, err := e.HandleStream(ctx, batch, scopeOf); err != nil || st.Events != 0 {
		t.Fatalf("retried batch: stats %+v, error %v", st, err)
	}

	f.now = f.now.Add(90 * time.Second)
	sent := 0
	send := func(context.Context, string) error { sent++; return nil }
	if _, err := e.Schedule(ctx, send); err == nil {
		t.Fatal("scheduled run whose repair failed: no error")
	}
	if sent != voiceops.RuleShards {
		t.Errorf("a failed repair held the shards back: %d of %d sent", sent, voiceops.RuleShards)
	}
	if got := rec.values(telemetry.PendingEventAge, telemetry.SourceRepair); !slices.Equal(got, []float64{90000}) {
		t.Errorf("pending event age recorded by the repair: %v, want [90000]", got)
	}

	denied = false
	f.now = f.now.Add(time.Minute)
	st, err = e.Schedule(ctx, send)
	if err != nil || st.Repaired != 1 || len(f.events) != 1 {
		t.Fatalf("repair once the fan-out works: stats %+v, error %v, fanned out %d", st, err, len(f.events))
	}
	f.now = f.now.Add(time.Minute)
	if _, err := e.Schedule(ctx, send); err != nil {
		t.Fatal(err)
	}
	if got := rec.values(telemetry.PendingEventAge, telemetry.SourceRepair); !slices.Equal(got, []float64{90000, 0, 0}) {
		t.Errorf("pending event ages recorded by the repair: %v, want [90000 0 0] (none left pending once sent)", got)
	}
}

// TestAShardRunWhoseFanoutFailedIsAnError: the shard's message is
// reported and the invocation returns an error.
func TestAShardRunWhoseFanoutFailedIsAnError(t *testing.T) {
	f := newFixture(t)
	r := f.rule("acct_a", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	f.record("acct_a", "p1", metrics.APIErrors, 2, time.Second)
	e := f.evaluator()
	e.Fanout = func(context.Context, voiceops.AlertEvent) error { return errSendDenied }
	resp, st, err := e.HandleShards(context.Background(), shardEvent(t, map[string]string{"m1": shardBody(t, voiceops.RuleShardOf(r.AccountID))}))
	if err == nil || len(resp.BatchItemFailures) != 1 || st.FanoutFailures != 1 {
		t.Errorf("shard run with a failed fan-out: response %+v, stats %+v, error %v; want m1 reported and an error", resp, st, err)
	}
}

// TestOnlyTheScheduledRunRecordsItsDuration: the schedule's run records
// how long it took (its clock advancing while it sends the shards); the
// stream and the shard runs record no such metric.
func TestOnlyTheScheduledRunRecordsItsDuration(t *testing.T) {
	f := newFixture(t)
	f.rule("acct_a", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	rec := &observations{}
	e := f.evaluator()
	e.Telemetry = rec
	ctx := context.Background()
	send := func(context.Context, string) error { f.now = f.now.Add(100 * time.Millisecond); return nil }
	if _, err := e.Schedule(ctx, send); err != nil {
		t.Fatal(err)
	}
	want := float64(voiceops.RuleShards * 100)
	if got := rec.values(telemetry.ScheduledRunDuration); !slices.Equal(got, []float64{want}) {
		t.Errorf("scheduled run duration: %v, want [%v]", got, want)
	}
	if _, _, err := e.HandleShards(ctx, shardEvent(t, map[string]string{"m1": shardBody(t, 0)})); err != nil {
		t.Fatal(err)
	}
	batch := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{EventName: "INSERT", Change: events.DynamoDBStreamRecord{
		SequenceNumber: "1", Keys: map[string]events.DynamoDBAttributeValue{tables.Metrics.PartitionKey: events.NewStringAttribute("scope")},
	}}}}
	if _, _, err := e.HandleStream(ctx, batch, func(string) (string, string, bool) { return "acct_a", "p1", true }); err != nil {
		t.Fatal(err)
	}
	if got := rec.values(telemetry.ScheduledRunDuration); len(got) != 1 {
		t.Errorf("scheduled run duration recorded %d times, want once (the scheduled run alone)", len(got))
	}
}
