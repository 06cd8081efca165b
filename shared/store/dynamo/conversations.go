package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Conversations and their turns live in the conversations table:
//
//	conversation  pk=C#<acct>#<proj>#<yyyymmddhh>#<shard>  sk=<conversation id>
//	hour index    pk=H#<acct>#<proj>                       sk=<yyyymmddhh>#<shard> (hourindex.go)
//	turn          pk=T#<acct>#<proj>#<conversation id>      sk=<index: 8 digits>
//	turns marker  pk=T#<acct>#<proj>#<conversation id>      sk=C
//	side item     pk=<the conversation's>                    sk=<conversation id>#S<hash> (turnwrite.go)
//
// A conversation ID carries the millisecond the conversation started and
// its shard (voiceops.NewProjectConversationID: conv_<13-digit unix
// ms><shard 0-3><20 random base62>), so its item's key follows from the ID
// alone and GetConversation is one GetItem. The conversations a busy
// project starts in one hour (UTC) spread over
// voiceops.ConversationShards partitions, so it writes several partitions,
// and its turns over one partition per conversation; a quiet project's
// stay in shard 0. IDs sort like start times, so a time range is, per
// hour, a range read of sort keys in each shard, merged: no scan, no
// filter. The hour index names the (hour, shard) partitions that hold
// conversations, so that a listing over a long, sparse range reads only
// those (one small Query first).
//
// Conversation items keep every field as a top-level attribute; the
// free-form maps (integration_attributes, state) are JSON strings. The
// interval fields (started_at, ended_at, end_reason, in_progress,
// environment, channel, variant_*, *_number, *_lang) can be read alone
// with a projection (ListConversationIntervals). Turns are separate items
// (entities and metadata as JSON), so listing conversations never reads
// them, and Turns is one Query; the marker tells a conversation without
// turns from no conversation, in that same Query. The conversation's
// turns_to says which turns are committed (turnwrite.go), so a list page
// reads its turns by key (pageturns.go). Turn items and markers written by
// the release before also carry the keys of the turns index (turnsrun.go),
// read for those conversations only.
//
// Expiry: every item carries the TTL attribute (unix seconds, rounded up)
// of the conversation's ExpiresAt when it was written, and conversation,
// turn and marker items also the exact time ("expires"); reads ignore
// expired items. Retention is meant to be set at creation: turns and the
// marker keep the ExpiresAt they were written with. An hour index item
// outlives the conversations it names by hourIndexSlack, so that a
// shortened retention never hides an older conversation of the same hour.
//
// The hour index entry of an (hour, shard) is written in the transaction
// of a conversation that starts there, but only by the first such
// conversation a Conversations store (a process) creates: every later one
// would contend for the same item, and DynamoDB cancels transactions that
// touch one item at once. The store remembers the entries it has written
// (hourCache); an entry can only be missing for an hour no conversation
// has been written in.
//
// Writes: CreateConversation is one TransactWriteItems (conversation, its
// first turn, the marker, its side item if any, and the hour index entry
// when this process has not written it yet); AddTurn is two conditional
// writes, the turn and then the conversation, which commits it
// (turnwrite.go); UpdateConversation one conditional write. A conversation
// with a shared ID also writes its shared ID's item (sharedid.go): in
// CreateConversation's transaction, else first, unless this store knows
// the stored conversation carries it already.
const (
	pkConversation    = "C#"
	pkConversationHrs = "H#"
	pkTurns           = "T#"
	skTurnsMarker     = "C"
	hourKeyLayout     = "2006010215"
	turnIndexFormat   = "%08d"
	hourIndexSlack    = 365 * 24 * time.Hour

	// Conversations listed per hour batch: hours are read in parallel, in
	// batches that double (up to maxHourBatch) while the page is not full.
	maxHourBatch = 16
)

// Attributes of conversations and turns (those of other records, such as
// attrID, attrAccountID, attrProjectID, attrEnv, attrState and attrVersion,
// are shared).
const (
	attrExpires            = "expires" // exact ExpiresAt, sortableTime
	attrChannel            = "channel"
	attrVariantID          = "variant_id"
	attrVariantName        = "variant_name"
	attrFromNumber         = "from_number"
	attrToNumber           = "to_number"
	attrASRLang            = "asr_lang"
	attrTTSLang            = "tts_lang"
	attrIntegrationAttrs   = "integration_attributes"
	attrStartedAt          = "started_at"
	attrEndedAt            = "ended_at"
	attrEndReason          = "end_reason"
	attrInProgress         = "in_progress"
	attrNumTurns           = "num_turns"
	attrNumSilences        = "num_silences"
	attrNumOOD             = "num_ood"
	attrServiceTimeNS      = "service_time_ns"
	attrHandoff            = "handoff"
	attrHandoffReason      = "handoff_reason"
	attrHandoffDestination = "handoff_destination"
	attrSharedID           = "shared_id"
	attrCustomMetrics      = "custom_metrics" // JSON [[name, value], ...]
	attrIdleDue            = "idle_due"       // sortableTime

	attrTurnIndex            = "index"
	attrUserInput            = "user_input"
	attrUserInputDTMF        = "user_input_dtmf"
	attrUserInputAt          = "user_input_datetime"
	attrAgentResponse        = "agent_response"
	attrAgentResponseAt      = "agent_response_datetime"
	attrLatencyNS            = "latency_ns"
	attrTranslatedUserInput  = "translated_user_input"
	attrEnglishAgentResponse = "english_agent_response"
	attrIntents              = "intents"
	attrEntities             = "entities"
	attrIsOOD                = "is_ood"
	attrIsSilence            = "is_silence"
	attrMetadata             = "metadata"
	attrModel                = "model" // a model-backed turn's metadata, JSON
	attrFunctionErrors       = "function_errors"
)

