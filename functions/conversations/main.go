// Command conversations is the Lambda function of a project's conversations
// (the base host): the conversations list (v3 and v1), the concurrency series and
// the handoff state.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/conversations/conversationsapi"
	"github.com/voiceops/opsapi/shared/platform/apidocs"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/dynamohttp"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func main() { lambdamain.Serve("conversations", build) }

// build composes the function's Lambda handler from its environment, as
// it runs deployed (the round-trip tests drive it on moto).
func build(getenv func(string) string) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), error) {
	env, err := lambdamain.Load[lambdamain.Conversations]("conversations", getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(cfg)
	config := dynamo.NewConfig(db, env.ConfigTable, "")
	metrics := lambdamain.Metrics()
	platform := dynamohttp.Config(db, config, env.Region.Region, dynamohttp.Tables{Config: env.ConfigTable, Requests: env.RequestsTable, Metrics: env.MetricsTable}, lambdamain.Logger(), metrics)
	platform.Projects = config
	return emf.Flushing(metrics, handler(deps{
		HTTP: platform, Conversations: dynamo.NewConversations(db, env.ConversationsTable),
	})), nil
}

// deps is what the function's groups run on.
type deps struct {
	// HTTP is the platform: keys, guards, api_errors, clock, log and the
	// request metrics (dynamohttp.Config).
	HTTP          httpapi.Config
	Conversations voiceops.ConversationStore
}

// handler is the function's Lambda handler; the tests replay events/ through it.
func handler(d deps) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpapi.LambdaHandler(httpapi.New(d.HTTP,
		(&conversationsapi.Conversations{Store: d.Conversations, Now: d.HTTP.Now}).Routes(),
		(&conversationsapi.Concurrency{Store: d.Conversations, Now: d.HTTP.Now}).Routes(),
		(&conversationsapi.Handoff{Store: d.Conversations}).Routes(),
		apidocs.Routes(apidocs.Base))) // the base host's /openapi.json and /docs
}
