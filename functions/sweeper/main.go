// Command sweeper is the Lambda function the schedule runs every minute
// beside the evaluator (a second target of the same rule): it ends the
// conversations idle past their due (shared/conversations/conversation.Engine.SweepIdle)
// over the conversations table's sparse index of open conversations. It
// runs the ended conversations' on_end functions, so it links the engine
// and the project function runner, like chat.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/conversations/hooks/lambdainvoke"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
)

func main() { lambdamain.Main("sweeper", run) }

func run(ctx context.Context, getenv func(string) string) error {
	env, err := lambdamain.Load[lambdamain.Sweeper]("sweeper", getenv)
	if err != nil {
		return err
	}
	idle, err := lambdamain.LocalChatIdleTimeout(getenv)
	if err != nil {
		return err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return err
	}
	db := dynamodb.NewFromConfig(cfg)
	config := dynamo.NewConfig(db, env.ConfigTable, "")
	batch := lambdamain.Metrics()
	lambda.StartWithOptions(emf.Flushing(batch, handler(convgraph.New(convgraph.Deps{
		ChatIdleTimeout: idle,
		Conversations:   dynamo.NewConversations(db, env.ConversationsTable), Configs: config.AgentConfigs(),
		Metrics: metricstore.New(db, env.MetricsTable), Lambda: lambdainvoke.New(cfg, lambdamain.Tracer(getenv)),
		Now: time.Now, Log: lambdamain.Logger(), Telemetry: batch,
		AllowLoopback: lambdamain.AllowLoopback(getenv), // the local stack runner's project functions only
	}))), lambda.WithContext(ctx))
	return nil
}

// Result is what a run reports (the Lambda's answer, and its log line).
type Result struct {
	Ended int `json:"ended"`
}

// handler is the function's Lambda handler: one sweep per scheduled event.
// A failed run returns its error; the schedule does not retry, and the
// next minute's run finds what this one left.
func handler(e *conversation.Engine) func(context.Context, events.EventBridgeEvent) (Result, error) {
	return func(ctx context.Context, ev events.EventBridgeEvent) (Result, error) {
		n, err := e.SweepIdle(ctx)
		e.Log.InfoContext(ctx, "idle sweep", "event_id", ev.ID, "ended", n, "error", err)
		return Result{Ended: n}, err
	}
}