// intervalAttrs are the attributes ListConversationIntervals reads.
var intervalAttrs = []string{
	attrID, attrStartedAt, attrEndedAt, attrEndReason, attrInProgress, attrEnv, attrChannel,
	attrVariantID, attrVariantName, attrFromNumber, attrToNumber, attrASRLang, attrTTSLang,
	attrExpires, attrTTL, attrIdleDue,
}

// Conversations is the store of the conversations table.
type Conversations struct {
	store
	// hours remembers the hour index entries this store has written.
	hours *hourCache
	// sides remembers the side items (turnwrite.go) this store has
	// written or read: they are stored, their keys being their content.
	sides *hourCache
	// listed remembers what this store read or wrote last of each
	// conversation, by ID and version: its turns_to, for PageTurns
	// (pageturns.go) and the next write's commit (turnwrite.go), and its
	// shared ID item (sharedid.go).
	listed *convCache
	// legacy keeps the projects' legacy markers (hourindex.go).
	legacy *legacyCache
}

// NewConversations returns the store of the conversations table named
// table.
func NewConversations(db DB, table string) *Conversations {
	return &Conversations{store: newStore(db, table), hours: newHourCache(), sides: newHourCache(), listed: newConvCache(), legacy: newLegacyCache()}
}

var _ voiceops.ConversationStore = (*Conversations)(nil)

// --- keys -------------------------------------------------------------------------

func conversationPK(accountID, projectID string, hour time.Time, shard int) string {
	return fmt.Sprintf("%s%s#%s#%s#%d", pkConversation, accountID, projectID, hour.UTC().Format(hourKeyLayout), shard)
}

func turnsPK(accountID, projectID, conversationID string) string {
	return pkTurns + accountID + "#" + projectID + "#" + conversationID
}

func turnKey(accountID, projectID, conversationID string, index int) item {
	return key(turnsPK(accountID, projectID, conversationID), fmt.Sprintf(turnIndexFormat, index))
}

// conversationKey returns the key of a conversation's item; ok is false
// when id is not a conversation ID (then no such conversation exists).
func conversationKey(accountID, projectID, id string) (k item, ok bool) {
	started, shard, ok := voiceops.ParseConversationID(id)
	if !ok {
		return nil, false
	}
	return key(conversationPK(accountID, projectID, started, shard), id), true
}

// conversationKeyOf returns the key of c's item, refusing a conversation
// whose StartedAt is not the millisecond its ID carries (its item could
// not be found from the ID).
func conversationKeyOf(c voiceops.Conversation) (item, error) {
	started, _, ok := voiceops.ParseConversationID(c.ID)
	if !ok {
		return nil, fmt.Errorf("dynamo: %q is not a conversation ID", c.ID)
	}
	if c.StartedAt.UnixMilli() != started.UnixMilli() {
		return nil, fmt.Errorf("dynamo: conversation %s: StartedAt %s is not the millisecond its ID carries",
			c.ID, c.StartedAt.UTC().Format(time.RFC3339Nano))
	}
	k, _ := conversationKey(c.AccountID, c.ProjectID, c.ID)
	return k, nil
}

// --- encoding ---------------------------------------------------------------------

// setJSON stores v as a JSON string under name, or nothing when isNil (read
// back as nil).
func setJSON(it item, name string, v any, isNil bool) error {
	if isNil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("dynamo: encoding %s: %w", name, err)
	}
	it[name] = avS(string(b))
	return nil
}

// readJSON decodes the JSON string under name into v; absent leaves v alone.
func (r *reader) json(name string, v any) {
	if !r.present(name) {
		return
	}
	if err := json.Unmarshal([]byte(r.str(name)), v); err != nil {
		r.fail(name, "%v", err)
	}
}

// setExpiry stores the TTL attribute (unix seconds, rounded up so that
// DynamoDB never deletes the item early) and the exact time of exp, plus
// slack; nothing when exp is zero (never expires).
func setExpiry(it item, exp time.Time, slack time.Duration) {
	if exp.IsZero() {
		return
	}
	exp = exp.Add(slack)
	sec := exp.Unix()
	if exp.After(time.Unix(sec, 0)) {
		sec++
	}
	it[attrTTL] = avN(sec)
	if slack == 0 {
		it[attrExpires] = avS(sortKeyTime(exp))
	}
}

// expiredAt reports whether an item with an exact "expires" (else only the
// TTL attribute) is gone at now.
func expiredAt(it item, now time.Time) bool {
	if s, ok := it[attrExpires].(*types.AttributeValueMemberS); ok {
		if t, err := time.Parse(time.RFC3339Nano, s.Value); err == nil {
			return !now.Before(t)
		}
	}
	return Expired(it, now)
}

func (r *reader) optTimeValue(name string) time.Time {
	if p := r.optTime(name); p != nil {
		return *p
	}
	return time.Time{}
}

func setTime(it item, name string, t time.Time) {
	if !t.IsZero() {
		it[name] = avT(t)
	}
}

