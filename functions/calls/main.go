// Command calls is the Lambda function of the calls endpoint group: the
// telephony system's voice intake (internal routes), DNI reservations, and
// Twilio's callbacks of outbound calls (status reports, and the answered
// call's voice conversation through the same engine). Outbound calling's
// API is functions/outbound; placing calls is functions/dialer.
package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/stepinvoke"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/calls/twilioapi"
	"github.com/voiceops/opsapi/shared/conversations/agent/bedrockconverse"
	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/conversations/hooks/lambdainvoke"
	"github.com/voiceops/opsapi/shared/conversations/voiceapi"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/internalkey"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/dynamohttp"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func main() { lambdamain.Serve("calls", build) }

// build composes the function's Lambda handler from its environment, as
// it runs deployed (the round-trip tests drive it on moto).
func build(getenv func(string) string) (func(context.Context, json.RawMessage) (any, error), error) {
	env, err := lambdamain.Load[lambdamain.Calls]("calls", getenv)
	if err != nil {
		return nil, err
	}
	idle, err := lambdamain.LocalChatIdleTimeout(getenv)
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
	config := dynamo.NewConfig(db, env.ConfigTable, "") // no rule events here: no deliveries table
	log := lambdamain.Logger()
	metrics := lambdamain.Metrics()
	platform := dynamohttp.Config(db, config, env.Region.Region, dynamohttp.Tables{Config: env.ConfigTable, Requests: env.RequestsTable, Metrics: env.MetricsTable}, log, metrics)
	platform.InternalKey = internalKey.Digest
	invoker := lambdainvoke.New(cfg, lambdamain.Tracer(getenv))
	d := deps{
		HTTP: platform,
		Engine: convgraph.New(convgraph.Deps{ChatIdleTimeout: idle, Conversations: dynamo.NewConversations(db, env.ConversationsTable), Configs: config.AgentConfigs(), DNI: config.DNI(),
			Metrics: metricstore.New(db, env.MetricsTable), Lambda: invoker, Now: time.Now, Log: log,
			AllowLoopback: lambdamain.AllowLoopback(getenv), // the local stack runner's agents only
			Model:         bedrockconverse.New(bedrockconverse.NewClient(cfg))}),
		Pools:     config.DNI(),
		Calls:     dynamo.NewCalls(db, env.CallsTable),
		Twilio:    &twilio.SecretCredentials{Client: secretsmanager.NewFromConfig(cfg), SecretID: env.TwilioSecret, Now: time.Now},
		PublicURL: env.PublicBaseURL,
		// A claimed step runs in an asynchronous invocation of this function.
		Handoff: stepinvoke.Handoff(invoker, lambdacontext.FunctionName),
	}
	return emf.Flushing(metrics, stepinvoke.Handler(handler(d), d.service().RunStep, log, time.Now)), nil
}

// deps is what the function's groups run on.
type deps struct {
	// HTTP is the platform: keys, guards, api_errors, the internal key,
	// clock, log and the request metrics (dynamohttp.Config).
	HTTP   httpapi.Config
	Engine interface {
		voiceapi.Engine
		calls.Engine
	} // shared/conversations/conversation.Engine
	Pools     voiceops.DNIStore
	Calls     voiceops.CallStore
	Twilio    twilio.Credentials
	PublicURL string // the base host's public URL (Twilio signs it)
	// Handoff carries a claimed step to its own invocation (nil: the step
	// runs bound to its callback).
	Handoff func(context.Context, calls.StepJob) error
}

// service is the calls service of Twilio's callbacks and of the steps'
// invocations.
func (d deps) service() *calls.Service {
	// The lease (calls.DefaultStepLease) outlasts a handed-off step's run;
	// without a handoff, a step ends with its callback.
	return calls.New(d.Calls, d.HTTP.Now, calls.WithEngine(d.Engine), calls.WithTelemetry(d.HTTP.Metrics), calls.WithHandoff(d.Handoff))
}

// handler is the function's Lambda handler; the tests replay events/ through it.
func handler(d deps) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	platform := d.HTTP
	platform.Deadline = httpapi.AgentDeadline
	return httpapi.LambdaHandler(httpapi.New(platform,
		(&voiceapi.Voice{Engine: d.Engine}).Routes(),
		(&voiceapi.DNI{Pools: d.Pools, Now: d.HTTP.Now}).Routes(),
		(&twilioapi.Callbacks{Calls: d.service(), Creds: d.Twilio, PublicBaseURL: d.PublicURL}).Routes()))
}
