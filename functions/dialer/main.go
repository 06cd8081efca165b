// Command dialer is the Lambda function that drains the outbound queue:
// each record is a dial job (shared/calls/dialer), placed through Twilio at the
// account's pace, or a placed call's timeout check. It links the Twilio
// API client, and neither the conversation engine nor libphonenumber.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/dialer"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo"
)

func main() { lambdamain.Main("dialer", run) }

func run(ctx context.Context, getenv func(string) string) error {
	env, err := lambdamain.Load[lambdamain.Dialer]("dialer", getenv)
	if err != nil {
		return err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return err
	}
	db := dynamodb.NewFromConfig(cfg)
	batch := lambdamain.Metrics()
	d := &dialer.Dialer{
		Calls: calls.New(dynamo.NewCalls(db, env.CallsTable), time.Now), Pacer: dynamo.NewPacer(db, env.CallsTable),
		Queue: &dialer.SQSQueue{Client: sqs.NewFromConfig(cfg), URL: env.OutboundQueue},
		Provider: &twilio.Provider{
			Creds:      &twilio.SecretCredentials{Client: secretsmanager.NewFromConfig(cfg), SecretID: env.TwilioSecret, Now: time.Now},
			APIBaseURL: env.TwilioAPI, CallbackBaseURL: env.PublicBaseURL,
		},
		Now: time.Now, Sleep: dialer.SleepContext, Log: lambdamain.Logger(),
		Telemetry: batch,
	}
	lambda.StartWithOptions(emf.Flushing(batch, handler(d)), lambda.WithContext(ctx))
	return nil
}

// handler is the function's Lambda handler; the tests replay events/
// through it.
func handler(d *dialer.Dialer) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return d.HandleSQS
}
