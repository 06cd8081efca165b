package dynamo

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Config is the store of the configuration table. Every record lives under
// its account's partition ("ACCT#<account>"), so no query can cross
// tenants:
//
//	account   pk=ACCT#<id>    sk=A              also rule_count, endpoint_count; gsi1pk=ACCOUNTS gsi1sk=<id>
//	project   pk=ACCT#<acct>  sk=PROJ#<id>
//	key       pk=ACCT#<acct>  sk=KEY#<id>       listing and revoking
//	key       pk=KEY#<digest> sk=K              lookup by digest (written in the same transaction)
//	rule      pk=ACCT#<acct>  sk=RULE#<id>      enabled rules only: gsi1pk=RULES#<shard> gsi1sk=<acct>#<id>
//	endpoint  pk=ACCT#<acct>  sk=WHE#<id>
//	DNI pools and agent configurations: dni.go, agentconfig.go
//
// Per-account limits are counters on the account item, changed in the same
// transaction as the record they count, under a condition: never a
// read-then-write.
//
// A rule's state change and the alert events it sends are one transaction
// across two tables (UpdateRule, DeleteRule): the events are Puts into the
// deliveries table, so a Config is given that table's name too. So are a
// rule's or a silence's end and its wake-ups (voiceops.RuleStore): Puts of
// touches into the metrics table, when the Config has its name.
type Config struct {
	store
	deliveriesTable string
	// metricsTable is where wake-ups are written; "" writes none.
	metricsTable string
}

// NewConfig returns the store of the configuration table named table;
// deliveriesTable names the deliveries table, where UpdateRule and
// DeleteRule write the events of a rule in the rule's own transaction.
func NewConfig(db DB, table, deliveriesTable string) *Config {
	return &Config{store: newStore(db, table), deliveriesTable: deliveriesTable}
}

// WakingIn returns the store writing its wake-ups in the metrics table
// named metricsTable (NewStores sets it from TableNames.Metrics).
func (s *Config) WakingIn(metricsTable string) *Config {
	c := *s
	c.metricsTable = metricsTable
	return &c
}

// txWake is the Put of a wake-up of the scope at `at` in the metrics
// table: unconditional, so it never cancels the transaction it is in.
func (s *Config) txWake(accountID, projectID string, at time.Time) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.metricsTable), Item: touchItem(accountID, projectID, at)}}
}

// wakes reports whether the store writes wake-ups.
func (s *Config) wakes() bool { return s.metricsTable != "" }

var (
	_ voiceops.AccountStore  = (*Config)(nil)
	_ voiceops.RuleStore     = (*Config)(nil)
	_ voiceops.EndpointStore = (*Config)(nil)
)
