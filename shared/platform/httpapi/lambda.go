package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/textproto"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/voiceops/opsapi/shared/platform/logctx"
)

// LambdaHandler is the one adapter between API Gateway (HTTP API, payload
// v2) and the plain net/http handlers: no handler ever sees an event type.
// It puts API Gateway's and Lambda's request IDs in the request's log
// context, so that the access line and every other line of the request
// name them next to ours.
// It returns once the request's background work (the api_errors write of a
// 500) is done: Lambda freezes the environment after an invocation returns.
//
// Every header reaches the handler as API Gateway gave it: one value, in
// which API Gateway has already joined repeated lines with commas. The
// library splits every header not on its short list of singletons at its
// commas, which cannot be undone and cuts single-valued headers whose
// value holds a comma (an Idempotency-Key "order-42,retry-1" became
// "order-42"). Kept whole, a header reads as it would on any net/http
// server that got it on one line, the dev server included; code that reads
// a list-valued header splits it itself, as it must there.
func LambdaHandler(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	var accessor core.RequestAccessorV2
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		attrs := []slog.Attr{slog.String(LogAPIGWRequestID, ev.RequestContext.RequestID)}
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			attrs = append(attrs, slog.String(LogLambdaRequestID, lc.AwsRequestID))
		}
		ctx, work := withPending(logctx.With(ctx, attrs...))
		req, err := accessor.EventToRequestWithContext(ctx, ev)
		if err != nil {
			return core.GatewayTimeoutV2(), core.NewLoggedError("Could not convert proxy event to request: %v", err)
		}
		for name, value := range ev.Headers {
			req.Header[textproto.CanonicalMIMEHeaderKey(name)] = []string{value}
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

// FamilyStageVariable is the stage variable that names the error shape of
// an API's host: "studio" on the studio host, "base" on the base host
// (infra/api.go sets it on each host's stage).
const FamilyStageVariable = "error_family"

// String is the family's name in FamilyStageVariable.
func (f Family) String() string {
	if f == BaseErrors {
		return "base"
	}
	return "studio"
}

// StageFamily is a Config.NoRouteFamily for a function that answers the
// requests no route of a host matches (its API's $default route): the
// family its stage names in FamilyStageVariable, or by the path when the
// stage names none.
func StageFamily(r *http.Request) Family {
	vars, _ := core.GetStageVarsFromContextV2(r.Context())
	switch vars[FamilyStageVariable] {
	case StudioErrors.String():
		return StudioErrors
	case BaseErrors.String():
		return BaseErrors
	}
	return familyOf(r)
}
