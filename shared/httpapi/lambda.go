package httpapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/voiceops/opsapi/shared/logctx"
)

// LambdaHandler is the one adapter between API Gateway (HTTP API, payload
// v2) and the plain net/http handlers: no handler ever sees an event type.
// It puts API Gateway's and Lambda's request IDs in the request's log
// context, so that the access line and every other line of the request
// name them next to ours.
func LambdaHandler(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	proxy := httpadapter.NewV2(h).ProxyWithContext
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		attrs := []slog.Attr{slog.String(LogAPIGWRequestID, ev.RequestContext.RequestID)}
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			attrs = append(attrs, slog.String(LogLambdaRequestID, lc.AwsRequestID))
		}
		return proxy(logctx.With(ctx, attrs...), ev)
	}
}
