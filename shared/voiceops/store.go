package voiceops

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Every store method is scoped by account ID where the data belongs to an
// account, so no call can reach another tenant's items. Missing items are
// ErrNotFound, never a zero value with a nil error.

// AccountStore holds accounts, projects and key digests.
type AccountStore interface {
	CreateAccount(ctx context.Context, a Account) error
	GetAccount(ctx context.Context, accountID string) (Account, error)
	ListAccounts(ctx context.Context) ([]Account, error)
	CreateProject(ctx context.Context, p Project) error
	GetProject(ctx context.Context, accountID, projectID string) (Project, error)
	ListProjects(ctx context.Context, accountID string) ([]Project, error)

	// CreateKey stores a key's digest; the account (and project) must exist.
	CreateKey(ctx context.Context, k Key) error
	// KeyByDigest finds a key by its digest, revoked or not.
	KeyByDigest(ctx context.Context, digest string) (Key, error)
	ListKeys(ctx context.Context, accountID string) ([]Key, error)
	// RevokeKey marks a key revoked; revoking twice keeps the first time.
	RevokeKey(ctx context.Context, accountID, keyID string, at time.Time) (Key, error)
}

// RuleStore holds alert rules.
//
// Wake-ups: a write of a rule marked Wake (AlertRule.Wake), and the end of a
// silence (SilenceStore.EndSilence), also wake scopes: they ask for an
// evaluation of the scope's rules (the account's project, or its
// account-wide rules) within about a second, instead of at the next
// scheduled run, in the same atomic write as the change itself, so the
// change and its wake-up exist together or not at all. DynamoDB writes a
// touch, an empty item, in the scope's partition of the metrics table
// (dynamo.NewStores given its name), whose stream then evaluates the
// scope as if data had come; memory calls its wake listener
// (memory.Store.WakeWith) once the write is made. A store set up with
// neither wakes nothing, and the schedule evaluates the scope within the
// minute.
type RuleStore interface {
	// CreateRule stores a new rule if the account has fewer than
	// MaxRulesPerAccount rules (else ErrRuleLimit) and, when the rule has a
	// project, that project exists (else ErrProjectNotFound). Atomic, with
	// the wake-up of the rule's scope when it is marked Wake.
	CreateRule(ctx context.Context, r AlertRule) error
	GetRule(ctx context.Context, accountID, ruleID string) (AlertRule, error)
	ListRules(ctx context.Context, accountID string) ([]AlertRule, error)
	// UpdateRule replaces the rule if its stored version is expectVersion
	// (else ErrConflictingWrite); r.Version must be expectVersion+1. When
	// checkProject is set, r.ProjectID must name a project of the account.
	// The events are stored (pending) in the same atomic write: a state
	// change and the events it sends exist together or not at all; so is
	// the wake-up of the rule's scope when r is marked Wake.
	UpdateRule(ctx context.Context, r AlertRule, expectVersion int64, checkProject bool, events ...AlertEvent) error
	// DeleteRule removes a rule and frees its place under the limit. When
	// events is not nil it is called with the rule being deleted, and the
	// events it returns are stored in the same atomic write.
	DeleteRule(ctx context.Context, accountID, ruleID string, events func(AlertRule) []AlertEvent) (AlertRule, error)
	// ListEnabledRules returns the enabled rules of one evaluator shard (of
	// RuleShards), every account's: the evaluator reads them all with
	// RuleShards small reads, never a scan of the table.
	ListEnabledRules(ctx context.Context, shard int) ([]AlertRule, error)
}

// EndpointStore holds webhook endpoints.
type EndpointStore interface {
	// CreateEndpoint stores a new endpoint under the MaxEndpointsPerAccount
	// limit (else ErrEndpointLimit). Atomic.
	CreateEndpoint(ctx context.Context, e WebhookEndpoint) error
	GetEndpoint(ctx context.Context, accountID, endpointID string) (WebhookEndpoint, error)
	ListEndpoints(ctx context.Context, accountID string) ([]WebhookEndpoint, error)
	// UpdateEndpoint replaces the endpoint if its stored version is
	// expectVersion (else ErrConflictingWrite); callers set e.Version to
	// expectVersion+1.
	UpdateEndpoint(ctx context.Context, e WebhookEndpoint, expectVersion int64) error
	DeleteEndpoint(ctx context.Context, accountID, endpointID string) error
}

// AgentConfigStore keeps each project's agent configuration as the JSON
// document that shared/conversations/agent validates (agent.ParseConfig) and reads
// (agent.GetConfig). The domain keeps the document without reading it, so
// it needs none of agent's types. Implementations: memory and dynamo, held
// to one contract by storetest.RunAgentConfigs.
type AgentConfigStore interface {
	// PutAgentConfig stores doc as the project's configuration, replacing
	// any previous one. The project must exist, else ErrNotFound and
	// nothing is stored.
	PutAgentConfig(ctx context.Context, accountID, projectID string, doc []byte) error
	// GetAgentConfig returns the project's configuration document,
	// ErrNotFound when it has none.
	GetAgentConfig(ctx context.Context, accountID, projectID string) ([]byte, error)
}

