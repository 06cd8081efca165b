package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// conversationTables is newTables, also deleting the conversations table
// at the end (unless newTables's cleanup did).
func conversationTables(t *testing.T, c *dynamodb.Client) dynamo.TableNames {
	t.Helper()
	return newTables(t, c)
}

func TestConversationsContract(t *testing.T) {
	c := client(t)
	db := awstest.Serial(c)
	storetest.RunConversations(t, func(t *testing.T) voiceops.Stores {
		return dynamo.NewStores(db, conversationTables(t, c))
	})
}

// lister is the range listing both stores add to ConversationStore.
type lister interface {
	ListConversations(ctx context.Context, accountID, projectID string, from, to time.Time, after string, limit int) ([]voiceops.Conversation, error)
	ListConversationIntervals(ctx context.Context, accountID, projectID string, from, to time.Time, after string, limit int) ([]voiceops.Conversation, error)
}

var _ lister = (*dynamo.Conversations)(nil)

func testConversation(started time.Time) voiceops.Conversation {
	return voiceops.Conversation{
		ID: voiceops.NewConversationID(started), AccountID: "acct_a", ProjectID: "proj_a", Environment: voiceops.EnvLive,
		Channel: voiceops.ChannelWebchat, StartedAt: started, InProgress: true,
		State:     map[string]any{"n": 1.0},
		ExpiresAt: started.Add(90*24*time.Hour + 500*time.Millisecond), Version: 1,
	}
}