func encodeConversation(k item, c voiceops.Conversation) (item, error) {
	it := item{attrPK: k[attrPK], attrSK: k[attrSK]}
	it[attrID] = avS(c.ID)
	it[attrAccountID] = avS(c.AccountID)
	it[attrProjectID] = avS(c.ProjectID)
	setNonEmpty(it, attrEnv, string(c.Environment))
	setNonEmpty(it, attrChannel, string(c.Channel))
	setNonEmpty(it, attrVariantID, c.VariantID)
	setNonEmpty(it, attrVariantName, c.VariantName)
	setNonEmpty(it, attrFromNumber, c.FromNumber)
	setNonEmpty(it, attrToNumber, c.ToNumber)
	setNonEmpty(it, attrASRLang, c.ASRLang)
	setNonEmpty(it, attrTTSLang, c.TTSLang)
	if err := setJSON(it, attrIntegrationAttrs, c.IntegrationAttributes, c.IntegrationAttributes == nil); err != nil {
		return nil, err
	}
	if err := setJSON(it, attrState, c.State, c.State == nil); err != nil {
		return nil, err
	}
	it[attrStartedAt] = avT(c.StartedAt)
	setOpt(it, attrEndedAt, c.EndedAt, avT)
	setNonEmpty(it, attrEndReason, string(c.EndReason))
	it[attrInProgress] = avB(c.InProgress)
	it[attrNumTurns] = avN(int64(c.NumTurns))
	it[attrNumSilences] = avN(int64(c.NumSilences))
	it[attrNumOOD] = avN(int64(c.NumOOD))
	it[attrServiceTimeNS] = avN(int64(c.ServiceTime))
	it[attrHandoff] = avB(c.Handoff)
	setNonEmpty(it, attrHandoffReason, c.HandoffReason)
	setNonEmpty(it, attrHandoffDestination, c.HandoffDestination)
	setNonEmpty(it, attrSharedID, c.SharedID)
	if len(c.Metrics) > 0 {
		pairs := make([][2]string, len(c.Metrics))
		for i, m := range c.Metrics {
			pairs[i] = [2]string{m.Name, m.Value}
		}
		if err := setJSON(it, attrCustomMetrics, pairs, false); err != nil {
			return nil, err
		}
	}
	setExpiry(it, c.ExpiresAt, 0)
	it[attrVersion] = avN(c.Version)
	if !c.IdleDue.IsZero() {
		it[attrIdleDue] = avS(sortKeyTime(c.IdleDue))
		if c.InProgress {
			// The idle index is sparse: an ended conversation leaves it.
			// Its key is the idle due's bucket, so that a turn moving the
			// due within the bucket writes nothing to the index (keys
			// only); the open index's keys are not written any more.
			it[tables.IdleGSI.PartitionKey] = avS(idleShardKey(c.ID))
			it[tables.IdleGSI.SortKey] = avS(idleBucketKey(c.IdleDue) + "#" + c.ID)
		}
	}
	return it, nil
}

// openShards spreads the idle index (and the open index before it) over
// partitions: 16, so that a busy table's moves of idle keys stay far under
// a partition's write limit.
const openShards = 16

// idleBucket is the granularity of the idle index's sort key. A
// conversation's key moves (a delete and a put of a keys-only index item,
// about 2 WRU) when a turn moves its idle due into another bucket: at
// most once per idleBucket of the conversation's life, not on every turn.
// The sweep reads the conversations of the buckets up to the one of its
// `before` and checks the exact due, so it reads at most one bucket of
// conversations not yet due.
const idleBucket = 5 * time.Minute

// openShardKey is the open index partition of a conversation (read only).
func openShardKey(shard int) string { return fmt.Sprintf("O#%d", shard) }

// idleShardKey is the idle index partition of a conversation: a hash of
// its ID.
func idleShardKey(id string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return fmt.Sprintf("I#%d", h.Sum32()%openShards)
}

// idleBucketKey is the idle index sort key prefix of an idle due.
func idleBucketKey(due time.Time) string {
	return sortKeyTime(due.UTC().Truncate(idleBucket))
}

// dueReadersInFlight bounds the GetItems that check candidates' exact due.
const dueReadersInFlight = 16

