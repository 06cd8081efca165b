// Command outbound is the Lambda function of outbound calling (the base host):
// trigger (one write and one dial job on the outbound queue, which
// functions/dialer consumes) and status with a project's service key, and
// the internal route another telephony system moves a call's status with. It is the one function
// that parses phone numbers (shared/calls/phone, libphonenumber's metadata): apart
// from the voice intake, so that neither pays for the other's libraries.
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
	"github.com/voiceops/opsapi/shared/platform/queue"
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
	internalKey := internalkey.NewLazy(internalkey.SecretFunc(secretsmanager.NewFromConfig(cfg).GetSecretValue), env.InternalKeySecret)
	db := dynamo.Narrow(dynamodb.NewFromConfig(cfg))    // dynamo.Narrow says why
	config := dynamo.NewConfig(db, env.ConfigTable, "") // keys only: no deliveries table
	metrics := lambdamain.Metrics()
	platform := dynamohttp.Config(db, configReads{keyByDigest: config.KeyByDigest}, env.Region.Region, dynamohttp.Tables{Config: env.ConfigTable, Requests: env.RequestsTable, Metrics: env.MetricsTable}, lambdamain.Logger(), metrics)
	platform.InternalKey = internalKey.Digest
	return emf.Flushing(metrics, handler(deps{
		HTTP: platform, Calls: dynamo.NewCalls(db, env.CallsTable),
		// Each account's policy is read once per destination.CacheTTL.
		Destinations: &destination.Cache{Policies: configReads{policy: config.DestinationPolicy}, Now: platform.Now}, Region: env.Region.Region,
		Dial: &dialer.SQSQueue{Client: queue.SendFunc(sqs.NewFromConfig(cfg).SendMessage), URL: env.OutboundQueue},
	})), nil
}

// configReads are the function's reads of the config table (a key by its
// digest, an account's destination policy), held as functions: with
// reflection linked, every exported method of a type reachable from an
// interface is kept, so a *dynamo.Config in any interface (or in a struct
// in one) would link the whole store into this function, near its bundle
// cap (about 100 KB of code and as much of tables).
type configReads struct {
	keyByDigest func(ctx context.Context, digest string) (voiceops.Key, error)
	policy      func(ctx context.Context, accountID string) (destination.Policy, error)
}

func (r configReads) KeyByDigest(ctx context.Context, digest string) (voiceops.Key, error) {
	return r.keyByDigest(ctx, digest)
}

func (r configReads) DestinationPolicy(ctx context.Context, accountID string) (destination.Policy, error) {
	return r.policy(ctx, accountID)
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
