// Command outbound is the Lambda function of outbound calling (the base host):
// trigger (one write and one dial job on the outbound queue, which
// functions/dialer consumes) and status with a project's service key, and
// the internal route another telephony system moves a call's status with. It is the one function
// that checks phone numbers against the numbering plans (shared/calls/phone): apart
// from the voice intake, so that neither pays for the other's code.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/calls/dialer"
	"github.com/voiceops/opsapi/shared/calls/outboundapi"
	"github.com/voiceops/opsapi/shared/calls/phone"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/internalkey"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/dynamohttp"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func main() { lambdamain.Serve("outbound", build) }

// build composes the function's Lambda handler from its environment, as
// it runs deployed (the round-trip tests drive it on moto).
func build(getenv func(string) string) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), error) {
	env, err := lambdamain.Load[lambdamain.Outbound]("outbound", getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return nil, err
	}
	// Read on the first internal request: public requests never wait for it.
	internalKey := internalkey.NewLazy(secretsmanager.NewFromConfig(cfg), env.InternalKeySecret)
	db := dynamodb.NewFromConfig(cfg)
	config := dynamo.NewConfig(db, env.ConfigTable, "") // keys only: no deliveries table
	metrics := lambdamain.Metrics()
	platform := dynamohttp.Config(db, config, env.Region.Region, dynamohttp.Tables{Config: env.ConfigTable, Requests: env.RequestsTable, Metrics: env.MetricsTable}, lambdamain.Logger(), metrics)
	platform.InternalKey = internalKey.Digest
	return emf.Flushing(metrics, handler(deps{
		HTTP: platform, Calls: dynamo.NewCalls(db, env.CallsTable),
		// Each account's policy is read once per destination.CacheTTL.
		Destinations: &destination.Cache{Policies: config, Now: platform.Now}, Region: env.Region.Region,
		Dial: &dialer.SQSQueue{Client: sqs.NewFromConfig(cfg), URL: env.OutboundQueue},
	})), nil
}

// deps is what outbound calling runs on.
type deps struct {
	// HTTP is the platform: keys, guards, api_errors, clock, log and the
	// request metrics (dynamohttp.Config).
	HTTP  httpapi.Config
	Calls voiceops.CallStore
	Dial  voiceops.DialQueue
	// Destinations are the accounts' destination policies, applied as in
	// Region (whose countries an account calls by default).
	Destinations destination.Reader
	Region       voiceops.Region
}

// handler is the function's Lambda handler; the tests replay events/ through it.
func handler(d deps) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpapi.LambdaHandler(httpapi.New(d.HTTP,
		(&outboundapi.Outbound{Calls: calls.New(d.Calls, d.HTTP.Now, calls.WithDial(d.Dial)), ValidNumber: phone.Valid, ValidCountry: phone.ValidCountry,
			Destinations: &destination.Checker{Policies: d.Destinations, Region: d.Region, Classify: phone.Classify}}).Routes()))
}