// DueConversations reads the idle index: one Query per shard (in
// parallel) of the conversations whose idle due's bucket is at or before
// `before`'s, up to limit+dueSlack keys each; then each candidate's item
// (a GetItem projecting what the sweep needs), keeping those in progress
// and due at or before `before`; the merge keeps the earliest limit. The
// open index, which the idle index replaces, is read the same way for the
// conversations written before it (its items carry the whole
// conversation, so they need no second read). Only conversations in
// progress are in the indexes, so the sweep reads what is due, at most
// one bucket not yet due, and little else. The indexes are eventually
// consistent: the caller reads each conversation again before ending it.
func (s *Conversations) DueConversations(ctx context.Context, before time.Time, limit int) ([]voiceops.Conversation, error) {
	if limit <= 0 {
		return nil, nil
	}
	perShard := int32(min(limit+dueSlack, 1000))
	idle := make([][]item, openShards)
	open := make([][]item, openShards)
	errs := make([]error, 2*openShards)
	var wg sync.WaitGroup
	for shard := range openShards {
		wg.Go(func() {
			idle[shard], errs[shard] = s.queryLimit(ctx, "DueConversations", &dynamodb.QueryInput{
				TableName: &s.table, IndexName: aws.String(tables.IdleGSI.Name),
				KeyConditionExpression:   aws.String("#pk = :pk AND #sk < :before"),
				ExpressionAttributeNames: map[string]string{"#pk": tables.IdleGSI.PartitionKey, "#sk": tables.IdleGSI.SortKey},
				ExpressionAttributeValues: item{
					":pk": avS(fmt.Sprintf("I#%d", shard)),
					// "~" sorts after "#": every key of that bucket is in.
					":before": avS(idleBucketKey(before) + "~"),
				},
				Limit: aws.Int32(perShard),
			}, int(perShard))
		})
		wg.Go(func() {
			out, err := s.db.Query(ctx, &dynamodb.QueryInput{
				TableName: &s.table, IndexName: aws.String(tables.OpenGSI.Name),
				KeyConditionExpression:   aws.String("#pk = :pk AND #sk < :before"),
				ExpressionAttributeNames: map[string]string{"#pk": tables.OpenGSI.PartitionKey, "#sk": tables.OpenGSI.SortKey},
				ExpressionAttributeValues: item{
					":pk":     avS(openShardKey(shard)),
					":before": avS(sortKeyTime(before) + "~"),
				},
				Limit: aws.Int32(int32(min(limit, 1000))),
			})
			if err != nil {
				errs[openShards+shard] = wrap("DueConversations", err)
				return
			}
			open[shard] = out.Items
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	now := s.now()
	seen := map[string]bool{}
	var out []voiceops.Conversation
	keep := func(c voiceops.Conversation, expired bool) {
		if expired || seen[c.ID] || !c.InProgress || c.IdleDue.IsZero() || c.IdleDue.After(before) {
			return
		}
		seen[c.ID] = true
		out = append(out, c)
	}
	var keys []item
	for _, items := range idle {
		for _, it := range items {
			keys = append(keys, item{attrPK: it[attrPK], attrSK: it[attrSK]})
		}
	}
	due, err := s.dueItems(ctx, keys)
	if err != nil {
		return nil, err
	}
	for _, it := range due {
		c, err := decodeDue(it)
		if err != nil {
			return nil, wrap("DueConversations", err)
		}
		keep(c, expiredAt(it, now))
	}
	for _, items := range open {
		for _, it := range items {
			if _, moved := it[tables.IdleGSI.PartitionKey]; moved {
				continue // written since: read through the idle index
			}
			c, err := decodeConversation(it)
			if err != nil {
				return nil, wrap("DueConversations", err)
			}
			keep(c, expiredAt(it, now))
		}
	}
	slices.SortFunc(out, func(a, b voiceops.Conversation) int {
		if c := a.IdleDue.Compare(b.IdleDue); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out[:min(len(out), limit)], nil
}

// dueSlack is how many keys past limit a shard of the idle index is read:
// the last bucket may hold conversations not yet due.
const dueSlack = 100

// dueAttrs are the attributes DueConversations reads of a candidate.
var dueAttrs = []string{attrID, attrAccountID, attrProjectID, attrInProgress, attrIdleDue, attrExpires, attrTTL}

// dueItems reads the items of keys (missing ones left out), projecting
// dueAttrs, dueReadersInFlight at a time.
func (s *Conversations) dueItems(ctx context.Context, keys []item) ([]item, error) {
	names := map[string]string{}
	var proj []string
	for n, a := range dueAttrs {
		ph := fmt.Sprintf("#a%d", n)
		names[ph] = a
		proj = append(proj, ph)
	}
	projection := strings.Join(proj, ", ")
	out := make([]item, len(keys))
	errs := make([]error, len(keys))
	sem := make(chan struct{}, dueReadersInFlight)
	var wg sync.WaitGroup
	for i, k := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			got, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
				TableName: &s.table, Key: k, ProjectionExpression: &projection, ExpressionAttributeNames: names,
			})
			if err != nil {
				errs[i] = wrap("DueConversations", err)
				return
			}
			out[i] = got.Item
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(it item) bool { return len(it) == 0 }), nil
}

// decodeDue decodes an item read with the projection dueAttrs.
func decodeDue(it item) (voiceops.Conversation, error) {
	r := reader{it: it}
	c := voiceops.Conversation{
		ID: r.str(attrID), AccountID: r.str(attrAccountID), ProjectID: r.str(attrProjectID),
		InProgress: r.boolean(attrInProgress),
		ExpiresAt:  r.optTimeValue(attrExpires),
		IdleDue:    r.optTimeValue(attrIdleDue),
	}
	return c, r.err
}

func decodeConversation(it item) (voiceops.Conversation, error) {
	r := reader{it: it}
	c := voiceops.Conversation{
		ID: r.str(attrID), AccountID: r.str(attrAccountID), ProjectID: r.str(attrProjectID),
		Environment: voiceops.Environment(r.str(attrEnv)), Channel: voiceops.Channel(r.str(attrChannel)),
		VariantID: r.str(attrVariantID), VariantName: r.str(attrVariantName),
		FromNumber: r.str(attrFromNumber), ToNumber: r.str(attrToNumber),
		ASRLang: r.str(attrASRLang), TTSLang: r.str(attrTTSLang),
		StartedAt: r.time(attrStartedAt), EndedAt: r.optTime(attrEndedAt), EndReason: voiceops.EndReason(r.str(attrEndReason)),
		InProgress: r.boolean(attrInProgress),
		NumTurns:   int(r.num(attrNumTurns)), NumSilences: int(r.num(attrNumSilences)), NumOOD: int(r.num(attrNumOOD)),
		ServiceTime: time.Duration(r.num(attrServiceTimeNS)),
		Handoff:     r.boolean(attrHandoff), HandoffReason: r.str(attrHandoffReason), HandoffDestination: r.str(attrHandoffDestination),
		SharedID:  r.str(attrSharedID),
		ExpiresAt: r.optTimeValue(attrExpires),
		IdleDue:   r.optTimeValue(attrIdleDue),
		Version:   r.num(attrVersion),
	}
	r.json(attrIntegrationAttrs, &c.IntegrationAttributes)
	r.json(attrState, &c.State)
	var pairs [][2]string
	r.json(attrCustomMetrics, &pairs)
	for _, p := range pairs {
		c.Metrics = append(c.Metrics, voiceops.CustomMetric{Name: p[0], Value: p[1]})
	}
	return c, r.err
}

// decodeInterval decodes an item read with the projection intervalAttrs.
func decodeInterval(accountID, projectID string, it item) (voiceops.Conversation, error) {
	r := reader{it: it}
	c := voiceops.Conversation{
		ID: r.str(attrID), AccountID: accountID, ProjectID: projectID,
		Environment: voiceops.Environment(r.str(attrEnv)), Channel: voiceops.Channel(r.str(attrChannel)),
		VariantID: r.str(attrVariantID), VariantName: r.str(attrVariantName),
		FromNumber: r.str(attrFromNumber), ToNumber: r.str(attrToNumber),
		ASRLang: r.str(attrASRLang), TTSLang: r.str(attrTTSLang),
		StartedAt: r.time(attrStartedAt), EndedAt: r.optTime(attrEndedAt), EndReason: voiceops.EndReason(r.str(attrEndReason)),
		InProgress: r.boolean(attrInProgress),
		ExpiresAt:  r.optTimeValue(attrExpires),
		IdleDue:    r.optTimeValue(attrIdleDue),
	}
	return c, r.err
}

func encodeTurn(accountID, projectID, conversationID string, exp time.Time, t voiceops.Turn) (item, error) {
	if t.Index < 0 || t.Index > voiceops.MaxTurnIndex {
		return nil, fmt.Errorf("dynamo: turn index %d out of range", t.Index)
	}
	it := turnKey(accountID, projectID, conversationID, t.Index)
	it[attrTurnIndex] = avN(int64(t.Index))
	setNonEmpty(it, attrUserInput, t.UserInput)
	setNonEmpty(it, attrUserInputDTMF, t.UserInputDTMF)
	setTime(it, attrUserInputAt, t.UserInputAt)
	setNonEmpty(it, attrAgentResponse, t.AgentResponse)
	setTime(it, attrAgentResponseAt, t.AgentResponseAt)
	it[attrLatencyNS] = avN(int64(t.Latency))
	setNonEmpty(it, attrTranslatedUserInput, t.TranslatedUserInput)
	setNonEmpty(it, attrEnglishAgentResponse, t.EnglishAgentResponse)
	if t.Intents != nil {
		it[attrIntents] = avStrings(t.Intents)
	}
	if err := setJSON(it, attrEntities, t.Entities, t.Entities == nil); err != nil {
		return nil, err
	}
	it[attrIsOOD] = avB(t.IsOOD)
	it[attrIsSilence] = avB(t.IsSilence)
	if err := setJSON(it, attrMetadata, t.Metadata, t.Metadata == nil); err != nil {
		return nil, err
	}
	it[attrFunctionErrors] = avN(int64(t.FunctionErrors))
	if err := setJSON(it, attrModel, t.Model, t.Model == nil); err != nil {
		return nil, err
	}
	setExpiry(it, exp, 0)
	return it, nil
}

func decodeTurn(it item) (voiceops.Turn, error) {
	r := reader{it: it}
	t := voiceops.Turn{
		Index:     int(r.num(attrTurnIndex)),
		UserInput: r.str(attrUserInput), UserInputDTMF: r.str(attrUserInputDTMF), UserInputAt: r.optTimeValue(attrUserInputAt),
		AgentResponse: r.str(attrAgentResponse), AgentResponseAt: r.optTimeValue(attrAgentResponseAt),
		Latency:             time.Duration(r.num(attrLatencyNS)),
		TranslatedUserInput: r.str(attrTranslatedUserInput), EnglishAgentResponse: r.str(attrEnglishAgentResponse),
		Intents: readStrings[string](&r, attrIntents),
		IsOOD:   r.boolean(attrIsOOD), IsSilence: r.boolean(attrIsSilence),
		FunctionErrors: int(r.num(attrFunctionErrors)),
	}
	r.json(attrEntities, &t.Entities)
	r.json(attrMetadata, &t.Metadata)
	r.json(attrModel, &t.Model)
	return t, r.err
}

// --- writes -----------------------------------------------------------------------

// condLiveVersion holds for a conversation at the expected version that has
// not expired (DynamoDB deletes expired items late).
const condLiveVersion = "#version = :expect AND (attribute_not_exists(#expires) OR #expires > :now)"

func (s *Conversations) liveVersionValues(expect int64) (map[string]string, item) {
	return map[string]string{"#version": attrVersion, "#expires": attrExpires},
		item{":expect": avN(expect), ":now": avS(sortKeyTime(s.now()))}
}

// staleOrGone returns the error of a failed condLiveVersion, from the item
// as it was (ALL_OLD; nil when missing).
func (s *Conversations) staleOrGone(old item) error {
	if len(old) == 0 || expiredAt(old, s.now()) {
		return voiceops.ErrNotFound
	}
	return voiceops.ErrConflictingWrite
}

func checkNextVersion(c voiceops.Conversation, expectVersion int64) error {
	if c.Version != expectVersion+1 {
		return fmt.Errorf("dynamo: conversation %s: version %d must be expectVersion+1 = %d", c.ID, c.Version, expectVersion+1)
	}
	return nil
}

// CreateConversation is one TransactWriteItems: the conversation (if its ID
// is new, else ErrAlreadyExists), the turns marker, the first turn when
// there is one, and the hour index entry unless this store wrote it
// already.
func (s *Conversations) CreateConversation(ctx context.Context, c voiceops.Conversation, first *voiceops.Turn) error {
	k, err := conversationKeyOf(c)
	if err != nil {
		return err
	}
	conv, err := encodeConversation(k, c)
	if err != nil {
		return err
	}
	side := splitSide(conv)
	conv[attrTurnsTo] = avN(0)
	if first != nil {
		conv[attrTurnsTo] = avN(int64(first.Index) + 1)
	}
	_, shard, _ := voiceops.ParseConversationID(c.ID)
	marker := key(turnsPK(c.AccountID, c.ProjectID, c.ID), skTurnsMarker)
	marker[attrID] = avS(c.ID)
	setExpiry(marker, c.ExpiresAt, 0)
	table := &s.table
	items := []types.TransactWriteItem{
		{Put: &types.Put{TableName: table, Item: conv, ConditionExpression: aws.String(condNew), ExpressionAttributeNames: namePK,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}, // see applied
		{Put: &types.Put{TableName: table, Item: marker}},
	}
	if side != nil {
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: table, Item: side}})
	}
	if first != nil {
		t, err := encodeTurn(c.AccountID, c.ProjectID, c.ID, c.ExpiresAt, *first)
		if err != nil {
			return err
		}
		t[attrBase], t[attrWritten] = avN(0), avS(sortKeyTime(s.now()))
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: table, Item: t}})
	}
	if put, ok := s.sharedIDPut(c); ok {
		items = append(items, put) // sharedid.go
	}
	hourPK, hourSK := hourIndexPK(c.AccountID, c.ProjectID), hourIndexSK(c.StartedAt, shard)
	hourKey := hourPK + "/" + hourSK
	indexed := s.hours.has(hourKey)
	if !indexed {
		hour := key(hourPK, hourSK)
		setExpiry(hour, c.ExpiresAt, hourIndexSlack)
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: table, Item: hour}})
	}
	o, err := s.transact(ctx, "CreateConversation", items)
	if err != nil {
		return err
	}
	if !o.ok() {
		return voiceops.ErrAlreadyExists
	}
	if !indexed {
		s.hours.add(hourKey)
	}
	if side != nil {
		s.sides.add(sideCacheKey(side))
	}
	return nil
}

