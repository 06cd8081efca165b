// Command evaluator is the rule evaluator's Lambda function. Three event
// sources invoke it (infra/evaluator.go):
//   - the metrics table's stream: the rules of the scopes whose data was
//     stored are evaluated at once (partial batch failures reported);
//   - the one-minute schedule: it repairs pending events and sends one
//     message per rule shard to the shard queue;
//   - the shard queue: each message evaluates one shard's rules, so the
//     shards run in parallel invocations.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/alerts/evalgraph"
	"github.com/voiceops/opsapi/shared/alerts/evaluator"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func main() { lambdamain.Main("evaluator", run) }

func run(ctx context.Context, getenv func(string) string) error {
	env, err := lambdamain.Load[lambdamain.Evaluator]("evaluator", getenv)
	if err != nil {
		return err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return err
	}
	db := dynamodb.NewFromConfig(cfg)
	sqsClient := sqs.NewFromConfig(cfg)
	stores := dynamo.NewStores(db, dynamo.TableNames{Config: env.ConfigTable, Deliveries: env.DeliveriesTable})
	shards := queue.NewSender[json.RawMessage](sqsClient, env.ShardQueue) // the shard messages come encoded
	batch := lambdamain.Metrics()
	e := newEvaluator(backend{Stores: stores, Metrics: metricstore.New(db, env.MetricsTable), Rollups: metricstore.NewRollups(db, env.MetricsTable), Queue: queue.NewSQS(sqsClient, env.DeliveryQueue),
		Log: lambdamain.Logger(), Telemetry: batch,
		SendShard: func(ctx context.Context, body string) error { return shards.Send(ctx, json.RawMessage(body), 0) },
	}, time.Now)
	lambda.StartWithOptions(emf.Flushing(batch, handler(e)), lambda.WithContext(ctx))
	return nil
}

// backend is what the evaluator works on: the stores, the metric store,
// the delivery queue, and the sender of shard messages.
type backend struct {
	Stores  voiceops.Stores
	Metrics buckets.Store
	// Rollups keeps the metric series' hourly roll-ups, written after
	// each shard's scheduled evaluation; nil writes none.
	Rollups series.HourStore
	Queue   queue.Queue
	Log     *slog.Logger
	// Telemetry receives the evaluation metrics (lambdamain.Metrics).
	Telemetry telemetry.Recorder
	SendShard func(ctx context.Context, body string) error
}

// evaluatorFn is the evaluator with what the handler needs beside it.
type evaluatorFn struct {
	*evaluator.Evaluator
	sendShard func(ctx context.Context, body string) error
}

func newEvaluator(b backend, now func() time.Time) evaluatorFn {
	e := evalgraph.New(evalgraph.Deps{Stores: b.Stores, Metrics: b.Metrics, Rollups: b.Rollups,
		Fanout: delivery.NewOutbox(b.Stores, b.Queue, now).Fanout, Telemetry: b.Telemetry, Now: now, Log: b.Log})
	return evaluatorFn{e, b.SendShard}
}

// source is enough of any of the three events to tell them apart.
type source struct {
	DetailType string `json:"detail-type"`
	Records    []struct {
		EventSource string `json:"eventSource"`
	} `json:"Records"`
}

// streamBatchDeadline bounds one metrics stream batch: its evaluations
// take well under a second.
const streamBatchDeadline = 10 * time.Second

// handler is the function's Lambda handler: it tells the event source by
// the event's shape and answers what that source expects (a partial batch
// response for the stream and the queue).
func handler(e evaluatorFn) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var src source
		if err := json.Unmarshal(raw, &src); err != nil {
			return nil, fmt.Errorf("evaluator: not an event: %w", err)
		}
		switch {
		case len(src.Records) > 0 && src.Records[0].EventSource == "aws:dynamodb":
			var ev events.DynamoDBEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, fmt.Errorf("evaluator: stream batch: %w", err)
			}
			// A batch that hangs would hold its lane of the shard for the
			// function's whole timeout (55 s, the scheduled run's): it
			// fails in streamBatchDeadline, is retried and halved, and
			// its poison record reaches the failure queue within
			// infra's stream retries (infra/evaluator.go).
			ctx, cancel := context.WithTimeout(ctx, streamBatchDeadline)
			defer cancel()
			resp, st, err := e.HandleStream(ctx, ev, dynamo.MetricScope)
			logStats(ctx, e.Log, "stream batch", st, "records", len(ev.Records), "failed_records", len(resp.BatchItemFailures))
			return resp, err
		case len(src.Records) > 0 && src.Records[0].EventSource == "aws:sqs":
			var ev events.SQSEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, fmt.Errorf("evaluator: shard batch: %w", err)
			}
			resp, st, err := e.HandleShards(ctx, ev)
			logStats(ctx, e.Log, "shard batch", st, "messages", len(ev.Records), "failed_messages", len(resp.BatchItemFailures))
			return resp, err
		case src.DetailType != "":
			// A failed run returns its error (the schedule has no
			// retries; the next minute's run repairs what this one left).
			st, err := e.Schedule(ctx, e.sendShard)
			logStats(ctx, e.Log, "scheduled run", st)
			return st, err
		}
		return nil, errors.New("evaluator: unknown event source")
	}
}

func logStats(ctx context.Context, log *slog.Logger, msg string, st evaluator.Stats, extra ...any) {
	log.InfoContext(ctx, msg, append(extra, "rules", st.Rules, "scopes", st.Scopes, "metric_reads", st.MetricReads,
		"written", st.Written, "unchanged", st.Unchanged, "marks", st.Marks, "conflicts", st.Conflicts, "events", st.Events,
		"repaired", st.Repaired, "errors", st.Errors, "fanout_failures", st.FanoutFailures, "failed_scopes", len(st.FailedScopes))...)
}
