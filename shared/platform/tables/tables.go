// Package tables defines the DynamoDB tables once. The CDK stack (infra/) and
// the dev server's table creation against LocalStack or moto both read these
// definitions, so the deployed tables and the emulated ones cannot drift.
package tables

// Attribute names shared by every table.
const (
	PK  = "pk"
	SK  = "sk"
	TTL = "expires_at" // unix seconds; DynamoDB deletes the item some time after
)

// GSI is a global secondary index with string keys, projecting all
// attributes unless KeysOnly.
type GSI struct {
	Name         string
	PartitionKey string
	SortKey      string
	// KeysOnly projects only the table's and the index's keys: an index
	// item is then written only when its key changes, not on every update
	// of the item.
	KeysOnly bool
}

// Table is a table with string partition and sort keys.
type Table struct {
	// ID is the stable short name: the CDK construct ID and the suffix of the
	// physical name.
	ID string
	// EnvVar carries the physical table name into the functions.
	EnvVar       string
	PartitionKey string
	SortKey      string
	TTLAttribute string
	GSIs         []GSI
	// Stream is the view type of the table's DynamoDB Stream
	// ("KEYS_ONLY", "NEW_IMAGE", ...), "" for none.
	Stream string
}

// Config holds accounts, projects, key digests, alert rules and webhook
// endpoints: small, long-lived, read on every request.
//
// GSI1 is sparse: only enabled rules carry gsi1pk ("RULES#<shard>"), so the
// evaluator finds every rule to evaluate with a few queries, never a scan.
var Config = Table{
	ID: "config", EnvVar: "CONFIG_TABLE", PartitionKey: PK, SortKey: SK, TTLAttribute: TTL,
	GSIs: []GSI{{Name: "gsi1", PartitionKey: "gsi1pk", SortKey: "gsi1sk"}},
}

// Metrics holds one-minute metric buckets per scope (TTL about 2 hours).
// Its stream drives the evaluator: a new item's partition key names the
// scope whose rules to evaluate, so the keys are all it needs.
var Metrics = Table{ID: "metrics", EnvVar: "METRICS_TABLE", PartitionKey: PK, SortKey: SK, TTLAttribute: TTL, Stream: StreamKeysOnly}

// StreamKeysOnly is the stream view type that carries only the keys.
const StreamKeysOnly = "KEYS_ONLY"

// Deliveries holds alert events, their pending deliveries and the delivery
// log (TTL 30 days).
var Deliveries = Table{
	ID: "deliveries", EnvVar: "DELIVERIES_TABLE", PartitionKey: PK, SortKey: SK, TTLAttribute: TTL,
	GSIs: []GSI{{Name: "gsi1", PartitionKey: "gsi1pk", SortKey: "gsi1sk"}},
}

// Conversations holds conversation records and their turns, partitioned by
// project, start hour and shard (shared/store/dynamo/conversations.go). Items
// expire with the project's retention (TTL, default 90 days).
//
// IdleGSI is sparse: only conversations in progress carry its keys
// (idle_pk "I#<shard>", idle_sk "<idle due, floored to 5 minutes>#<conversation
// id>"), so the idle sweep reads the conversations due with a few queries,
// never a scan. It projects only the keys, and its key moves once per 5
// minutes of a conversation rather than every turn, so most turns write
// nothing to it.
//
// OpenGSI is the index IdleGSI replaces (projection ALL, a key that moved
// every turn): nothing writes its keys any more; the sweep still reads it
// for the conversations in progress written before IdleGSI existed. Remove
// it in the release after the one that adds IdleGSI (CloudFormation
// creates or deletes one GSI per table per update).
//
// TurnsGSI holds turn items and turns markers (turns_pk "<acct>#<proj>#<start
// hour>", turns_sk "<conversation id>#<index>" or "#C") written by the
// release that added it; nothing writes its keys any more (a list page reads
// turns by key: shared/store/dynamo/pageturns.go). Remove it once those
// conversations have expired (their retention, 90 days by default).
var Conversations = Table{
	ID: "conversations", EnvVar: "CONVERSATIONS_TABLE", PartitionKey: PK, SortKey: SK, TTLAttribute: TTL,
	GSIs: []GSI{OpenGSI, TurnsGSI, IdleGSI},
}

// IdleGSI is the conversations table's index of conversations in
// progress, by a coarse bucket of their idle due.
var IdleGSI = GSI{Name: "idle", PartitionKey: "idle_pk", SortKey: "idle_sk", KeysOnly: true}

// OpenGSI is the conversations table's former index of conversations in
// progress (read only, see Conversations).
var OpenGSI = GSI{Name: "open", PartitionKey: "open_pk", SortKey: "open_sk"}

// TurnsGSI is the conversations table's index of turns by project and the
// hour their conversation started.
var TurnsGSI = GSI{Name: "turns", PartitionKey: "turns_pk", SortKey: "turns_sk"}

// Calls holds outbound calls, one item per call SID (shared/store/dynamo/calls.go).
// A call expires 2 hours after its terminal status (TTL); reads ignore it
// from then on.
var Calls = Table{ID: "calls", EnvVar: "CALLS_TABLE", PartitionKey: PK, SortKey: SK, TTLAttribute: TTL}

// Requests holds the per-key request guards (shared/store/dynamo/requests.go):
// Idempotency-Key records (TTL 24 hours) and rate-limit buckets (TTL an
// hour after they are full again), partitioned by account and key.
var Requests = Table{ID: "requests", EnvVar: "REQUESTS_TABLE", PartitionKey: PK, SortKey: SK, TTLAttribute: TTL}

// All lists every table of a stack.
var All = []Table{Config, Metrics, Deliveries, Conversations, Calls, Requests}

// PhysicalName is the table name for a stack prefix, e.g. "voiceops-us-config".
func PhysicalName(prefix string, t Table) string { return prefix + "-" + t.ID }
