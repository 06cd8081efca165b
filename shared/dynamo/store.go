// Package dynamo is the DynamoDB implementation of the stores of
// shared/voiceops. It passes the same contract suite (shared/storetest) as
// the in-memory implementation.
//
// Every record of the configuration table lives under its account's
// partition ("ACCT#<account>"), so no query can cross tenants:
//
//	account   pk=ACCT#<id>    sk=A              also rule_count, endpoint_count; gsi1pk=ACCOUNTS gsi1sk=<id>
//	project   pk=ACCT#<acct>  sk=PROJ#<id>
//	key       pk=ACCT#<acct>  sk=KEY#<id>       listing and revoking
//	key       pk=KEY#<digest> sk=K              lookup by digest (written in the same transaction)
//	rule      pk=ACCT#<acct>  sk=RULE#<id>      enabled rules only: gsi1pk=RULES#<shard> gsi1sk=<acct>#<id>
//	endpoint  pk=ACCT#<acct>  sk=WHE#<id>
//
// Per-account limits are counters on the account item, changed in the same
// transaction as the record they count, under a condition: never a
// read-then-write.
package dynamo

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// DB is the part of the DynamoDB client the stores use, with the SDK's own
// signatures: *dynamodb.Client implements it, and tests wrap it to count or
// fail calls.
type DB interface {
	GetItem(ctx context.Context, params *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, params *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, params *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, params *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, params *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	TransactWriteItems(ctx context.Context, params *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

var _ DB = (*dynamodb.Client)(nil)

// TableNames are the physical names of a stack's tables.
type TableNames struct {
	Config, Metrics, Deliveries, Conversations, Calls string
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
	}
	return ""
}

// Store implements the account, rule and endpoint stores on the
// configuration table.
type Store struct {
	db    DB
	table string
	// deliveriesTable holds alert events and deliveries (events.go).
	deliveriesTable string
	// conversationsTable holds conversations and turns (conversations.go);
	// hours remembers the hour index entries written there.
	conversationsTable string
	hours              *hourCache
	now                func() time.Time
}

// New returns a store using db; it never builds a client itself.
func New(db DB, names TableNames) *Store {
	return &Store{db: db, table: names.Config, deliveriesTable: names.Deliveries, conversationsTable: names.Conversations, hours: newHourCache(), now: time.Now}
}

// Stores returns the store behind every interface of the domain.
func (s *Store) Stores() voiceops.Stores {
	return voiceops.Stores{Accounts: s, Rules: s, Endpoints: s, Events: s, Deliveries: s, Conversations: s}
}

var (
	_ voiceops.AccountStore      = (*Store)(nil)
	_ voiceops.RuleStore         = (*Store)(nil)
	_ voiceops.EndpointStore     = (*Store)(nil)
	_ voiceops.EventStore        = (*Store)(nil)
	_ voiceops.DeliveryStore     = (*Store)(nil)
	_ voiceops.ConversationStore = (*Store)(nil)
)
