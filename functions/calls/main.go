// Command calls is the Lambda function of the calls endpoint group: the
// telephony system's voice intake (internal routes) and outbound calling
// (trigger and status, and the internal status route).
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
		slog.Error("calls: cannot start", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string) error {
	deps, err := lambdamain.ConversationDeps(ctx, getenv, true)
	if err != nil {
		return err
	}
	lambda.StartWithOptions(handler(deps), lambda.WithContext(ctx))
	return nil
}

// handler is the function's Lambda handler; the tests replay events/ through it.
func handler(deps api.Deps) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return api.LambdaHandler(api.Calls(deps))
}
