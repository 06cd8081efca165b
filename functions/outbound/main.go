// Command outbound is the Lambda function of outbound calling (doc 2):
// trigger (one write and one dial job on the outbound queue, which
// functions/dialer consumes) and status with a project's service key, and
// the internal route another telephony system moves a call's status with. It is the one function
// that parses phone numbers (shared/phone, libphonenumber's metadata): apart
// from the voice intake, so that neither pays for the other's libraries.
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

	"github.com/voiceops/opsapi/shared/auth"
	"github.com/voiceops/opsapi/shared/baseapi"
	"github.com/voiceops/opsapi/shared/dialer"
	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/httpapi"
	"github.com/voiceops/opsapi/shared/internalkey"
	"github.com/voiceops/opsapi/shared/lambdamain"
	"github.com/voiceops/opsapi/shared/phone"
	"github.com/voiceops/opsapi/shared/tables"
	"github.com/voiceops/opsapi/shared/telemetry"
	"github.com/voiceops/opsapi/shared/telemetry/emf"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func main() {
	if err := run(context.Background(), os.Getenv); err != nil {
		slog.Error("outbound: cannot start", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string) error {
	region, err := lambdamain.Region(getenv)
	if err != nil {
		return err
	}
	env, err := lambdamain.Require(getenv, tables.Config.EnvVar, tables.Metrics.EnvVar, tables.Calls.EnvVar, lambdamain.InternalKeyEnv, tables.Requests.EnvVar,
		lambdamain.OutboundQueueEnv)
	if err != nil {
		return err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return err
	}
	// Read on the first internal request: public requests never wait for it.
	internalKey := internalkey.NewLazy(secretsmanager.NewFromConfig(cfg), env[3])
	db := dynamodb.NewFromConfig(cfg)
	config := dynamo.NewConfig(db, env[0], "") // keys only: no deliveries table
	metrics := lambdamain.Metrics()
	lambda.StartWithOptions(emf.Flushing(metrics, handler(deps{
		Keys: auth.New(config, region.Region, time.Now), InternalKey: internalKey.Digest, Calls: dynamo.NewCalls(db, env[2]),
		Dial:       &dialer.SQSQueue{Client: sqs.NewFromConfig(cfg), URL: env[5]},
		CountError: dynamo.NewMetricCounts(db, env[1]).APIError, Now: time.Now, Log: lambdamain.Logger(),
		Guards:  httpapi.NewGuards(dynamo.NewRequests(db, env[4], env[0]), time.Now),
		Metrics: metrics,
	})), lambda.WithContext(ctx))
	return nil
}

// deps is what outbound calling runs on.
type deps struct {
	Keys        httpapi.Authenticator
	InternalKey func(context.Context) (string, error) // the internal key's digest
	Calls       voiceops.CallStore
	Dial        voiceops.DialQueue
	CountError  func(ctx context.Context, accountID, projectID string, at time.Time) error
	Guards      httpapi.Guards
	Now         func() time.Time
	Log         *slog.Logger
	// Metrics receives the request metrics (lambdamain.Metrics).
	Metrics telemetry.Recorder
}

// handler is the function's Lambda handler; the tests replay events/ through it.
func handler(d deps) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpapi.LambdaHandler(httpapi.New(httpapi.Config{Keys: d.Keys, InternalKey: d.InternalKey, CountError: d.CountError, Guards: d.Guards, Now: d.Now, Log: d.Log, Metrics: d.Metrics},
		(&baseapi.Outbound{Calls: d.Calls, Dial: d.Dial, ValidNumber: phone.Valid, Now: d.Now}).Routes()))
}
