package dynamo_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/tables"
	"github.com/voiceops/opsapi/shared/testsupport/capacity"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestTurnAndPageCapacity is the conversation half of the capacity test:
// what a chat turn writes (small, and with state and attributes at their
// 64 KiB limits) and what a list page of 30 conversations reads, with the
// layout as it is (issue 23's turn and page halves are still open: the
// bounds below hold today's figures, so that they can only go down). The
// open index projects the whole item and its key moves every turn, so its
// writes (not seen by the recording client) are added from the item's
// size: a delete and a put of the whole item.
func TestTurnAndPageCapacity(t *testing.T) {
	c := client(t)
	names := newTables(t, c)
	rec := capacity.New(c, tables.PK, tables.SK)
	s := dynamo.NewConversations(rec, names.Conversations)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	kib := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name         string
		state, attrs int // bytes
		maxTable     float64
		maxWithIndex float64
	}{
		{"small (1 KB turn)", 0, 0, 8, 12},
		{"at the limits (64 KiB state and attributes)", voiceops.MaxStateBytes - 100, voiceops.MaxAttributesBytes - 100, 270, 540},
	} {
		conv := testConversation(now)
		conv.IdleDue = now.Add(30 * time.Minute)
		if tc.state > 0 {
			conv.State = map[string]any{"s": kib(tc.state)}
			conv.IntegrationAttributes = map[string]any{"a": kib(tc.attrs)}
		}
		if err := s.CreateConversation(ctx, conv, &voiceops.Turn{Index: 0, AgentResponse: "Hello", AgentResponseAt: now}); err != nil {
			t.Fatal(err)
		}
		next := withVersion(conv, 2)
		next.NumTurns, next.IdleDue = 2, now.Add(31*time.Minute)
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
		index := 2 * math.Max(1, math.Ceil(float64(size)/1024))
		t.Logf("%s: AddTurn %.0f WRU on the table (%d calls) + %.0f WRU on the open index = %.0f WRU (conversation item about %d B)",
			tc.name, got.WRU, got.Calls, index, got.WRU+index, size)
		if got.WRU > tc.maxTable || got.WRU+index > tc.maxWithIndex {
			t.Errorf("%s: %.0f WRU (%.0f with the index), want at most %.0f (%.0f)", tc.name, got.WRU, got.WRU+index, tc.maxTable, tc.maxWithIndex)
		}
	}

	// A list page of 30 conversations of 5 turns: the listing, then one
	// Query of turns per conversation (N+1).
	base := now.Add(-time.Hour)
	for i := range 30 {
		cv := testConversation(base.Add(time.Duration(i) * time.Second))
		cv.ProjectID = "proj_page"
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
	rec.Take()
	page, err := s.ListConversations(ctx, "acct_a", "proj_page", base.Add(-time.Minute), now, "", 30)
	if err != nil || len(page) != 30 {
		t.Fatalf("page: %d, %v", len(page), err)
	}
	for _, cv := range page {
		if _, err := s.Turns(ctx, cv.AccountID, cv.ProjectID, cv.ID); err != nil {
			t.Fatal(err)
		}
	}
	got := rec.Take()
	t.Logf("a page of 30 conversations with their turns: %d calls, %d items, %.1f RRU", got.Calls, got.ItemsRead, got.RRU)
	// The hour index (one Query per shard), the hours' shards holding some
	// (the page spans two hours, three when the test runs across an hour's
	// end), one Query per conversation: 38 to 40 today.
	if max := 3*voiceops.ConversationShards + 1 + 30; got.Calls > max {
		t.Errorf("a page: %d calls, want at most %d (issue 23's target: 6)", got.Calls, max)
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
