package dynamo_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/convlist"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/testsupport/capacity"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestTurnAndPageCapacity is the conversation half of the capacity test:
// what a chat turn writes (small, and with state and attributes at their
// 64 KiB limits, unchanged and changed) and what a list page of 30
// conversations reads. A turn is a PutItem of the turn and an UpdateItem
// of the conversation (turnwrite.go), whose state and attributes, when
// large, live in a side item written only when they change. Index writes
// are not seen by the recording client, so they are added: the idle index
// projects only keys and its key moves only when a turn moves the idle due
// into another 5-minute bucket (a delete and a put of a keys-only item, 2
// WRU; not in this turn, whose due stays in its bucket); nothing writes
// the turns index any more.
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
	var small float64
	for _, tc := range []struct {
		name         string
		state, attrs int // bytes
		change       bool
		maxWithIndex float64
	}{
		{"small (1 KB turn)", 0, 0, false, 4},
		// No term grows with the conversation: the same as a small turn.
		{"with state and attributes at their 64 KiB limits, unchanged", voiceops.MaxStateBytes - 100, voiceops.MaxAttributesBytes - 100, false, 4},
		// What the turn changes: the side item, once.
		{"with state and attributes at their 64 KiB limits, changed", voiceops.MaxStateBytes - 100, voiceops.MaxAttributesBytes - 100, true, 4 + 130},
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
		// As the chat function does, in another process: read, then add.
		fresh := dynamo.NewConversations(rec, names.Conversations)
		read, err := fresh.GetConversation(ctx, conv.AccountID, conv.ProjectID, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		next := withVersion(read, 2)
		next.NumTurns, next.IdleDue = 2, due.Add(time.Minute)
		if tc.change {
			next.State = map[string]any{"s": kib(tc.state - 1)}
		}
		turn := voiceops.Turn{Index: 1, UserInput: kib(500), UserInputAt: now, AgentResponse: kib(500), AgentResponseAt: now, Latency: time.Second}
		rec.Take()
		if err := fresh.AddTurn(ctx, next, turn, 1); err != nil {
			t.Fatal(err)
		}
		got := rec.Take()
		back, err := s.GetConversation(ctx, conv.AccountID, conv.ProjectID, conv.ID)
		if err != nil || back.Version != 2 || back.NumTurns != 2 || fmt.Sprint(back.State) != fmt.Sprint(next.State) {
			t.Fatalf("%s: read back %d turns, version %d, %v", tc.name, back.NumTurns, back.Version, err)
		}
		// The idle index: nothing while the due stays in its bucket.
		index := 0.0
		if conv.IdleDue.Truncate(5*time.Minute) != next.IdleDue.Truncate(5*time.Minute) {
			index = 2
		}
		t.Logf("%s: AddTurn %.0f WRU on the table (%d calls, %d items) + %.0f WRU on the indexes = %.0f WRU",
			tc.name, got.WRU, got.Calls, got.ItemsWrote, index, got.WRU+index)
		if got.WRU+index > tc.maxWithIndex {
			t.Errorf("%s: %.0f WRU with the indexes, want at most %.0f", tc.name, got.WRU+index, tc.maxWithIndex)
		}
		if tc.state == 0 {
			small = got.WRU + index
		} else if !tc.change && got.WRU+index != small {
			t.Errorf("%s: %.0f WRU, want the small turn's %.0f", tc.name, got.WRU+index, small)
		}
	}

	// A list page of 30 conversations of 5 turns, for a quiet project
	// (its hour in shard 0, as voiceops.NewProjectConversationID places
	// the first conversations a process starts in a project's hour) and a
	// busy one (one shard after another, as a busy project's spread): the
	// counts below do not depend on luck. Ten minutes into an hour three
	// hours back, so that the first listing from the epoch finds the hour
	// index settled and writes the project's legacy marker (hourindex.go).
	base := now.Truncate(time.Hour).Add(-3*time.Hour + 10*time.Minute)
	lister := convlist.Lister{Store: s}
	for _, p := range []struct {
		project string
		shards  int // shards its page's hour uses
	}{{"proj_quiet", 1}, {"proj_busy", voiceops.WriteShards}} {
		for i := range 30 {
			cv := testConversation(base.Add(time.Duration(i) * time.Second))
			cv.ProjectID = p.project
			cv.ID = fmt.Sprintf("%s%013d%d%s", voiceops.PrefixConversation, cv.StartedAt.UnixMilli(), i%p.shards, voiceops.RandomBase62(20))
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
		page := func(from, to time.Time) capacity.Tally {
			rec.Take()
			n := 0
			_, err := lister.Page(ctx, "acct_a", p.project, convlist.ListQuery{
				From: from, To: to, Limit: 30, Match: func(voiceops.Conversation) bool { return true },
			}, func(cv voiceops.Conversation, turns []voiceops.Turn) bool {
				if len(turns) != 5 {
					t.Errorf("%s: %d turns, want 5", cv.ID, len(turns))
				}
				n++
				return true
			})
			if err != nil || n != 30 {
				t.Fatalf("%s page: %d, %v", p.project, n, err)
			}
			return rec.Take()
		}
		// The target: a page of 30 in at most 6 calls. The first
		// listing of a project by a process (this store) also reads its
		// legacy marker; with none yet, it reads the old layout's four
		// partitions and writes the marker (no old entries here).
		first := page(time.UnixMilli(0), now)
		t.Logf("%s: a page of 30 conversations of 5 turns from the epoch, the project's first listing: %d calls, %.1f RRU", p.project, first.Calls, first.RRU)
		if want := 1 + 1 + voiceops.ConversationShards + 1 + p.shards + 2; first.Calls != want {
			t.Errorf("%s: first listing %d calls, want %d (marker, index, old index, marker written, shards, turns)", p.project, first.Calls, want)
		}
		for _, tc := range []struct {
			name     string
			from, to time.Time
			want     int
		}{
			// The hour index (one Query), the shards of the page's hour,
			// then two BatchGetItems of the page's 150 turn keys (100 a
			// call). The lister asks for one more than the page; the index
			// says no other hour holds any.
			{"a range within one hour", base.Add(-time.Minute), base.Add(30 * time.Minute), 1 + p.shards + 2},
			{"a range of two hours", base.Add(-time.Minute), base.Add(time.Hour), 1 + p.shards + 2},
			// The API's default range starts at the epoch.
			{"a range from the epoch", time.UnixMilli(0), now, 1 + p.shards + 2},
		} {
			got := page(tc.from, tc.to)
			t.Logf("%s: a page of 30 conversations of 5 turns, %s: %d calls, %d items, %.1f RRU", p.project, tc.name, got.Calls, got.ItemsRead, got.RRU)
			if got.Calls != tc.want {
				t.Errorf("%s: a page, %s: %d calls, want %d", p.project, tc.name, got.Calls, tc.want)
			}
			if got.Calls > 6 {
				t.Errorf("%s: a page, %s: %d calls, want at most 6", p.project, tc.name, got.Calls)
			}
		}
	}
}
