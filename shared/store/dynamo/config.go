package dynamo

import (
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
// deliveries table, so a Config is given that table's name too.
type Config struct {
	store
	deliveriesTable string
}

// NewConfig returns the store of the configuration table named table;
// deliveriesTable names the deliveries table, where UpdateRule and
// DeleteRule write the events of a rule in the rule's own transaction.
func NewConfig(db DB, table, deliveriesTable string) *Config {
	return &Config{store: newStore(db, table), deliveriesTable: deliveriesTable}
}

var (
	_ voiceops.AccountStore  = (*Config)(nil)
	_ voiceops.RuleStore     = (*Config)(nil)
	_ voiceops.EndpointStore = (*Config)(nil)
)
