// Command dialer is the Lambda function that drains the outbound queue:
// each record is a dial job (shared/dialer), placed through Twilio at the
// account's pace, or a placed call's timeout check. It links the Twilio
// API client, and neither the conversation engine nor libphonenumber.
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/dialer"
	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/lambdamain"
	"github.com/voiceops/opsapi/shared/tables"
	"github.com/voiceops/opsapi/shared/telemetry/emf"
	"github.com/voiceops/opsapi/shared/telephony/twilio"
)

func main() {
	if err := run(context.Background(), os.Getenv); err != nil {
		slog.Error("dialer: cannot start", "error", err)
		os.Exit(1)
	}
}

// TwilioAPIEnv, when set, replaces Twilio's API base URL (a test double).
const TwilioAPIEnv = "TWILIO_API_BASE_URL"

func run(ctx context.Context, getenv func(string) string) error {
	env, err := lambdamain.Require(getenv, tables.Calls.EnvVar, lambdamain.OutboundQueueEnv, lambdamain.TwilioSecretEnv, lambdamain.PublicBaseURLEnv)
	if err != nil {
		return err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return err
	}
	db := dynamodb.NewFromConfig(cfg)
	calls := dynamo.NewCalls(db, env[0])
	batch := lambdamain.Metrics()
	d := &dialer.Dialer{
		Calls: calls, Pacer: dynamo.NewPacer(db, env[0]),
		Queue: &dialer.SQSQueue{Client: sqs.NewFromConfig(cfg), URL: env[1]},
		Provider: &twilio.Provider{
			Creds:      &twilio.SecretCredentials{Client: secretsmanager.NewFromConfig(cfg), SecretID: env[2], Now: time.Now},
			APIBaseURL: getenv(TwilioAPIEnv), CallbackBaseURL: env[3],
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