// hourCache remembers the hour index entries a store has written. A nil
// cache remembers nothing (every create writes its entry).
type hourCache struct {
	mu   sync.Mutex
	seen map[string]bool
}

// hourCacheMax bounds the entries remembered; past it the cache starts
// over (an entry written again is harmless).
const hourCacheMax = 4096

func newHourCache() *hourCache { return &hourCache{seen: map[string]bool{}} }

func (h *hourCache) has(k string) bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[k]
}

func (h *hourCache) add(k string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.seen) >= hourCacheMax {
		clear(h.seen)
	}
	h.seen[k] = true
}

// GetConversation is one GetItem.
func (s *Conversations) GetConversation(ctx context.Context, accountID, projectID, conversationID string) (voiceops.Conversation, error) {
	k, ok := conversationKey(accountID, projectID, conversationID)
	if !ok {
		return voiceops.Conversation{}, voiceops.ErrNotFound
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return voiceops.Conversation{}, wrap("GetConversation", err)
	}
	if len(out.Item) == 0 || expiredAt(out.Item, s.now()) {
		return voiceops.Conversation{}, voiceops.ErrNotFound
	}
	it, err := s.readSide(ctx, "GetConversation", out.Item, true)
	if err != nil {
		return voiceops.Conversation{}, err
	}
	c, err := decodeConversation(it)
	if err != nil {
		return voiceops.Conversation{}, wrap("GetConversation", err)
	}
	s.listed.put(c.ID, c.Version, seenOf(it)) // for the next write
	return c, nil
}

