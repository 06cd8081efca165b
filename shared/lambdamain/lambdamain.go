// Package lambdamain builds, once per cold start, what every API function
// needs from its environment: the AWS clients, the DynamoDB stores and the
// authenticator. The functions' main packages only call it and start the
// runtime.
package lambdamain

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/agent"
	"github.com/voiceops/opsapi/shared/api"
	"github.com/voiceops/opsapi/shared/auth"
	"github.com/voiceops/opsapi/shared/conversation"
	"github.com/voiceops/opsapi/shared/delivery"
	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/hooks"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/queue"
	"github.com/voiceops/opsapi/shared/voiceops"
	"github.com/voiceops/opsapi/shared/webhook"
)

// RegionEnv names the service region (us, uk, eu) the function serves.
const RegionEnv = "SERVICE_REGION"

// AWSConfig loads the SDK configuration (AWS_ENDPOINT_URL is honoured, so
// the same code runs against LocalStack or moto).
func AWSConfig(ctx context.Context) (aws.Config, error) {
	return config.LoadDefaultConfig(ctx)
}

// APIDeps builds the dependencies of the API handlers from the environment.
// With METRICS_TABLE set, Deps.Metrics records on that table, so the
// functions count their own api_errors.
func APIDeps(ctx context.Context, getenv func(string) string) (api.Deps, error) {
	deps, _, err := apiDeps(ctx, getenv)
	return deps, err
}

// apiDeps is APIDeps, also returning the AWS configuration it loaded.
func apiDeps(ctx context.Context, getenv func(string) string) (api.Deps, aws.Config, error) {
	region, ok := voiceops.LookupRegion(getenv(RegionEnv))
	if !ok {
		return api.Deps{}, aws.Config{}, fmt.Errorf("%s must be one of us, uk, eu; got %q", RegionEnv, getenv(RegionEnv))
	}
	names := dynamo.TableNamesFromEnv(getenv)
	if names.Config == "" {
		return api.Deps{}, aws.Config{}, fmt.Errorf("the table names are not set in the environment (CONFIG_TABLE, ...)")
	}
	cfg, err := AWSConfig(ctx)
	if err != nil {
		return api.Deps{}, aws.Config{}, fmt.Errorf("loading AWS configuration: %w", err)
	}
	db := dynamodb.NewFromConfig(cfg)
	store := dynamo.NewConfig(db, names.Config, names.Deliveries)
	stores := dynamo.NewStores(db, names)
	deps := api.Deps{
		Stores: stores,
		Auth:   auth.New(stores.Accounts, region.Region, time.Now),
		Now:    time.Now,
		Log:    slog.New(slog.NewJSONHandler(os.Stderr, nil)),
	}
	if names.Metrics != "" {
		deps.Metrics = &metrics.Recorder{Store: metricstore.New(db, names.Metrics)}
	}
	if url := getenv(QueueEnv); url != "" {
		deps.Outbox = delivery.NewOutbox(stores, queue.NewSQS(sqs.NewFromConfig(cfg), url), time.Now)
	}
	if names.Calls != "" {
		deps.Calls = dynamo.NewCalls(db, names.Calls)
	}
	if names.Conversations != "" {
		deps.Conversations = &conversation.Engine{
			Store: stores.Conversations, Configs: store.AgentConfigs(),
			// Deployed stacks call only public addresses and Lambda ARNs.
			Functions: hooks.NewRunner(hooks.Options{Lambda: lambda.NewFromConfig(cfg)}),
			Metrics:   deps.Metrics,
			AgentDeps: agent.Deps{HTTPClient: webhook.NewClient(webhook.Options{})},
			Now:       time.Now, Log: deps.Log,
			DNI: store.DNI(),
		}
	}
	deps.DNI = store.DNI()
	return deps, cfg, nil
}

// ConversationDeps is APIDeps for the functions that run conversations
// (chat, calls): the engine needs the conversations table; with
// internalKey, the internal key's digest is read too (the voice intake).
func ConversationDeps(ctx context.Context, getenv func(string) string, internalKey bool) (api.Deps, error) {
	deps, cfg, err := apiDeps(ctx, getenv)
	if err != nil {
		return api.Deps{}, err
	}
	if deps.Conversations == nil {
		return api.Deps{}, fmt.Errorf("CONVERSATIONS_TABLE is not set")
	}
	if internalKey {
		deps.InternalKeyDigest, err = InternalKeyDigest(ctx, secretsmanager.NewFromConfig(cfg), getenv(InternalKeyEnv))
		if err != nil {
			return api.Deps{}, err
		}
	}
	return deps, nil
}

// QueueEnv carries the delivery queue's URL.
const QueueEnv = "DELIVERY_QUEUE_URL"

// Backend is what the background functions (evaluator, dispatcher) work
// on: the DynamoDB stores, the metric store and the delivery queue.
type Backend struct {
	Stores  voiceops.Stores
	Metrics metrics.Store
	Queue   queue.Queue
	Log     *slog.Logger
}

// NewBackend builds the Backend from the environment (table names and
// DELIVERY_QUEUE_URL).
func NewBackend(ctx context.Context, getenv func(string) string) (Backend, error) {
	names := dynamo.TableNamesFromEnv(getenv)
	if names.Config == "" || names.Metrics == "" || names.Deliveries == "" || names.Conversations == "" {
		return Backend{}, fmt.Errorf("the table names are not set in the environment (CONFIG_TABLE, METRICS_TABLE, DELIVERIES_TABLE, CONVERSATIONS_TABLE)")
	}
	url := getenv(QueueEnv)
	if url == "" {
		return Backend{}, fmt.Errorf("%s is not set", QueueEnv)
	}
	cfg, err := AWSConfig(ctx)
	if err != nil {
		return Backend{}, fmt.Errorf("loading AWS configuration: %w", err)
	}
	db := dynamodb.NewFromConfig(cfg)
	return Backend{
		Stores:  dynamo.NewStores(db, names),
		Metrics: metricstore.New(db, names.Metrics),
		Queue:   queue.NewSQS(sqs.NewFromConfig(cfg), url),
		Log:     slog.New(slog.NewJSONHandler(os.Stderr, nil)),
	}, nil
}
