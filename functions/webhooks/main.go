// Command webhooks is the Lambda function of the webhooks endpoint group
// (the studio host): webhook endpoints, their secrets, test events and the delivery
// log.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/alerts/alertgraph"
	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/alerts/studioapi"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/dynamohttp"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func main() { lambdamain.Serve("webhooks", build) }

// build composes the function's Lambda handler from its environment, as
// it runs deployed (the round-trip tests drive it on moto).
func build(getenv func(string) string) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), error) {
	env, err := lambdamain.Load[lambdamain.Webhooks]("webhooks", getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := lambdamain.AWSConfig(getenv)
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(cfg)
	stores := dynamo.NewStores(db, dynamo.TableNames{Config: env.ConfigTable, Deliveries: env.DeliveriesTable})
	metrics := lambdamain.Metrics()
	return emf.Flushing(metrics, handler(deps{
		HTTP:      dynamohttp.Config(db, stores.Accounts, env.Region.Region, dynamohttp.Tables{Config: env.ConfigTable, Requests: env.RequestsTable, Metrics: env.MetricsTable}, lambdamain.Logger(), metrics),
		Endpoints: stores.Endpoints, Deliveries: stores.Deliveries, Events: stores.Events,
		Outbox:     delivery.NewOutbox(stores, queue.NewSQS(sqs.NewFromConfig(cfg), env.DeliveryQueue), time.Now),
		URLPolicy:  voiceops.URLPolicy{AllowLoopback: lambdamain.AllowLoopback(getenv)}, // the local stack runner only
		ConsoleURL: env.ConsoleURL,
	})), nil
}

// deps is what the webhooks group runs on. A zero URLPolicy is the
// deployed one: public addresses only.
type deps struct {
	// HTTP is the platform: keys, guards, api_errors, clock, log and the
	// request metrics (dynamohttp.Config).
	HTTP       httpapi.Config
	Endpoints  voiceops.EndpointStore
	Deliveries voiceops.DeliveryStore
	Events     voiceops.EventStore
	Outbox     studioapi.Outbox
	URLPolicy  voiceops.URLPolicy
	ConsoleURL string
}

// handler is the function's Lambda handler; the tests replay events/ through it.
func handler(d deps) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	svc := alertgraph.New(alertgraph.Deps{Endpoints: d.Endpoints, Now: d.HTTP.Now, Log: d.HTTP.Log}).Service // endpoints only: no rule changes here
	return httpapi.LambdaHandler(httpapi.New(d.HTTP,
		(&studioapi.Webhooks{Endpoints: d.Endpoints, Deliveries: d.Deliveries, Service: svc, Outbox: d.Outbox, URLPolicy: d.URLPolicy, Events: d.Events, ConsoleURL: d.ConsoleURL}).Routes()))
}
