package dynamo_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/conversation"
	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/tables"
	"github.com/voiceops/opsapi/shared/testsupport/capacity"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestTurnAndPageCapacity is the conversation half of the capacity test:
// what a chat turn writes (small, and with state and attributes at their
// 64 KiB limits) and what a list page of 30 conversations reads. Index
// writes are not seen by the recording client, so they are added: the
// idle index projects only keys and its key moves only when a turn moves
// the idle due into another 5-minute bucket (a delete and a put of a
// keys-only item, 2 WRU; not in this turn, whose due stays in its
// bucket); the turns index holds a copy of the turn item. Issue 23's
// target of 4 WRU is not met yet: the table's write is still a
// transaction putting the whole conversation (the bounds below hold
// today's figures, so that they can only go down).
func TestTurnAndPageCapacity(t *testing.T) {
	c := client(t)
	names := newTables(t, c)
	rec := capacity.New(c, tables.PK, tables.SK)
	s := dynamo.NewConversations(rec, names.Conversations)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	kib := func(n int) string { return strings.Repeat("x", n) }
	// A due in the middle of a 5-minute bucket, moved by a minute: the
	// same bucket.
	due := now.Truncate(5 * time.Minute).Add(30*time.Minute + time.Minute)
	for _, tc := range []struct {
		name         string
		state, attrs int // bytes
		maxTable     float64
		maxWithIndex float64
	}{
		{"small (1 KB turn)", 0, 0, 6, 8},
		{"at the limits (64 KiB state and attributes)", voiceops.MaxStateBytes - 100, voiceops.MaxAttributesBytes - 100, 262, 264},
	} {
		conv := testConversation(now)
		conv.IdleDue = due
		if tc.state > 0 {
			conv.State = map[string]any{"s": kib(tc.state)}
			conv.IntegrationAttributes = map[string]any{"a": kib(tc.attrs)}
		}
		if err := s.CreateConversation(ctx, conv, &voiceops.Turn{Index: 0, AgentResponse: "Hello", AgentResponseAt: now}); err != nil {
			t.Fatal(err)
		}
		next := withVersion(conv, 2)
		next.NumTurns, next.IdleDue = 2, due.Add(time.Minute)
		turn := voiceops.Turn{Index: 1, UserInput: kib(500), UserInputAt: now, AgentResponse: kib(500), AgentResponseAt: now, Latency: time.Second}
		rec.Take()
		if err := s.AddTurn(ctx, next, turn, 1); err != nil {
			t.Fatal(err)
		}
		got := rec.Take()
		stored, err := s.GetConversation(ctx, conv.AccountID, conv.ProjectID, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		size := approxItemSize(stored)
		// The idle index: nothing while the due stays in its bucket.
		idleIndex := 0.0
		if conv.IdleDue.Truncate(5*time.Minute) != next.IdleDue.Truncate(5*time.Minute) {
			idleIndex = 2
		}
		// The turns index holds a copy of the turn item (about 1.2 KB here).
		turnsIndex := math.Max(1, math.Ceil(float64(len(turn.UserInput)+len(turn.AgentResponse)+250)/1024))
		index := idleIndex + turnsIndex
		t.Logf("%s: AddTurn %.0f WRU on the table (%d calls) + %.0f WRU on the idle (%.0f) and turns (%.0f) indexes = %.0f WRU (conversation item about %d B)",
			tc.name, got.WRU, got.Calls, index, idleIndex, turnsIndex, got.WRU+index, size)
		if got.WRU > tc.maxTable || got.WRU+index > tc.maxWithIndex {
			t.Errorf("%s: %.0f WRU (%.0f with the indexes), want at most %.0f (%.0f)", tc.name, got.WRU, got.WRU+index, tc.maxTable, tc.maxWithIndex)
		}
	}

	// A list page of 30 conversations of 5 turns: the listing, then one
	// Query of turns per conversation (N+1).
	// Ten minutes into the last hour but one, one shard after another (IDs
	// draw their shard at random): the counts below do not depend on luck.
	base := now.Truncate(time.Hour).Add(-50 * time.Minute)
	for i := range 30 {
		cv := testConversation(base.Add(time.Duration(i) * time.Second))
		cv.ProjectID = "proj_page"
		cv.ID = fmt.Sprintf("%s%013d%d%s", voiceops.PrefixConversation, cv.StartedAt.UnixMilli(), i%voiceops.ConversationShards, voiceops.RandomBase62(20))
		if err := s.CreateConversation(ctx, cv, &voiceops.Turn{Index: 0, AgentResponse: "Hello", AgentResponseAt: now}); err != nil {
			t.Fatal(err)
		}
		for j := 1; j < 5; j++ {
			nx := withVersion(cv, int64(j+1))
			nx.NumTurns = j + 1
			if err := s.AddTurn(ctx, nx, voiceops.Turn{Index: j, UserInput: "my balance please", AgentResponse: "It is 42.", AgentResponseAt: now}, int64(j)); err != nil {
				t.Fatal(err)
			}
			cv = nx
		}
	}
	lister := conversation.Lister{Store: s}
	page := func(from, to time.Time) (int, capacity.Tally) {
		rec.Take()
		n := 0
		_, err := lister.Page(ctx, "acct_a", "proj_page", conversation.ListQuery{
			From: from, To: to, Limit: 30, Match: func(voiceops.Conversation) bool { return true },
		}, func(cv voiceops.Conversation, turns []voiceops.Turn) bool {
			if len(turns) != 5 {
				t.Errorf("%s: %d turns, want 5", cv.ID, len(turns))
			}
			n++
			return true
		})
		if err != nil || n != 30 {
			t.Fatalf("page: %d, %v", n, err)
		}
		return n, rec.Take()
	}
	// Issue 23's target, a page of 30 in at most 6 calls, holds for a
	// range within one hour: one Query per shard (no hour index), then
	// one Query of the turns index for the whole page (no conversation
	// filtered out between them).
	for _, tc := range []struct {
		name     string
		from, to time.Time
		max      int
	}{
		{"a range within one hour", base.Add(-time.Minute), base.Add(30 * time.Minute), voiceops.ConversationShards + 2},
		// The page is full in its first hour, but the lister asks for a
		// little more than the page to tell whether more follow, so the
		// next hour's shards are read too.
		{"a range of two hours", base.Add(-time.Minute), base.Add(time.Hour), 2*voiceops.ConversationShards + 1},
		// The API's default range starts at the epoch: the hour index
		// (one Query per shard), the shards of the page's hour, the turns.
		{"a range from the epoch", time.UnixMilli(0), now, 2*voiceops.ConversationShards + 1},
	} {
		_, got := page(tc.from, tc.to)
		t.Logf("a page of 30 conversations of 5 turns, %s: %d calls, %d items, %.1f RRU", tc.name, got.Calls, got.ItemsRead, got.RRU)
		if got.Calls > tc.max {
			t.Errorf("a page, %s: %d calls, want at most %d", tc.name, got.Calls, tc.max)
		}
	}
}

// approxItemSize is the conversation's size as stored: its JSON fields
// and the fixed attributes, about.
func approxItemSize(c voiceops.Conversation) int {
	n := 400 // keys, times, counters, names
	if a, ok := c.IntegrationAttributes["a"].(string); ok {
		n += len(a) + 8
	}
	if s, ok := c.State["s"].(string); ok {
		n += len(s) + 8
	}
	return n
}
