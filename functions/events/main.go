// Command events is the Lambda function of the events group (the base host): the
// external events webhook and the bridge-ended notification.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/conversations/eventsapi"
	"github.com/voiceops/opsapi/shared/conversations/hooks/lambdainvoke"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/dynamohttp"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
)

func main() { lambdamain.Serve("events", build) }

// build composes the function's Lambda handler from its environment, as
// it runs deployed (the round-trip tests drive it on moto).
func build(getenv func(string) string) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), error) {
	env, err := lambdamain.Load[lambdamain.Events]("events", getenv)
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
	db := dynamodb.NewFromConfig(cfg)
	config := dynamo.NewConfig(db, env.ConfigTable, "") // no rule events here: no deliveries table
	log := lambdamain.Logger()
	metrics := lambdamain.Metrics()
	return emf.Flushing(metrics, handler(deps{
		HTTP: dynamohttp.Config(db, config, env.Region.Region, dynamohttp.Tables{Config: env.ConfigTable, Requests: env.RequestsTable, Metrics: env.MetricsTable}, log, metrics),
		Engine: convgraph.New(convgraph.Deps{ChatIdleTimeout: idle, Conversations: dynamo.NewConversations(db, env.ConversationsTable), Configs: config.AgentConfigs(), DNI: config.DNI(),
			Metrics: metricstore.New(db, env.MetricsTable), Lambda: lambdainvoke.New(cfg, lambdamain.Tracer(getenv)), Now: time.Now, Log: log,
			AllowLoopback: lambdamain.AllowLoopback(getenv)}), // the local stack runner's agents and project functions only
	})), nil
}

// deps is what the events group runs on.
type deps struct {
	// HTTP is the platform: keys, guards, api_errors, clock, log and the
	// request metrics (dynamohttp.Config).
	HTTP   httpapi.Config
	Engine eventsapi.Engine
}

// handler is the function's Lambda handler; the tests replay events/ through it.
func handler(d deps) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	platform := d.HTTP
	platform.Deadline = httpapi.AgentDeadline
	return httpapi.LambdaHandler(httpapi.New(platform,
		(&eventsapi.Events{Engine: d.Engine}).Routes()))
}
