// Command intake is the Lambda function of the internal metric intake:
// POST /internal/v1/metric-events on the studio host, where the telephony
// and the agent runtime report metric events with the internal key.
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
		slog.Error("intake: cannot start", "error", err)
		os.Exit(1)
	}
}

// run reads the internal key from Secrets Manager once, at cold start, and
// serves the intake.
func run(ctx context.Context, getenv func(string) string) error {
	deps, err := lambdamain.IntakeDeps(ctx, getenv)
	if err != nil {
		return err
	}
	lambda.StartWithOptions(handler(deps), lambda.WithContext(ctx))
	return nil
}

// handler is the function's Lambda handler; the tests replay events/ through it.
func handler(deps api.Deps) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return api.LambdaHandler(api.Intake(deps))
}
