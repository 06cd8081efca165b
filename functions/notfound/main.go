// Command notfound is the Lambda function behind each host's $default
// route: it answers every request that no route of the host matches with
// the service's JSON 404 in the host's error shape (the studio host {"message"} on
// the studio host, the base host {"error_message"} on the base host, named by the
// stage variable httpapi.FamilyStageVariable) and an X-Request-Id, where
// API Gateway itself would answer {"message":"Not Found"} with neither.
// A known path with a wrong method reaches its own function (every route
// is ANY), which answers 405 with Allow.
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
)

// main is its own, not lambdamain.Main: run takes no getenv, since the
// function has no environment, and its binary stays smaller without it.
func main() {
	if err := run(context.Background()); err != nil {
		slog.Error("notfound: cannot start", "error", err)
		os.Exit(1)
	}
}

// run reads nothing: the function has no environment of its own.
func run(ctx context.Context) error {
	batch := lambdamain.Metrics()
	lambda.StartWithOptions(emf.Flushing(batch, handler(time.Now, lambdamain.Logger(), lambdamain.AccessLogger(batch), batch)), lambda.WithContext(ctx))
	return nil
}

// handler is the function's Lambda handler: the middleware of every
// function with no route, so every request is its no-route answer; its
// requests are counted like every other function's (metrics). Its platform
// is a literal, not dynamohttp.Config: it authenticates nothing and links
// no store.
func handler(now func() time.Time, log, accessLog *slog.Logger, metrics telemetry.Recorder) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpapi.LambdaHandler(httpapi.New(httpapi.Config{NoRouteFamily: httpapi.StageFamily, Now: now, Log: log, AccessLog: accessLog, Metrics: metrics}))
}