// AddTurn is two conditional writes (turnwrite.go): the turn's PutItem,
// conditional on its index being free, then the conversation's UpdateItem,
// conditional on its stored version being expectVersion (and on it being
// live), which commits the turn. Before them, the side item of state and
// attributes when they changed, and the shared ID's item when the
// conversation gets a shared ID (the turn that hands off; sharedid.go).
func (s *Conversations) AddTurn(ctx context.Context, c voiceops.Conversation, t voiceops.Turn, expectVersion int64) error {
	k, err := conversationKeyOf(c)
	if err != nil {
		return err
	}
	if err := checkNextVersion(c, expectVersion); err != nil {
		return err
	}
	conv, err := encodeConversation(k, c)
	if err != nil {
		return err
	}
	side := splitSide(conv)
	turn, err := encodeTurn(c.AccountID, c.ProjectID, c.ID, c.ExpiresAt, t)
	if err != nil {
		return err
	}
	turn[attrBase], turn[attrWritten] = avN(expectVersion), avS(sortKeyTime(s.now()))
	if err := s.putSide(ctx, "AddTurn", side); err != nil {
		return err
	}
	if err := s.putSharedID(ctx, "AddTurn", c, conv, expectVersion); err != nil {
		return err
	}
	if err := s.putTurn(ctx, k, turn, t.Index, expectVersion); err != nil {
		return err
	}
	err = s.commit(ctx, "AddTurn", conv, expectVersion, t.Index)
	if errors.Is(err, voiceops.ErrConflictingWrite) || errors.Is(err, voiceops.ErrNotFound) || errors.Is(err, voiceops.ErrAlreadyExists) {
		s.dropTurn(ctx, turn)
	}
	return err
}

// dropTurn deletes a turn this call wrote and could not commit (best
// effort: readers never show it, and the next writer at its index would
// replace it; deleting it keeps a gap below a later turns_to from holding
// it). Conditional on the item being the one written.
func (s *Conversations) dropTurn(ctx context.Context, turn item) {
	_, _ = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &s.table, Key: item{attrPK: turn[attrPK], attrSK: turn[attrSK]},
		ConditionExpression:       aws.String("#base = :base AND #written = :written"),
		ExpressionAttributeNames:  map[string]string{"#base": attrBase, "#written": attrWritten},
		ExpressionAttributeValues: item{":base": turn[attrBase], ":written": turn[attrWritten]},
	})
}

// UpdateConversation is one UpdateItem, conditional on the stored version
// being expectVersion (and on the conversation being live), after the side
// item of state and attributes when they changed and the shared ID's item
// when the conversation has one that the stored version is not known to
// carry (sharedid.go).
func (s *Conversations) UpdateConversation(ctx context.Context, c voiceops.Conversation, expectVersion int64) error {
	k, err := conversationKeyOf(c)
	if err != nil {
		return err
	}
	if err := checkNextVersion(c, expectVersion); err != nil {
		return err
	}
	conv, err := encodeConversation(k, c)
	if err != nil {
		return err
	}
	side := splitSide(conv)
	if err := s.putSide(ctx, "UpdateConversation", side); err != nil {
		return err
	}
	if err := s.putSharedID(ctx, "UpdateConversation", c, conv, expectVersion); err != nil {
		return err
	}
	return s.commit(ctx, "UpdateConversation", conv, expectVersion, -1)
}

