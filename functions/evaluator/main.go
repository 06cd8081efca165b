// Command evaluator is the Lambda function the schedule runs every minute:
// it evaluates every enabled alert rule, writes their states with the events
// their transitions send, and fans the events out to the delivery queue.
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/buckets"
	"github.com/voiceops/opsapi/shared/delivery"
	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/evaluator"
	"github.com/voiceops/opsapi/shared/lambdamain"
	"github.com/voiceops/opsapi/shared/queue"
	"github.com/voiceops/opsapi/shared/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func main() {
	if err := run(context.Background(), os.Getenv); err != nil {
		slog.Error("evaluator: cannot start", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string) error {
	env, err := lambdamain.Require(getenv, tables.Config.EnvVar, tables.Metrics.EnvVar, tables.Deliveries.EnvVar, lambdamain.QueueEnv)
	if err != nil {
		return err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return err
	}
	db := dynamodb.NewFromConfig(cfg)
	stores := dynamo.NewStores(db, dynamo.TableNames{Config: env[0], Deliveries: env[2]})
	e := newEvaluator(backend{Stores: stores, Metrics: metricstore.New(db, env[1]), Queue: queue.NewSQS(sqs.NewFromConfig(cfg), env[3]),
		Log: lambdamain.Logger()}, time.Now)
	lambda.StartWithOptions(handler(e), lambda.WithContext(ctx))
	return nil
}

// backend is what the evaluator works on: the stores, the metric store and
// the delivery queue.
type backend struct {
	Stores  voiceops.Stores
	Metrics buckets.Store
	Queue   queue.Queue
	Log     *slog.Logger
}

func newEvaluator(b backend, now func() time.Time) *evaluator.Evaluator {
	outbox := delivery.NewOutbox(b.Stores, b.Queue, now)
	return &evaluator.Evaluator{
		Rules: b.Stores.Rules, Events: b.Stores.Events, Metrics: b.Metrics,
		Fanout: outbox.Fanout, Now: now, Log: b.Log,
	}
}

// handler is the function's Lambda handler: one run per scheduled event.
// A failed run returns its error (the schedule has no retries; the next
// minute's run repairs whatever this one left pending).
func handler(e *evaluator.Evaluator) func(context.Context, events.EventBridgeEvent) (evaluator.Stats, error) {
	return func(ctx context.Context, ev events.EventBridgeEvent) (evaluator.Stats, error) {
		st, err := e.Run(ctx)
		e.Log.InfoContext(ctx, "evaluation run", "event_id", ev.ID, "rules", st.Rules, "scopes", st.Scopes,
			"metric_reads", st.MetricReads, "written", st.Written, "conflicts", st.Conflicts, "events", st.Events,
			"repaired", st.Repaired, "errors", st.Errors)
		return st, err
	}
}
