// Command conversations is the Lambda function of a project's conversations
// (the base host): the conversations list (v3 and v1), the concurrency series and
// the handoff state.
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/conversations/conversationsapi"
	"github.com/voiceops/opsapi/shared/platform/apidocs"
	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func main() {
	if err := run(context.Background(), os.Getenv); err != nil {
		slog.Error("conversations: cannot start", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string) error {
	env, err := lambdamain.Load[lambdamain.Conversations]("conversations", getenv)
	if err != nil {
		return err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return err
	}
	db := dynamodb.NewFromConfig(cfg)
	config := dynamo.NewConfig(db, env.ConfigTable, "")
	metrics := lambdamain.Metrics()
	lambda.StartWithOptions(emf.Flushing(metrics, handler(deps{
		Keys: auth.New(config, env.Region.Region, time.Now), Projects: config, Conversations: dynamo.NewConversations(db, env.ConversationsTable),
		CountError: dynamo.NewMetricCounts(db, env.MetricsTable).APIError, Now: time.Now, Log: lambdamain.Logger(),
		Guards:  httpapi.NewGuards(dynamo.NewRequests(db, env.RequestsTable, env.ConfigTable), time.Now),
		Metrics: metrics,
	})), lambda.WithContext(ctx))
	return nil
}

// deps is what the function's groups run on.
type deps struct {
	Keys          httpapi.Authenticator
	Projects      httpapi.ProjectReader
	Conversations voiceops.ConversationStore
	CountError    func(ctx context.Context, accountID, projectID string, at time.Time) error
	Guards        httpapi.Guards
	Now           func() time.Time
	Log           *slog.Logger
	// Metrics receives the request metrics (lambdamain.Metrics).
	Metrics telemetry.Recorder
}

// handler is the function's Lambda handler; the tests replay events/ through it.
func handler(d deps) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpapi.LambdaHandler(httpapi.New(httpapi.Config{Keys: d.Keys, Projects: d.Projects, CountError: d.CountError, Guards: d.Guards, Now: d.Now, Log: d.Log, Metrics: d.Metrics},
		(&conversationsapi.Conversations{Store: d.Conversations, Now: d.Now}).Routes(),
		(&conversationsapi.Concurrency{Store: d.Conversations, Now: d.Now}).Routes(),
		(&conversationsapi.Handoff{Store: d.Conversations}).Routes(),
		apidocs.Routes(apidocs.Base))) // the base host's /openapi.json and /docs
}
