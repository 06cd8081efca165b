// Command misdirected is the one function of the VoiceOps-global stack: the
// unprefixed address, which answers every request 421 and names the
// regional addresses (docs/api.md, "The two hosts").
//
// It answers with an API Gateway response built directly, without the
// net/http adapter of the regional functions (shared/platform/httpapi): it has one
// answer for every request, and it imports nothing of shared/, so that its
// binary stays the size of a hello world.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

// MessageEnv holds the message of the 421 body, "use a regional address:
// ..." (set by the stack, infra/global.go).
const MessageEnv = "MESSAGE"

func main() {
	if err := run(context.Background(), os.Getenv); err != nil {
		slog.Error("misdirected: cannot start", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string) error {
	h, err := handler(getenv(MessageEnv))
	if err != nil {
		return err
	}
	lambda.StartWithOptions(h, lambda.WithContext(ctx))
	return nil
}

// handler answers every request 421 Misdirected Request with
// {"message": message}, and API Gateway's request ID in X-Request-Id.
func handler(message string) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), error) {
	if message == "" {
		return nil, errors.New(MessageEnv + " is not set: it holds the message naming the regional addresses")
	}
	body, err := json.Marshal(struct {
		Message string `json:"message"`
	}{message})
	if err != nil {
		return nil, err
	}
	return func(_ context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{
			StatusCode: http.StatusMisdirectedRequest,
			Headers: map[string]string{
				"Content-Type":           "application/json",
				"X-Content-Type-Options": "nosniff",
				"X-Request-Id":           req.RequestContext.RequestID,
			},
			Body: string(body),
		}, nil
	}, nil
}
