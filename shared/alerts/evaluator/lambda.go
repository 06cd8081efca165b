package evaluator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The deployed evaluator is one Lambda function with three event sources
// (infra/evaluator.go): the metrics table's stream (HandleStream), the
// one-minute schedule (Schedule), and the shard queue the schedule fills
// (HandleShards).

// MetricScope returns the scope of a metrics-table partition key; ok is
// false for a key of another shape. It is shared/store/dynamo's MetricScope,
// passed in so that this package links no AWS SDK.
type MetricScope func(pk string) (accountID, projectID string, ok bool)

// HandleStream evaluates the scopes of the items a batch of the metrics
// table's stream inserted or changed, each scope once however many of its records
// the batch holds (with no batching window, a batch is what one of
// Lambda's polls found: at most about four evaluations per scope per
// second). Records of scopes whose
// evaluation failed, and records that name no scope, are reported as
// failures: Lambda retries from the earliest, bisecting the batch, and a
// record that keeps failing goes to the failure destination, never
// blocking its shard. TTL deletions are skipped.
func (e *Evaluator) HandleStream(ctx context.Context, ev events.DynamoDBEvent, scopeOf MetricScope) (events.DynamoDBEventResponse, Stats, error) {
	var resp events.DynamoDBEventResponse
	bySeq := map[metrics.Scope][]string{}
	var scopes []metrics.Scope
	var oldest time.Time // the oldest record's storing: the lag starts there
	for _, r := range ev.Records {
		// New items and changed ones: a metric write adds into an item of
		// its minute (shared/store/dynamo/metriclayout.go). TTL deletions change
		// nothing to evaluate.
		if r.EventName == string(events.DynamoDBOperationTypeRemove) {
			continue
		}
		seq := r.Change.SequenceNumber
		if at := r.Change.ApproximateCreationDateTime.Time; !at.IsZero() && (oldest.IsZero() || at.Before(oldest)) {
			oldest = at
		}
		pk, ok := r.Change.Keys[tables.Metrics.PartitionKey]
		var a, p string
		if ok && pk.DataType() == events.DataTypeString {
			a, p, ok = scopeOf(pk.String())
		} else {
			ok = false
		}
		if !ok {
			e.Log.ErrorContext(ctx, "a stream record names no metric scope", "event_id", r.EventID, "sequence_number", seq)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: seq})
			continue
		}
		s := metrics.Scope{AccountID: a, ProjectID: p}
		if _, seen := bySeq[s]; !seen {
			scopes = append(scopes, s)
		}
		bySeq[s] = append(bySeq[s], seq)
	}
	if len(scopes) == 0 {
		return resp, Stats{}, nil
	}
	st, err := e.EvaluateScopes(ctx, scopes)
	e.Observe(SourceStream, st, e.Now().Sub(oldest), !oldest.IsZero())
	if err == nil {
		// Its events are pending, for the repair run; the retried batch
		// finds their rules unchanged and writes nothing again.
		err = fanoutError(st)
	}
	if err != nil {
		return resp, st, err // the whole batch is retried
	}
	for _, s := range st.FailedScopes {
		for _, seq := range bySeq[s] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: seq})
		}
		delete(bySeq, s) // a scope may fail twice (read, then write)
	}
	return resp, st, nil
}

// ShardMessage is the body of the message the schedule sends for each
// rule shard.
type ShardMessage struct {
	Shard       int       `json:"shard"`
	ScheduledAt time.Time `json:"scheduled_at"`
}

// Schedule is the one-minute run: it repairs pending events, then sends
// one ShardMessage per rule shard, so that the shards are evaluated in
// parallel by separate invocations (HandleShards). A failed repair does
// not hold the shards back; either failure is the run's error. It records
// its own duration (telemetry.ScheduledRunDuration): the function's
// Duration mixes it with the stream's and the shards' invocations.
func (e *Evaluator) Schedule(ctx context.Context, send func(ctx context.Context, body string) error) (Stats, error) {
	start := e.Now()
	defer func() {
		telemetry.Or(e.Telemetry).Record(telemetry.ScheduledRunDuration, float64(max(e.Now().Sub(start), 0).Milliseconds()))
	}()
	st, repairErr := e.Repair(ctx)
	now := e.Now().UTC()
	errs := []error{repairErr}
	for shard := range voiceops.RuleShards {
		b, _ := json.Marshal(ShardMessage{Shard: shard, ScheduledAt: now}) // plain struct: cannot fail
		if err := send(ctx, string(b)); err != nil {
			errs = append(errs, fmt.Errorf("shard %d: %w", shard, err))
		}
	}
	return st, errors.Join(errs...)
}

// HandleShards evaluates the shards named by a batch of the shard queue;
// a shard whose evaluation failed is reported, so SQS delivers its
// message again (and after a few failures moves it to the dead-letter
// queue, whose alarm tells). When every message of the batch failed, the
// error is returned too: a partial batch response alone is a successful
// invocation, which the function's Errors metric (and alarm) would never
// count. The queue's batches hold one message, so every failed shard is
// an error; retrying a whole failed batch is what the response asks anyway.
func (e *Evaluator) HandleShards(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, Stats, error) {
	var resp events.SQSEventResponse
	var total Stats
	var errs []error
	for _, m := range ev.Records {
		var sm ShardMessage
		err := json.Unmarshal([]byte(m.Body), &sm)
		if err == nil {
			var st Stats
			st, err = e.RunShard(ctx, sm.Shard)
			e.Observe(SourceSchedule, st, e.Now().Sub(sm.ScheduledAt), !sm.ScheduledAt.IsZero())
			total.Rules += st.Rules
			total.Scopes += st.Scopes
			total.add(st)
			if err == nil && len(st.FailedScopes) > 0 {
				err = fmt.Errorf("%d scopes failed", len(st.FailedScopes))
			}
			if err == nil {
				err = fanoutError(st)
			}
		}
		if err != nil {
			e.Log.ErrorContext(ctx, "evaluating a shard", "message_id", m.MessageId, "error", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			errs = append(errs, fmt.Errorf("message %s: %w", m.MessageId, err))
		}
	}
	if len(ev.Records) > 0 && len(errs) == len(ev.Records) {
		return resp, total, fmt.Errorf("evaluator: every shard of the batch failed: %w", errors.Join(errs...))
	}
	return resp, total, nil
}