// putSharedID writes c's shared ID item, if c has one and the stored
// conversation, at version expect, is not known to carry it already (see
// sharedid.go). Written before the conversation: an item whose
// conversation write fails names a conversation without that shared ID,
// which ConversationBySharedID ignores. conv is c's item.
func (s *Conversations) putSharedID(ctx context.Context, op string, c voiceops.Conversation, conv item, expect int64) error {
	put, ok := s.sharedIDPut(c)
	if !ok {
		return nil
	}
	if seen, ok := s.listed.get(c.ID, expect); ok && seen.shared == sharedIDContent(conv) {
		return nil
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: put.Put.Item}); err != nil {
		return wrap(op, err)
	}
	return nil
}

// --- reads ------------------------------------------------------------------------

// Turns is one Query (more only past 1 MB of turns): the conversation's
// turns partition, whose marker says the conversation exists; and, in
// parallel, a GetItem of the conversation's turns_to, past which turns are
// not committed (turnwrite.go).
func (s *Conversations) Turns(ctx context.Context, accountID, projectID, conversationID string) ([]voiceops.Turn, error) {
	k, ok := conversationKey(accountID, projectID, conversationID)
	if !ok {
		return nil, voiceops.ErrNotFound
	}
	var conv *dynamodb.GetItemOutput
	var convErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		conv, convErr = s.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: &s.table, Key: k, ConsistentRead: aws.Bool(true),
			ProjectionExpression: aws.String("#tt"), ExpressionAttributeNames: map[string]string{"#tt": attrTurnsTo},
		})
	})
	turns, err := s.allTurns(ctx, accountID, projectID, conversationID)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if convErr != nil {
		return nil, wrap("Turns", convErr)
	}
	if to := numOf(conv.Item, attrTurnsTo); to >= 0 {
		turns = slices.DeleteFunc(turns, func(t voiceops.Turn) bool { return int64(t.Index) >= to })
	}
	return turns, nil
}

// allTurns reads every turn item of a conversation, committed or not.
func (s *Conversations) allTurns(ctx context.Context, accountID, projectID, conversationID string) ([]voiceops.Turn, error) {
	in := &dynamodb.QueryInput{
		TableName:                 &s.table,
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  namePK,
		ExpressionAttributeValues: item{":pk": avS(turnsPK(accountID, projectID, conversationID))},
		ConsistentRead:            aws.Bool(true),
	}
	now := s.now()
	turns := []voiceops.Turn{}
	found := false
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, wrap("Turns", err)
		}
		for _, it := range out.Items {
			if expiredAt(it, now) {
				continue
			}
			if sk, _ := it[attrSK].(*types.AttributeValueMemberS); sk != nil && sk.Value == skTurnsMarker {
				found = true
				continue
			}
			t, err := decodeTurn(it)
			if err != nil {
				return nil, wrap("Turns", err)
			}
			turns = append(turns, t)
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	if !found {
		return nil, voiceops.ErrNotFound
	}
	return turns, nil
}

// ListConversations returns up to limit conversations of a project that
// started in [from, to) (at the millisecond their IDs carry), after the
// conversation ID after ("" for the first page), in ID order: ascending by
// start time, then ID. Turns are not included. Reads are eventually
// consistent: a conversation created in the last moment may be missing.
//
// Cost: one Query of the hour index (none when the range is within one
// hour; more while the project's old entries matter, hourindex.go), then,
// per hour with conversations in the range, one Query per shard holding
// some (all 4 within one hour; more past 1 MB); hours are read in parallel batches that double while the page is
// not full, so a dense range reads little more than the page.
func (s *Conversations) ListConversations(ctx context.Context, accountID, projectID string, from, to time.Time, after string, limit int) ([]voiceops.Conversation, error) {
	return s.listConversations(ctx, "ListConversations", accountID, projectID, from, to, after, limit, false)
}

// ListConversationIntervals is ListConversations returning only ID,
// AccountID, ProjectID, Environment, Channel, VariantID, VariantName,
// FromNumber, ToNumber, ASRLang, TTSLang, StartedAt, EndedAt, EndReason,
// InProgress, ExpiresAt and IdleDue (the others are zero), read with a projection:
// the read of the concurrency sweep and of offsets skipped over.
func (s *Conversations) ListConversationIntervals(ctx context.Context, accountID, projectID string, from, to time.Time, after string, limit int) ([]voiceops.Conversation, error) {
	return s.listConversations(ctx, "ListConversationIntervals", accountID, projectID, from, to, after, limit, true)
}

// idAt is the smallest sort key of the conversations that started at the
// unix millisecond ms or later; no ID equals it.
func idAt(ms int64) string { return fmt.Sprintf("%s%013d", voiceops.PrefixConversation, ms) }

// ceilMilli returns the first unix millisecond at or after t, within the
// range conversation IDs can carry.
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return min(max(ms, 0), 9_999_999_999_999)
}

// hourShards is an hour with conversations and the shards that hold them.
type hourShards struct {
	hour   time.Time
	shards []int
}

