// Command alerts is the Lambda function of the alerts endpoint group (the studio host):
// alert rules and the firing alerts.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/alerts/alertgraph"
	"github.com/voiceops/opsapi/shared/alerts/alerting"
	"github.com/voiceops/opsapi/shared/alerts/console"
	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/alerts/studioapi"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/platform/apidocs"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/dynamohttp"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func main() { lambdamain.Serve("alerts", build) }

// build composes the function's Lambda handler from its environment, as
// it runs deployed (the round-trip tests drive it on moto).
func build(getenv func(string) string) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), error) {
	env, err := lambdamain.Load[lambdamain.Alerts]("alerts", getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return nil, err
	}
	consoleRoutes, err := console.RoutesWith(env.ConsoleBaseURL)
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(cfg)
	// With the metrics table, a rule's or a silence's write wakes the
	// evaluator in its own transaction (voiceops.RuleStore, wake-ups).
	stores := dynamo.NewStores(db, dynamo.TableNames{Config: env.ConfigTable, Deliveries: env.DeliveriesTable, Metrics: env.MetricsTable})
	outbox := delivery.NewOutbox(stores, queue.NewSQS(sqs.NewFromConfig(cfg), env.DeliveryQueue), time.Now)
	metrics := lambdamain.Metrics()
	return emf.Flushing(metrics, handler(deps{
		HTTP:  dynamohttp.Config(db, stores.Accounts, env.Region.Region, dynamohttp.Tables{Config: env.ConfigTable, Requests: env.RequestsTable, Metrics: env.MetricsTable}, lambdamain.Logger(), metrics),
		Rules: stores.Rules, Marks: stores.Evaluations, Fanout: outbox.Fanout,
		History: stores.History, Endpoints: stores.Endpoints, Projects: stores.Accounts, Silences: stores.Silences,
		Series:  &series.Reader{Minutes: metricstore.New(db, env.MetricsTable), Hours: metricstore.NewRollups(db, env.MetricsTable), Now: time.Now},
		Console: consoleRoutes,
	})), nil
}

// deps is what the alerts group runs on.
type deps struct {
	// HTTP is the platform: keys, guards, api_errors, clock, log and the
	// request metrics (dynamohttp.Config).
	HTTP  httpapi.Config
	Rules voiceops.RuleStore
	// Marks are the evaluator's marks, shown as last_evaluated_at by the
	// reads (alertgraph); nil shows the rules' own.
	Marks  voiceops.EvaluationStore
	Fanout alerting.Fanout
	// Our additions: the rules' history (with the endpoints whose
	// deliveries it shows), the metric series and the preview.
	History   voiceops.HistoryStore
	Endpoints voiceops.EndpointStore
	Projects  studioapi.Projects
	Series    *series.Reader
	Silences  voiceops.SilenceStore
	// Console is the console's routes (console.RoutesWith the base
	// host's URL); nil serves console.Routes().
	Console []httpapi.Route
}

// handler is the function's Lambda handler; the tests replay events/ through it.
func handler(d deps) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	consoleRoutes := d.Console
	if consoleRoutes == nil {
		consoleRoutes = console.Routes()
	}
	now := d.HTTP.Now
	g := alertgraph.New(alertgraph.Deps{Rules: d.Rules, Marks: d.Marks, Fanout: d.Fanout, Now: now, Log: d.HTTP.Log})
	return httpapi.LambdaHandler(httpapi.New(d.HTTP,
		(&studioapi.Alerts{Rules: g.Rules, Service: g.Service,
			History: d.History, Endpoints: d.Endpoints, Projects: d.Projects, Series: d.Series, Silences: d.Silences, Now: now}).Routes(),
		consoleRoutes,
		apidocs.Routes(apidocs.Studio))) // the studio host's /openapi.json and /docs
}
