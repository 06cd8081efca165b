// Command intake is the Lambda function of the internal metric intake
// (POST /internal/v1/metric-events): outside producers report metric
// events with the region's internal key.
package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/alerts/studioapi"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/internalkey"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
)

func main() { lambdamain.Serve("intake", build) }

// run reads the internal key from Secrets Manager once, at cold start, and
// serves the intake.
// build composes the function's Lambda handler from its environment, as
// it runs deployed (the round-trip tests drive it on moto).
func build(getenv func(string) string) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), error) {
	env, err := lambdamain.Load[lambdamain.Intake]("intake", getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return nil, err
	}
	// Read on the first internal request: public requests never wait for it.
	internalKey := internalkey.NewLazy(secretsmanager.NewFromConfig(cfg), env.InternalKeySecret)
	batch := lambdamain.Metrics()
	return emf.Flushing(batch, handler(deps{
		InternalKey: internalKey.Digest,
		Metrics:     &buckets.Recorder{Store: metricstore.New(dynamodb.NewFromConfig(cfg), env.MetricsTable)},
		Now:         time.Now, Log: lambdamain.Logger(), AccessLog: lambdamain.AccessLogger(batch),
		Telemetry: batch,
	})), nil
}

// deps is what the intake runs on.
type deps struct {
	InternalKey func(context.Context) (string, error) // the internal key's digest
	Metrics     studioapi.Recorder
	Now         func() time.Time
	Log         *slog.Logger
	AccessLog   *slog.Logger // the access lines' (lambdamain.AccessLogger); Log when nil
	// Telemetry receives the request metrics (lambdamain.Metrics).
	Telemetry telemetry.Recorder
}

// handler is the function's Lambda handler; the tests replay events/ through it.
// Its platform is a literal, not dynamohttp.Config: the intake takes only
// the internal key, so it links no API keys (auth) and no guards.
func handler(d deps) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpapi.LambdaHandler(httpapi.New(httpapi.Config{InternalKey: d.InternalKey, Now: d.Now, Log: d.Log, AccessLog: d.AccessLog, Metrics: d.Telemetry},
		(&studioapi.Intake{Metrics: d.Metrics, Now: d.Now}).Routes()))
}