// TestConversationCallBudget checks the calls of each method: a chat turn
// is one read (GetConversation) and one write (AddTurn).
func TestConversationCallBudget(t *testing.T) {
	c := client(t)
	db := &countingDB{DB: c}
	table := conversationTables(t, c).Conversations
	s := dynamo.NewConversations(db, table)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	// Three hours back, so that the first listing finds the hour index
	// settled (hourindex.go).
	conv := testConversation(now.Add(-3 * time.Hour))
	bare := testConversation(now.Add(-3*time.Hour + time.Second))
	turn := voiceops.Turn{Index: 0, AgentResponse: "Hello", AgentResponseAt: now}
	second := withVersion(conv, 2)

	listWeek := func() error {
		got, err := s.ListConversations(ctx, "acct_a", "proj_a", now.Add(-7*24*time.Hour), now.Add(time.Minute), "", 10)
		if err == nil && len(got) != 2 {
			err = fmt.Errorf("%d conversations, want 2", len(got))
		}
		return err
	}
	steps := []struct {
		name string
		call func() error
		want map[string]int
	}{
		{"CreateConversation with its first turn", func() error { return s.CreateConversation(ctx, conv, &turn) }, map[string]int{"TransactWriteItems": 1}},
		{"CreateConversation without a turn", func() error { return s.CreateConversation(ctx, bare, nil) }, map[string]int{"TransactWriteItems": 1}},
		{"GetConversation", func() error { _, err := s.GetConversation(ctx, conv.AccountID, conv.ProjectID, conv.ID); return err }, map[string]int{"GetItem": 1}},
		// The turn, then the conversation (its commit): no transaction.
		{"AddTurn", func() error { return s.AddTurn(ctx, second, voiceops.Turn{Index: 1}, 1) }, map[string]int{"PutItem": 2}},
		{"AddTurn at a stale version", func() error {
			if err := s.AddTurn(ctx, second, voiceops.Turn{Index: 2}, 1); !errors.Is(err, voiceops.ErrConflictingWrite) {
				return fmt.Errorf("want ErrConflictingWrite, got %v", err)
			}
			return nil
			// The turn, the refused commit, the turn deleted again.
		}, map[string]int{"PutItem": 2, "DeleteItem": 1}},
		// A PutItem of the conversation when the store knows its turns_to
		// at that version (it wrote or read it), else an UpdateItem.
		{"UpdateConversation", func() error { return s.UpdateConversation(ctx, withVersion(second, 3), 2) }, map[string]int{"PutItem": 1}},
		{"UpdateConversation by another process", func() error {
			other := dynamo.NewConversations(db, table)
			return other.UpdateConversation(ctx, withVersion(second, 4), 3)
		}, map[string]int{"UpdateItem": 1}},
		// The turns, and the conversation's turns_to (in parallel).
		{"Turns", func() error { _, err := s.Turns(ctx, conv.AccountID, conv.ProjectID, conv.ID); return err }, map[string]int{"Query": 1, "GetItem": 1}},
		{"GetConversation of a malformed ID", func() error {
			if _, err := s.GetConversation(ctx, "acct_a", "proj_a", "conv_nope"); !errors.Is(err, voiceops.ErrNotFound) {
				return fmt.Errorf("want ErrNotFound, got %v", err)
			}
			return nil
		}, map[string]int{}},
		// A week with conversations in one hour, the project's first
		// listing: its legacy marker (none), the hour index, the old
		// layout's partitions (none there), the marker written, then the
		// shards of that hour that hold some.
		{"ListConversations over a week", listWeek, map[string]int{"GetItem": 1, "Query": 1 + voiceops.ConversationShards + shardsOf(conv, bare), "PutItem": 1}},
		// Then: the hour index, and the shards.
		{"ListConversations over a week again", listWeek, map[string]int{"Query": 1 + shardsOf(conv, bare)}},
	}
	for _, st := range steps {
		db.take()
		if err := st.call(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := db.take(); !maps.Equal(got, st.want) && !(len(got) == 0 && len(st.want) == 0) {
			t.Errorf("%s: calls %v, want %v", st.name, got, st.want)
		}
	}
}

func withVersion(c voiceops.Conversation, version int64) voiceops.Conversation {
	c.Version = version
	c.NumTurns = int(version)
	return c
}

func shardsOf(cs ...voiceops.Conversation) int {
	seen := map[int]bool{}
	for _, c := range cs {
		_, shard, _ := voiceops.ParseConversationID(c.ID)
		seen[shard] = true
	}
	return len(seen)
}

// TestConversationLayout reads the items as stored: keys, the TTL in unix
// seconds, top-level interval attributes, JSON maps.
func TestConversationLayout(t *testing.T) {
	c := client(t)
	names := conversationTables(t, c)
	s := dynamo.NewConversations(c, names.Conversations)
	ctx := t.Context()
	started := time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.UTC)
	conv := testConversation(started)
	conv.FromNumber, conv.ToNumber, conv.VariantID, conv.ASRLang = "+441632960001", "+441632960999", "var_1", "en-GB"
	conv.IntegrationAttributes = map[string]any{"nested": map[string]any{"ok": true}}
	if err := s.CreateConversation(ctx, conv, &voiceops.Turn{Index: 0, UserInput: "hi"}); err != nil {
		t.Fatal(err)
	}
	_, shard, _ := voiceops.ParseConversationID(conv.ID)
	get := func(pk, sk string) map[string]types.AttributeValue {
		t.Helper()
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(names.Conversations), Key: map[string]types.AttributeValue{
			tables.PK: &types.AttributeValueMemberS{Value: pk}, tables.SK: &types.AttributeValueMemberS{Value: sk},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Item) == 0 {
			t.Fatalf("no item pk=%s sk=%s", pk, sk)
		}
		return out.Item
	}
	str := func(it map[string]types.AttributeValue, name string) string {
		t.Helper()
		v, ok := it[name].(*types.AttributeValueMemberS)
		if !ok {
			t.Fatalf("attribute %s: %#v, want a string", name, it[name])
		}
		return v.Value
	}
	num := func(it map[string]types.AttributeValue, name string) int64 {
		t.Helper()
		v, ok := it[name].(*types.AttributeValueMemberN)
		if !ok {
			t.Fatalf("attribute %s: %#v, want a number", name, it[name])
		}
		n, err := strconv.ParseInt(v.Value, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// ExpiresAt is half a second past a whole second: the TTL rounds up.
	ttl := conv.ExpiresAt.Unix() + 1

	item := get(fmt.Sprintf("C#acct_a#proj_a#2025031409#%d", shard), conv.ID)
	if got := num(item, tables.TTL); got != ttl {
		t.Errorf("conversation TTL %d, want %d", got, ttl)
	}
	for name, want := range map[string]string{
		"started_at": "2025-03-14T09:26:53.589Z", "environment": "live", "channel": "webchat", "from_number": "+441632960001",
		"to_number": "+441632960999", "variant_id": "var_1", "asr_lang": "en-GB",
		"integration_attributes": `{"nested":{"ok":true}}`, "state": `{"n":1}`,
	} {
		if got := str(item, name); got != want {
			t.Errorf("conversation attribute %s = %q, want %q", name, got, want)
		}
	}
	if _, ok := item["in_progress"].(*types.AttributeValueMemberBOOL); !ok {
		t.Errorf("in_progress: %#v, want a boolean", item["in_progress"])
	}

	turn := get("T#acct_a#proj_a#"+conv.ID, "00000000")
	if got := num(turn, tables.TTL); got != ttl {
		t.Errorf("turn TTL %d, want %d", got, ttl)
	}
	if got := str(turn, "user_input"); got != "hi" {
		t.Errorf("turn user_input %q", got)
	}
	marker := get("T#acct_a#proj_a#"+conv.ID, "C")
	if got := num(marker, tables.TTL); got != ttl {
		t.Errorf("marker TTL %d, want %d", got, ttl)
	}
	hour := get("H#acct_a#proj_a", fmt.Sprintf("2025031409#%d", shard))
	if got, least := num(hour, tables.TTL), ttl+int64(300*24*3600); got < least {
		t.Errorf("hour index TTL %d, want at least %d (it outlives its conversations)", got, least)
	}
}

// TestConversationIDs checks the ID format.
func TestConversationIDs(t *testing.T) {
	started := time.Date(2025, 3, 14, 9, 26, 53, 589_700_000, time.UTC)
	seen := map[int]bool{}
	for range 200 {
		id := voiceops.NewConversationID(started)
		if len(id) != len("conv_")+13+1+20 || !strings.HasPrefix(id, "conv_1741944413589") {
			t.Fatalf("NewConversationID = %q", id)
		}
		got, shard, ok := voiceops.ParseConversationID(id)
		if !ok || !got.Equal(started.Truncate(time.Millisecond)) || shard < 0 || shard >= voiceops.ConversationShards {
			t.Fatalf("ParseConversationID(%q) = %v, %d, %v", id, got, shard, ok)
		}
		seen[shard] = true
	}
	if len(seen) != voiceops.WriteShards {
		t.Errorf("200 IDs used %d shards, want %d", len(seen), voiceops.WriteShards)
	}
	later := voiceops.NewConversationID(started.Add(time.Millisecond))
	if earlier := voiceops.NewConversationID(started); earlier >= later {
		t.Errorf("IDs do not sort like start times: %q >= %q", earlier, later)
	}
}

func TestConversationSDKErrorsAreInternal(t *testing.T) {
	throttled := &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException", Message: "Dynamo says: throttled"}
	s := dynamo.NewConversations(&failingDB{err: func(int) error { return throttled }}, "x-conversations")
	now := time.Now()
	conv := testConversation(now)
	calls := map[string]func(context.Context) error{
		"CreateConversation": func(ctx context.Context) error { return s.CreateConversation(ctx, conv, nil) },
		"GetConversation": func(ctx context.Context) error {
			_, err := s.GetConversation(ctx, "acct_a", "proj_a", conv.ID)
			return err
		},
		"AddTurn": func(ctx context.Context) error {
			return s.AddTurn(ctx, withVersion(conv, 2), voiceops.Turn{Index: 1}, 1)
		},
		"UpdateConversation": func(ctx context.Context) error { return s.UpdateConversation(ctx, withVersion(conv, 2), 1) },
		"Turns":              func(ctx context.Context) error { _, err := s.Turns(ctx, "acct_a", "proj_a", conv.ID); return err },
		"ListConversations": func(ctx context.Context) error {
			_, err := s.ListConversations(ctx, "acct_a", "proj_a", now.Add(-time.Hour), now, "", 5)
			return err
		},
		"ListConversationIntervals": func(ctx context.Context) error {
			_, err := s.ListConversationIntervals(ctx, "acct_a", "proj_a", now.Add(-time.Hour), now, "", 5)
			return err
		},
	}
	for name, call := range calls {
		err := call(t.Context())
		var de *voiceops.Error
		if err == nil || errors.As(err, &de) || voiceops.KindOf(err) != voiceops.KindInternal || !errors.Is(err, throttled) {
			t.Errorf("%s: got %v, want an internal error wrapping the SDK error", name, err)
		}
	}
}

// itemsDB records how many items each transaction writes.
type itemsDB struct {
	dynamo.DB
	mu    sync.Mutex
	sizes []int
}

func (d *itemsDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	d.mu.Lock()
	d.sizes = append(d.sizes, len(in.TransactItems))
	d.mu.Unlock()
	return d.DB.TransactWriteItems(ctx, in, o...)
}

// TestHourIndexWrittenOnce checks that a store writes the hour index entry
// of an (hour, shard) with its first conversation only, so that the
// conversations of a busy hour do not all contend for that one item, and
// that listing still finds every conversation.
func TestHourIndexWrittenOnce(t *testing.T) {
	c := client(t)
	names := conversationTables(t, c)
	db := &itemsDB{DB: c}
	s := dynamo.NewConversations(db, names.Conversations)
	started := time.Now().UTC().Truncate(time.Hour).Add(7 * time.Minute)
	conv := func(offset time.Duration) voiceops.Conversation {
		cv := testConversation(started.Add(offset))
		cv.ID = fmt.Sprintf("conv_%013d2%s", cv.StartedAt.UnixMilli(), voiceops.RandomBase62(20))
		return cv
	}
	a, b, other := conv(0), conv(time.Second), conv(2*time.Second)
	for _, cv := range []voiceops.Conversation{a, b} {
		if err := s.CreateConversation(t.Context(), cv, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Another process (store) writes the entry again with its first one.
	if err := dynamo.NewConversations(db, names.Conversations).CreateConversation(t.Context(), other, nil); err != nil {
		t.Fatal(err)
	}
	if want := []int{3, 2, 3}; !slices.Equal(db.sizes, want) {
		t.Errorf("transaction sizes %v, want %v (conversation, marker, and the hour entry when new)", db.sizes, want)
	}
	got, err := s.ListConversations(t.Context(), "acct_a", "proj_a", started.Add(-time.Hour), started.Add(time.Hour), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, cv := range got {
		ids = append(ids, cv.ID)
	}
	if want := []string{a.ID, b.ID, other.ID}; !slices.Equal(ids, want) {
		t.Errorf("ListConversations: %v, want %v", ids, want)
	}
}
