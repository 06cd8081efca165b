// Package dynamo is the DynamoDB implementation of the stores of
// shared/voiceops. It passes the same contract suite (shared/store/storetest) as
// the in-memory implementation.
//
// There is one store type per table, each built from the client and the
// table's name: Config (accounts, projects, keys, rules, endpoints, DNI
// pools and agent configurations), Deliveries (alert events and their
// deliveries), Conversations (conversations and turns) and Calls (outbound
// calls). The metric store, which needs the DDSketch encoding, is
// shared/store/dynamo/metricstore. Adapters take their client; none builds one.
package dynamo

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// DB is the part of the DynamoDB client the stores use, with the SDK's own
// signatures: *dynamodb.Client implements it, and tests wrap it to count or
// fail calls.
type DB interface {
	GetItem(ctx context.Context, params *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	BatchGetItem(ctx context.Context, params *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	PutItem(ctx context.Context, params *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, params *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, params *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, params *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	TransactWriteItems(ctx context.Context, params *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

var _ DB = (*dynamodb.Client)(nil)

// TableNames are the physical names of a stack's tables.
type TableNames struct {
	Config, Metrics, Deliveries, Conversations, Calls, Requests string
}

// TableNamesFromEnv reads the names from the variables CDK sets on every
// function (tables.Config.EnvVar and so on).
func TableNamesFromEnv(getenv func(string) string) TableNames {
	return TableNames{
		Config:        getenv(tables.Config.EnvVar),
		Metrics:       getenv(tables.Metrics.EnvVar),
		Deliveries:    getenv(tables.Deliveries.EnvVar),
		Conversations: getenv(tables.Conversations.EnvVar),
		Calls:         getenv(tables.Calls.EnvVar),
		Requests:      getenv(tables.Requests.EnvVar),
	}
}

// TableNamesFor returns the names of the tables of a stack prefix, as the
// CDK stack names them (tables.PhysicalName).
func TableNamesFor(prefix string) TableNames {
	return TableNames{
		Config:        tables.PhysicalName(prefix, tables.Config),
		Metrics:       tables.PhysicalName(prefix, tables.Metrics),
		Deliveries:    tables.PhysicalName(prefix, tables.Deliveries),
		Conversations: tables.PhysicalName(prefix, tables.Conversations),
		Calls:         tables.PhysicalName(prefix, tables.Calls),
		Requests:      tables.PhysicalName(prefix, tables.Requests),
	}
}

// Of returns the physical name of the table t, or "" if t is not one of
// tables.All.
func (n TableNames) Of(t tables.Table) string {
	switch t.ID {
	case tables.Config.ID:
		return n.Config
	case tables.Metrics.ID:
		return n.Metrics
	case tables.Deliveries.ID:
		return n.Deliveries
	case tables.Conversations.ID:
		return n.Conversations
	case tables.Calls.ID:
		return n.Calls
	case tables.Requests.ID:
		return n.Requests
	}
	return ""
}

// store is what every store of one table holds: the client, the table's
// name, and the clock that tells expired items. The helpers of items.go and
// errors.go (get, query, transact, ...) are its methods, so they serve
// every table alike.
type store struct {
	db    DB
	table string
	now   func() time.Time
}

func newStore(db DB, table string) store {
	return store{db: sizedDB{db}, table: table, now: time.Now}
}

// NewStores returns the domain's aggregate of stores over a stack's tables,
// for what uses them all (the dev server, tests). A function builds only
// the stores it uses: NewConfig, NewDeliveries, NewConversations.
func NewStores(db DB, names TableNames) voiceops.Stores {
	c := NewConfig(db, names.Config, names.Deliveries).WakingIn(names.Metrics)
	d := NewDeliveries(db, names.Deliveries)
	return voiceops.Stores{Accounts: c, Rules: c, Endpoints: c, Events: d, Deliveries: d, Conversations: NewConversations(db, names.Conversations), Evaluations: c, History: d, Silences: c}
}
