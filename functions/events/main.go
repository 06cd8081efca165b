// Command events is the Lambda function of the events group (doc 2): the
// external events webhook and the bridge-ended notification.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/voiceops/opsapi/shared/api"
	"github.com/voiceops/opsapi/shared/lambdamain"
)

func main() {
	if err := run(context.Background(), os.Getenv); err != nil {
		slog.Error("events: cannot start", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string) error {
	deps, err := lambdamain.ConversationDeps(ctx, getenv, false)
	if err != nil {
		return err
	}
	lambda.StartWithOptions(handler(deps), lambda.WithContext(ctx))
	return nil
}

// handler is the function's Lambda handler; the tests replay events/ through it.
func handler(deps api.Deps) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return api.LambdaHandler(api.Events(deps))
}
