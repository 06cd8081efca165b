// Command dispatcher is the Lambda function that drains the webhook delivery
// queue: each SQS record asks for one delivery attempt, which it signs,
// sends and records, queueing the next attempt when the schedule says so.
package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo"
)

func main() { lambdamain.Main("dispatcher", run) }

func run(ctx context.Context, getenv func(string) string) error {
	env, err := lambdamain.Load[lambdamain.Dispatcher]("dispatcher", getenv)
	if err != nil {
		return err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return err
	}
	log := lambdamain.Logger()
	var schedule webhook.Schedule                               // nil: webhook.DefaultSchedule
	if v := getenv(lambdamain.LocalRetryScheduleEnv); v != "" { // the local stack runner only
		if schedule, err = webhook.ParseSchedule(v); err != nil {
			return fmt.Errorf("%s: %w", lambdamain.LocalRetryScheduleEnv, err)
		}
	}
	batch := lambdamain.Metrics()
	d := delivery.NewDispatcher(delivery.Config{
		Schedule: schedule,
		Stores:   dynamo.NewStores(dynamodb.NewFromConfig(cfg), dynamo.TableNames{Config: env.ConfigTable, Deliveries: env.DeliveriesTable}),
		Queue:    queue.NewSQS(sqs.NewFromConfig(cfg), env.DeliveryQueue),
		Sender:   sender(getenv),
		Logger:   log, Telemetry: batch, Tracer: lambdamain.Tracer(getenv),
		ConsoleURL: env.ConsoleURL,
	})
	lambda.StartWithOptions(emf.Flushing(batch, handler(d)), lambda.WithContext(ctx))
	return nil
}

// sender is the dispatcher's Sender, for every endpoint kind. Deployed
// stacks never deliver to loopback or private addresses; the local stack
// runner's -allow-loopback-webhooks (lambdamain.LocalLoopbackEnv, never in
// the template) lets it reach loopback stand-ins.
func sender(getenv func(string) string) *webhook.Sender {
	return webhook.NewSender(webhook.Options{AllowLoopback: lambdamain.AllowLoopback(getenv)})
}

// handler is the function's Lambda handler; the tests replay events/
// through it.
func handler(d *delivery.Dispatcher) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return d.HandleSQS
}