func (s *Conversations) listConversations(ctx context.Context, op, accountID, projectID string, from, to time.Time, after string, limit int, intervals bool) ([]voiceops.Conversation, error) {
	if after != "" && !voiceops.ValidConversationID(after) {
		return nil, voiceops.ErrInvalidCursor
	}
	if limit <= 0 {
		return nil, nil
	}
	loMS, hiMS := ceilMilli(from), ceilMilli(to)
	lo, hi := idAt(loMS), idAt(hiMS) // sort keys in [lo, hi]: started in [from, to)
	if after >= lo {
		lo = after // BETWEEN is inclusive: the readers drop after itself
		started, _, _ := voiceops.ParseConversationID(after)
		loMS = started.UnixMilli()
	}
	if lo >= hi {
		return nil, nil
	}
	first := time.UnixMilli(loMS).UTC().Truncate(time.Hour)
	last := time.UnixMilli(hiMS - 1).UTC().Truncate(time.Hour)
	hours, err := s.conversationHours(ctx, op, accountID, projectID, first, last)
	if err != nil {
		return nil, err
	}
	r := rangeRead{s: s, op: op, accountID: accountID, projectID: projectID, lo: lo, hi: hi, after: after, intervals: intervals, sides: &sideSet{m: map[string]item{}}}
	var out []voiceops.Conversation
	for i, batch := 0, 1; i < len(hours) && len(out) < limit; i, batch = i+batch, min(2*batch, maxHourBatch) {
		part := hours[i:min(i+batch, len(hours))]
		want := limit - len(out)
		results := make([][]item, len(part))
		errs := make([]error, len(part))
		var wg sync.WaitGroup
		for j, h := range part {
			wg.Go(func() { results[j], errs[j] = r.hour(ctx, h, want) })
		}
		wg.Wait()
		for j := range part {
			if errs[j] != nil {
				return nil, errs[j]
			}
			for _, it := range results[j] {
				if len(out) == limit {
					break
				}
				var c voiceops.Conversation
				if intervals {
					c, err = decodeInterval(accountID, projectID, it)
				} else {
					if it, err = r.withSide(ctx, it); err != nil {
						return nil, err
					}
					c, err = decodeConversation(it)
					s.listed.put(c.ID, c.Version, seenOf(it))
				}
				if err != nil {
					return nil, wrap(op, err)
				}
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// rangeRead reads the conversations with sort keys in [lo, hi], other than
// after, from the shards of one hour.
type rangeRead struct {
	s                    *Conversations
	op                   string
	accountID, projectID string
	lo, hi, after        string
	intervals            bool
	// sides holds the side items read with the conversations, by sort key.
	sides *sideSet
}

// sideSet is the side items a listing read, by sort key.
type sideSet struct {
	mu sync.Mutex
	m  map[string]item
}

// withSide returns conv with the content of its side item: the one read
// next to it, else (cut off by a page's end) one more GetItem.
func (r rangeRead) withSide(ctx context.Context, conv item) (item, error) {
	k, ok := sideKeyOf(conv)
	if !ok {
		return conv, nil
	}
	sk, _ := k[attrSK].(*types.AttributeValueMemberS)
	r.sides.mu.Lock()
	side, ok := r.sides.m[sk.Value]
	r.sides.mu.Unlock()
	if ok {
		return withSide(conv, side), nil
	}
	return r.s.readSide(ctx, r.op, conv, false)
}

// shardReader is the state of the read of one shard of an hour: the items
// read and not yet merged, and where the next page starts.
type shardReader struct {
	in   *dynamodb.QueryInput
	buf  []item
	done bool
}

// hour returns up to limit items of hour h in sort-key order: each shard
// is read in pages, and its items merged with the others'. The first pages
// ask for a little more than a shard's share of limit (busy projects draw
// their shards at random), shard 0's for the whole of it; a shard is read
// further only when the merge needs it.
func (r rangeRead) hour(ctx context.Context, h hourShards, limit int) ([]item, error) {
	readers := make([]*shardReader, len(h.shards))
	for i, shard := range h.shards {
		in := &dynamodb.QueryInput{
			TableName:                &r.s.table,
			KeyConditionExpression:   aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
			ExpressionAttributeNames: map[string]string{"#pk": attrPK, "#sk": attrSK},
			ExpressionAttributeValues: item{
				":pk": avS(conversationPK(r.accountID, r.projectID, h.hour, shard)),
				":lo": avS(r.lo), ":hi": avS(r.hi),
			},
		}
		if r.intervals {
			var proj []string
			for n, a := range intervalAttrs {
				ph := fmt.Sprintf("#a%d", n)
				in.ExpressionAttributeNames[ph] = a
				proj = append(proj, ph)
			}
			in.ProjectionExpression = aws.String(strings.Join(proj, ", "))
		}
		readers[i] = &shardReader{in: in}
	}
	share := min(limit+1, limit/len(readers)+limit/(4*len(readers))+2)
	errs := make([]error, len(readers))
	var wg sync.WaitGroup
	for i, sr := range readers {
		n := share
		if h.shards[i] == 0 {
			// A quiet project's hour is all in shard 0, and a busy one's
			// has more there (each process starts an hour there):
			// voiceops.NewProjectConversationID.
			n = limit + 1
		}
		wg.Go(func() { errs[i] = r.fetch(ctx, sr, n) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	var out []item
	for len(out) < limit {
		next := -1
		for i, sr := range readers {
			for len(sr.buf) == 0 && !sr.done {
				if err := r.fetch(ctx, sr, limit-len(out)+1); err != nil {
					return nil, err
				}
			}
			if len(sr.buf) > 0 && (next < 0 || idOf(sr.buf[0]) < idOf(readers[next].buf[0])) {
				next = i
			}
		}
		if next < 0 {
			break
		}
		out = append(out, readers[next].buf[0])
		readers[next].buf = readers[next].buf[1:]
	}
	return out, nil
}

// fetch reads the next page of a shard, of at most n items, keeping the
// live ones other than after.
func (r rangeRead) fetch(ctx context.Context, sr *shardReader, n int) error {
	sr.in.Limit = aws.Int32(int32(min(max(n, 1), 1000)))
	out, err := r.s.db.Query(ctx, sr.in)
	if err != nil {
		return wrap(r.op, err)
	}
	now := r.s.now()
	for _, it := range out.Items {
		if expiredAt(it, now) || idOf(it) == r.after {
			continue
		}
		if isSideItem(it) {
			if !r.intervals {
				sk, _ := it[attrSK].(*types.AttributeValueMemberS)
				r.sides.mu.Lock()
				r.sides.m[sk.Value] = it
				r.sides.mu.Unlock()
			}
			continue
		}
		sr.buf = append(sr.buf, it)
	}
	if len(out.LastEvaluatedKey) == 0 {
		sr.done = true
	} else {
		sr.in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return nil
}

func idOf(it item) string { return strOf(it, attrID) }