// EvaluationStore records when the evaluator last evaluated a scope's
// rules, so that an evaluation that changes nothing writes one item per
// scope rather than one per rule.
type EvaluationStore interface {
	// MarkEvaluated records that the enabled rules of the scope (the
	// account's project projectID, or with "" its account-wide rules), as
	// they stood at the instant at, were evaluated then, each either
	// written or found unchanged. A mark older than the stored one is
	// ignored. The API shows it as last_evaluated_at of the rules it
	// covers (AlertRule.WithMark, alerting.WithMarks).
	MarkEvaluated(ctx context.Context, accountID, projectID string, at time.Time) error
	// Mark returns the scope's mark, zero when it has none.
	Mark(ctx context.Context, accountID, projectID string) (time.Time, error)
	// Marks returns every mark of the account by project ("" for the
	// account-wide scope). The map is the caller's to read, not to change
	// (a store may hand out the map it holds).
	Marks(ctx context.Context, accountID string) (map[string]time.Time, error)
}

// RuleShards is how many partitions the evaluator's index of enabled rules
// spreads over.
const RuleShards = 16

// RuleShardOf returns the evaluator shard of an account's rules.
func RuleShardOf(accountID string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(accountID))
	return int(h.Sum32() % RuleShards)
}

// PrefixConversation starts every conversation ID.
const PrefixConversation = "conv_"

// ConversationShards is how many storage partitions may share the
// conversations that one project starts in one hour (the shard digits an
// ID may carry), so that a busy project does not write one partition
// only. A conversation's shard is chosen when its ID is made
// (NewProjectConversationID: shard 0 while the project is quiet, then one
// of the first WriteShards; shards.go), and the ID carries it.
const ConversationShards = 4

// WriteShards is how many of the ConversationShards new conversations use:
// 3 partitions take about 3,000 WCU a second, some 1,000 chat turns a
// second in one project's hour, and a list page of a busy project's hour
// reads 3 of them (releases before used all 4; readers read what the hour
// index names).
const WriteShards = 3

// A conversation ID carries the millisecond its conversation started and
// its shard, so that a store finds a conversation from its ID alone (one
// read) and IDs sort like start times:
//
//	conv_<13-digit unix milliseconds of StartedAt><shard digit 0-3><20 random base62>
//	conv_17419444135892Xy3kQ9Zr1bT7LmPa0cWd   (started 2025-03-14T09:26:53.589Z, shard 2)
//
// It is URL-safe; the random part has about 119 bits. Start times from 1970
// to 2286 fit the 13 digits.
const conversationIDLength = len(PrefixConversation) + 13 + 1 + 20

// NewConversationID returns a new ID for a conversation that starts at
// startedAt (a store refuses a conversation whose StartedAt is not the
// millisecond its ID carries).
func NewConversationID(startedAt time.Time) string {
	return fmt.Sprintf("%s%013d%d%s", PrefixConversation, startedAt.UnixMilli(), rand.IntN(WriteShards), RandomBase62(20))
}

// ParseConversationID returns the start (to the millisecond) and the shard
// a conversation ID carries; ok is false when id is not one.
func ParseConversationID(id string) (started time.Time, shard int, ok bool) {
	p := len(PrefixConversation)
	if len(id) != conversationIDLength || !strings.HasPrefix(id, PrefixConversation) ||
		!every(id[p:p+14], isDigit) || !every(id[p+14:], isAlnum) {
		return time.Time{}, 0, false
	}
	var ms int64
	for _, c := range id[p : p+13] {
		ms = ms*10 + int64(c-'0')
	}
	shard = int(id[p+13] - '0')
	if shard >= ConversationShards {
		return time.Time{}, 0, false
	}
	return time.UnixMilli(ms).UTC(), shard, true
}

// MaxTurnIndex bounds a turn's Index: stores keep it in 8 digits.
const MaxTurnIndex = 99_999_999

// ErrInvalidCursor is the error of a conversation listing whose `after` is
// not a conversation ID.
var ErrInvalidCursor = &Error{Kind: KindBadRequest, Message: "invalid cursor"}

// ValidConversationID reports whether id has the shape of a conversation ID.
func ValidConversationID(id string) bool {
	_, _, ok := ParseConversationID(id)
	return ok
}

// Stores is every store the API needs.
type Stores struct {
	Accounts  AccountStore
	Rules     RuleStore
	Endpoints EndpointStore
	// Events and Deliveries live in the deliveries table (memory: the same
	// Store as the rest).
	Events     EventStore
	Deliveries DeliveryStore
	// Conversations live in the conversations table (memory: the same
	// Store as the rest).
	Conversations ConversationStore
	// Evaluations holds the evaluator's marks (config table).
	Evaluations EvaluationStore
	// History reads the rules' state histories (deliveries table; memory:
	// the same Store as the rest).
	History HistoryStore
	// Silences hold back the deliveries of the rules they cover (config
	// table; memory: the same Store as the rest).
	Silences SilenceStore
}

// SortRules orders rules by creation time, then ID: the order of every list.
func SortRules(rs []AlertRule) {
	slices.SortFunc(rs, func(a, b AlertRule) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// SortEndpoints orders endpoints by creation time, then ID.
func SortEndpoints(es []WebhookEndpoint) {
	slices.SortFunc(es, func(a, b WebhookEndpoint) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
