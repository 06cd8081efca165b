package httpapi

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
)

// LambdaHandler is the one adapter between API Gateway (HTTP API, payload
// v2) and the plain net/http handlers: no handler ever sees an event type.
// It returns once the request's background work (the api_errors write of a
// 500) is done: Lambda freezes the environment after an invocation returns.
func LambdaHandler(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	var accessor core.RequestAccessorV2
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		ctx, work := withPending(ctx)
		req, err := accessor.EventToRequestWithContext(ctx, ev)
		if err != nil {
			return core.GatewayTimeoutV2(), core.NewLoggedError("Could not convert proxy event to request: %v", err)
		}
		w := core.NewProxyResponseWriterV2()
		h.ServeHTTP(w, req)
		work.wg.Wait()
		resp, err := w.GetProxyResponse()
		if err != nil {
			return core.GatewayTimeoutV2(), core.NewLoggedError("Error while generating proxy response: %v", err)
		}
		return resp, nil
	}
}
