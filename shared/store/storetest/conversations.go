package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// conversationLister is the range listing the conversations list and the
// concurrency series build on. Both stores implement it.
type conversationLister interface {
	ListConversations(ctx context.Context, accountID, projectID string, from, to time.Time, after string, limit int) ([]voiceops.Conversation, error)
	ListConversationIntervals(ctx context.Context, accountID, projectID string, from, to time.Time, after string, limit int) ([]voiceops.Conversation, error)
}

// RunConversations runs the contract of voiceops.ConversationStore (and
// of the range listing) on s.Conversations.
//
// Start times are fixed (base); expiry times are relative to the wall
// clock, which stores read the TTL against.
func RunConversations(t *testing.T, newStores func(t *testing.T) voiceops.Stores) {
	t.Helper()
	t.Run("RoundTrip", func(t *testing.T) { testConversationRoundTrip(t, newStores) })
	t.Run("AddTurn", func(t *testing.T) { testAddTurn(t, newStores) })
	t.Run("Update", func(t *testing.T) { testUpdateConversation(t, newStores) })
	t.Run("ConcurrentAddTurn", func(t *testing.T) { testConcurrentAddTurn(t, newStores) })
	t.Run("TenantIsolation", func(t *testing.T) { testConversationTenants(t, newStores) })
	t.Run("Expiry", func(t *testing.T) { testConversationExpiry(t, newStores) })
	t.Run("Keys", func(t *testing.T) { testConversationKeys(t, newStores) })
	t.Run("List", func(t *testing.T) { testListConversations(t, newStores) })
	t.Run("ListPagination", func(t *testing.T) { testListPagination(t, newStores) })
	t.Run("BySharedID", func(t *testing.T) { testConversationBySharedID(t, newStores) })
	t.Run("ItemLimit", func(t *testing.T) { testConversationItemLimit(t, newStores) })
	t.Run("Due", func(t *testing.T) { testDueConversations(t, newStores) })
	t.Run("TurnsBetween", func(t *testing.T) { testTurnsBetween(t, newStores) })
	t.Run("PageTurns", func(t *testing.T) { testPageTurns(t, newStores) })
}

// testDueConversations: the idle sweep's read finds the conversations in
// progress whose IdleDue has passed, of every tenant, earliest first; a
// turn that moves IdleDue, or the end, takes a conversation out.
func testDueConversations(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	open := func(acct, proj string, started time.Time, due time.Time) voiceops.Conversation {
		c := newConversation(acct, proj, started)
		c.InProgress, c.EndedAt, c.EndReason, c.Handoff, c.SharedID = true, nil, "", false, ""
		c.IdleDue = due
		return mustConversation(t, s, c, nil)
	}
	a := open("acct_a", "proj_a", at(0), at(100))
	b := open("acct_b", "proj_b", at(1), at(50))
	c := open("acct_a", "proj_a2", at(2), at(100))      // due with a, later ID
	open("acct_a", "proj_a", at(3), at(500))            // not yet due
	ended := newConversation("acct_a", "proj_a", at(4)) // ended: never due
	ended.IdleDue = at(10)
	mustConversation(t, s, ended, nil)
	never := open("acct_a", "proj_a", at(5), time.Time{}) // no idle due
	_ = never
	ids := func(cs []voiceops.Conversation) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	due, err := s.Conversations.DueConversations(ctx(t), at(100), 10)
	mustNil(t, "DueConversations", err)
	wantIDs := []string{b.ID, a.ID, c.ID}
	if a.ID > c.ID {
		wantIDs = []string{b.ID, c.ID, a.ID}
	}
	if got := ids(due); !slices.Equal(got, wantIDs) {
		t.Fatalf("due at +100s: %v, want %v", got, wantIDs)
	}
	if due[0].AccountID != "acct_b" || due[0].ProjectID != "proj_b" || !due[0].InProgress || !due[0].IdleDue.Equal(at(50)) {
		t.Errorf("due conversation %+v", due[0])
	}
	if got, _ := s.Conversations.DueConversations(ctx(t), at(100), 1); len(got) != 1 || got[0].ID != b.ID {
		t.Errorf("limit 1: %v", ids(got))
	}
	if got, _ := s.Conversations.DueConversations(ctx(t), at(49), 10); len(got) != 0 {
		t.Errorf("due before any: %v", ids(got))
	}
	// A turn moves b's idle due past the sweep; ending a takes it out.
	b2 := b
	b2.IdleDue, b2.Version, b2.NumTurns = at(300), 2, 1
	mustNil(t, "AddTurn", s.Conversations.AddTurn(ctx(t), b2, newTurn(0, at(60)), 1))
	a2 := a
	end := at(90)
	a2.InProgress, a2.EndedAt, a2.EndReason, a2.Version = false, &end, voiceops.EndTimeout, 2
	mustNil(t, "UpdateConversation", s.Conversations.UpdateConversation(ctx(t), a2, 1))
	due, err = s.Conversations.DueConversations(ctx(t), at(100), 10)
	mustNil(t, "DueConversations", err)
	if got := ids(due); !slices.Equal(got, []string{c.ID}) {
		t.Errorf("due after a turn and an end: %v, want [%s]", got, c.ID)
	}
	if got := getConversation(t, s, a2); got.InProgress || got.EndReason != voiceops.EndTimeout || !got.IdleDue.Equal(at(100)) {
		t.Errorf("ended conversation read back %+v", got)
	}
}

// retained is an expiry far enough ahead for every test.
func retained() time.Time {
	return time.Now().Add(90 * 24 * time.Hour).Truncate(time.Millisecond).In(time.FixedZone("UTC+1", 3600))
}

// jsonValue decodes s: maps as stores give them back (JSON values).
func jsonValue[T any](s string) T {
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}

// conversationID returns an ID for a conversation started at started, in
// the given shard (voiceops.NewConversationID draws it at random).
func conversationID(started time.Time, shard int) string {
	return fmt.Sprintf("%s%013d%d%s", voiceops.PrefixConversation, started.UnixMilli(), shard, voiceops.RandomBase62(20))
}

// newConversation returns a conversation with every field set.
func newConversation(accountID, projectID string, started time.Time) voiceops.Conversation {
	ended := started.Add(95*time.Second + 250*time.Millisecond)
	return voiceops.Conversation{
		ID: voiceops.NewConversationID(started), AccountID: accountID, ProjectID: projectID,
		Environment: voiceops.EnvLive, Channel: voiceops.ChannelVoice,
		VariantID: "var_1", VariantName: "Main line \u00e9", FromNumber: "+441632960001", ToNumber: "+441632960999",
		ASRLang: "en-GB", TTSLang: "cy-GB",
		IntegrationAttributes: jsonValue[map[string]any](`{"crm_id": "A-17", "vip": true, "score": 12.5, "big": 9007199254740993,
			"nested": {"list": [1, "two", null, {"three": false}], "empty": {}}, "none": null}`),
		State:     jsonValue[map[string]any](`{"step": 3, "slots": {"date": "2025-03-14"}, "tags": []}`),
		StartedAt: started, EndedAt: &ended, EndReason: voiceops.EndHandoff, InProgress: false,
		NumTurns: 2, NumSilences: 1, NumOOD: 1, ServiceTime: 1234567891 * time.Nanosecond,
		Handoff: true, HandoffReason: "asked for a human", HandoffDestination: "sip:queue@example.com", SharedID: "shared-42",
		Metrics:   []voiceops.CustomMetric{{Name: "ORDER", Value: "A-1 \"é\""}, {Name: "tier", Value: ""}, {Name: "ORDER", Value: "A-2"}},
		IdleDue:   started.Add(30*time.Minute + 7*time.Millisecond),
		ExpiresAt: retained(), Version: 1,
	}
}

// newTurn returns a turn with every field set.
func newTurn(index int, at time.Time) voiceops.Turn {
	return voiceops.Turn{
		Index: index, UserInput: fmt.Sprintf("I'd like to book, turn %d", index), UserInputDTMF: "12#",
		UserInputAt: at, AgentResponse: "Sure: which day? <b>&</b>", AgentResponseAt: at.Add(830 * time.Millisecond),
		Latency: 830*time.Millisecond + 17*time.Microsecond, TranslatedUserInput: "Je voudrais réserver",
		EnglishAgentResponse: "Sure: which day?", Intents: []string{"book", "greet"},
		Entities: jsonValue[[]map[string]any](`[{"type": "date", "value": "2025-03-14", "confidence": 0.93}, {}]`),
		IsOOD:    index%2 == 1, IsSilence: index%3 == 2,
		Metadata:       jsonValue[map[string]any](`{"source": "widget", "n": 1, "ok": true}`),
		FunctionErrors: index % 2,
		Model: &voiceops.TurnModel{ModelID: "anthropic.claude-3-haiku-20240307-v1:0", InputTokens: 120 + index, OutputTokens: 31,
			StopReason: "end_turn", ModelLatency: 412 * time.Millisecond, GuardrailAction: "none",
			ToolCalls: []voiceops.ToolCall{{Name: "lookup_order", Outcome: "ok", Duration: 35 * time.Millisecond}}},
	}
}

func mustConversation(t *testing.T, s voiceops.Stores, c voiceops.Conversation, first *voiceops.Turn) voiceops.Conversation {
	t.Helper()
	mustNil(t, "CreateConversation", s.Conversations.CreateConversation(ctx(t), c, first))
	return c
}

func checkConversation(t *testing.T, what string, want, got voiceops.Conversation) {
	t.Helper()
	checkWhole(t, what, want, got)
}

func checkTurn(t *testing.T, what string, want, got voiceops.Turn) {
	t.Helper()
	checkWhole(t, what, want, got)
}

func getConversation(t *testing.T, s voiceops.Stores, c voiceops.Conversation) voiceops.Conversation {
	t.Helper()
	got, err := s.Conversations.GetConversation(ctx(t), c.AccountID, c.ProjectID, c.ID)
	mustNil(t, "GetConversation", err)
	return got
}

func turnsOf(t *testing.T, s voiceops.Stores, c voiceops.Conversation) []voiceops.Turn {
	t.Helper()
	got, err := s.Conversations.Turns(ctx(t), c.AccountID, c.ProjectID, c.ID)
	mustNil(t, "Turns", err)
	return got
}

func checkTurns(t *testing.T, what string, want, got []voiceops.Turn) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: nil, want a slice (possibly empty)", what)
	}
	if len(want) != len(got) {
		t.Fatalf("%s: %d turns, want %d", what, len(got), len(want))
	}
	for i := range want {
		checkTurn(t, fmt.Sprintf("%s[%d]", what, i), want[i], got[i])
	}
}

// next returns c as a write at version c.Version+1 changes it.
func next(c voiceops.Conversation, change func(*voiceops.Conversation)) voiceops.Conversation {
	change(&c)
	c.Version++
	return c
}

func testConversationRoundTrip(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	t.Run("every field, with a first turn", func(t *testing.T) {
		s := newStores(t)
		c := newConversation("acct_a", "proj_a", at(0))
		first := newTurn(0, at(1))
		mustConversation(t, s, c, &first)
		checkConversation(t, "conversation", c, getConversation(t, s, c))
		checkTurns(t, "turns", []voiceops.Turn{first}, turnsOf(t, s, c))
	})
	t.Run("zero values, no turn", func(t *testing.T) {
		s := newStores(t)
		c := voiceops.Conversation{
			ID: voiceops.NewConversationID(at(0)), AccountID: "acct_a", ProjectID: "proj_a", StartedAt: at(0),
			InProgress: true, Version: 1,
		}
		mustConversation(t, s, c, nil)
		checkConversation(t, "conversation", c, getConversation(t, s, c))
		checkTurns(t, "turns", nil, turnsOf(t, s, c))
	})
	t.Run("empty maps and lists stay empty, not nil", func(t *testing.T) {
		s := newStores(t)
		c := newConversation("acct_a", "proj_a", at(0))
		c.IntegrationAttributes, c.State = map[string]any{}, map[string]any{}
		first := voiceops.Turn{Intents: []string{}, Entities: []map[string]any{}, Metadata: map[string]any{}}
		mustConversation(t, s, c, &first)
		checkConversation(t, "conversation", c, getConversation(t, s, c))
		checkTurns(t, "turns", []voiceops.Turn{first}, turnsOf(t, s, c))
	})
	t.Run("values are copied", func(t *testing.T) {
		s := newStores(t)
		c := newConversation("acct_a", "proj_a", at(0))
		first := newTurn(0, at(1))
		mustConversation(t, s, c, &first)
		c.State["step"] = "changed by the caller"
		first.Metadata["source"] = "changed by the caller"
		got := getConversation(t, s, c)
		if got.State["step"] != 3.0 {
			t.Errorf("State[step] = %v after the caller changed its map", got.State["step"])
		}
		got.State["step"] = "changed by a reader"
		if again := getConversation(t, s, c); again.State["step"] != 3.0 {
			t.Errorf("State[step] = %v after a reader changed its copy", again.State["step"])
		}
		if ts := turnsOf(t, s, c); ts[0].Metadata["source"] != "widget" {
			t.Errorf("Metadata[source] = %v after the caller changed its map", ts[0].Metadata["source"])
		}
	})
	t.Run("an ID is created once", func(t *testing.T) {
		s := newStores(t)
		c := mustConversation(t, s, newConversation("acct_a", "proj_a", at(0)), nil)
		other := c
		other.VariantName = "other"
		wantErr(t, "CreateConversation again", s.Conversations.CreateConversation(ctx(t), other, nil), voiceops.ErrAlreadyExists)
		checkConversation(t, "conversation", c, getConversation(t, s, c))
	})
}

func testAddTurn(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	c := newConversation("acct_a", "proj_a", at(0))
	c.InProgress, c.EndedAt, c.NumTurns = true, nil, 1
	first := newTurn(0, at(0))
	mustConversation(t, s, c, &first)

	second := newTurn(1, at(5))
	c2 := next(c, func(c *voiceops.Conversation) {
		c.NumTurns, c.ServiceTime = 2, c.ServiceTime+second.Latency
		c.State = map[string]any{"step": 4.0}
	})
	mustNil(t, "AddTurn", s.Conversations.AddTurn(ctx(t), c2, second, c.Version))
	checkConversation(t, "after AddTurn", c2, getConversation(t, s, c))
	checkTurns(t, "turns after AddTurn", []voiceops.Turn{first, second}, turnsOf(t, s, c))

	t.Run("a stale version writes nothing", func(t *testing.T) {
		third := newTurn(2, at(9))
		stale := next(c, func(c *voiceops.Conversation) { c.NumTurns = 99 })
		wantErr(t, "AddTurn at a stale version", s.Conversations.AddTurn(ctx(t), stale, third, c.Version), voiceops.ErrConflictingWrite)
		checkConversation(t, "after the refused AddTurn", c2, getConversation(t, s, c))
		checkTurns(t, "turns after the refused AddTurn", []voiceops.Turn{first, second}, turnsOf(t, s, c))
	})
	t.Run("a taken index writes nothing", func(t *testing.T) {
		again := newTurn(1, at(9))
		again.UserInput = "overwritten?"
		c3 := next(c2, func(c *voiceops.Conversation) { c.NumTurns = 3 })
		wantErr(t, "AddTurn at a taken index", s.Conversations.AddTurn(ctx(t), c3, again, c2.Version), voiceops.ErrAlreadyExists)
		checkConversation(t, "after the refused AddTurn", c2, getConversation(t, s, c))
		checkTurns(t, "turns after the refused AddTurn", []voiceops.Turn{first, second}, turnsOf(t, s, c))
	})
	t.Run("a missing conversation", func(t *testing.T) {
		missing := newConversation("acct_a", "proj_a", at(3))
		missing.Version = 2
		wantErr(t, "AddTurn to a missing conversation", s.Conversations.AddTurn(ctx(t), missing, newTurn(0, at(3)), 1), voiceops.ErrNotFound)
		_, err := s.Conversations.Turns(ctx(t), missing.AccountID, missing.ProjectID, missing.ID)
		wantErr(t, "Turns of the missing conversation", err, voiceops.ErrNotFound)
	})
	t.Run("the version must go up by one", func(t *testing.T) {
		same := c2 // Version not increased
		if err := s.Conversations.AddTurn(ctx(t), same, newTurn(2, at(9)), c2.Version); err == nil {
			t.Error("AddTurn with c.Version == expectVersion succeeded")
		}
		checkTurns(t, "turns", []voiceops.Turn{first, second}, turnsOf(t, s, c))
	})
	t.Run("many turns stay in order", func(t *testing.T) {
		cur, want := c2, []voiceops.Turn{first, second}
		for i := 2; i < 12; i++ {
			tn := newTurn(i, at(10*i))
			nxt := next(cur, func(c *voiceops.Conversation) { c.NumTurns = i + 1 })
			mustNil(t, fmt.Sprintf("AddTurn %d", i), s.Conversations.AddTurn(ctx(t), nxt, tn, cur.Version))
			cur, want = nxt, append(want, tn)
		}
		checkTurns(t, "turns", want, turnsOf(t, s, c))
		checkConversation(t, "conversation", cur, getConversation(t, s, c))

		// Turns only go forward: a gap stays (13 after 11), and an index
		// below the highest stored one is refused, free (12) or taken (5),
		// as DynamoDB's commit refuses a turn below turns_to.
		n13 := newTurn(13, at(200))
		c13 := next(cur, func(c *voiceops.Conversation) { c.NumTurns = 13 })
		mustNil(t, "AddTurn 13 after 11", s.Conversations.AddTurn(ctx(t), c13, n13, cur.Version))
		for _, i := range []int{12, 5} {
			late := next(c13, func(c *voiceops.Conversation) { c.NumTurns = 14 })
			wantErr(t, fmt.Sprintf("AddTurn %d after 13", i), s.Conversations.AddTurn(ctx(t), late, newTurn(i, at(300)), c13.Version), voiceops.ErrAlreadyExists)
		}
		checkTurns(t, "turns after a gap and two late ones", append(want, n13), turnsOf(t, s, c))
		checkConversation(t, "conversation", c13, getConversation(t, s, c))
	})
}

func testUpdateConversation(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	c := newConversation("acct_a", "proj_a", at(0))
	c.InProgress, c.EndedAt, c.EndReason, c.Handoff, c.HandoffReason, c.HandoffDestination = true, nil, "", false, "", ""
	first := newTurn(0, at(0))
	mustConversation(t, s, c, &first)

	ended := next(c, func(c *voiceops.Conversation) {
		c.InProgress, c.EndedAt, c.EndReason = false, ptr(at(60)), voiceops.EndHandoff
		c.Handoff, c.HandoffReason, c.HandoffDestination = true, "billing", "+441632960500"
		c.State = map[string]any{"done": true}
		c.IntegrationAttributes = nil
	})
	mustNil(t, "UpdateConversation", s.Conversations.UpdateConversation(ctx(t), ended, c.Version))
	checkConversation(t, "after UpdateConversation", ended, getConversation(t, s, c))
	checkTurns(t, "turns after UpdateConversation", []voiceops.Turn{first}, turnsOf(t, s, c))

	stale := next(c, func(c *voiceops.Conversation) { c.SharedID = "stale" })
	wantErr(t, "UpdateConversation at a stale version", s.Conversations.UpdateConversation(ctx(t), stale, c.Version), voiceops.ErrConflictingWrite)
	checkConversation(t, "after the refused update", ended, getConversation(t, s, c))

	missing := next(newConversation("acct_a", "proj_a", at(1)), func(*voiceops.Conversation) {})
	wantErr(t, "UpdateConversation of a missing conversation", s.Conversations.UpdateConversation(ctx(t), missing, 1), voiceops.ErrNotFound)
	if _, err := s.Conversations.GetConversation(ctx(t), missing.AccountID, missing.ProjectID, missing.ID); err == nil {
		t.Error("the refused update created the conversation")
	}

	moved := next(ended, func(c *voiceops.Conversation) { c.StartedAt = c.StartedAt.Add(time.Hour) })
	if err := s.Conversations.UpdateConversation(ctx(t), moved, ended.Version); err == nil {
		t.Error("UpdateConversation moving StartedAt away from the ID's millisecond succeeded")
	}
}

func testConcurrentAddTurn(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	c := newConversation("acct_a", "proj_a", at(0))
	first := newTurn(0, at(0))
	mustConversation(t, s, c, &first)
	const n = 10
	turns := make([]voiceops.Turn, n)
	for i := range turns {
		turns[i] = newTurn(1, at(5))
		turns[i].UserInput = fmt.Sprintf("writer %d", i)
	}
	errs := race(n, func(i int) error {
		nxt := next(c, func(c *voiceops.Conversation) { c.NumTurns, c.SharedID = 2, fmt.Sprintf("writer %d", i) })
		return s.Conversations.AddTurn(ctx(t), nxt, turns[i], c.Version)
	})
	winner := exactlyOne(t, "AddTurn", errs, voiceops.ErrConflictingWrite)
	want := next(c, func(c *voiceops.Conversation) { c.NumTurns, c.SharedID = 2, fmt.Sprintf("writer %d", winner) })
	checkConversation(t, "conversation after the race", want, getConversation(t, s, c))
	checkTurns(t, "turns after the race", []voiceops.Turn{first, turns[winner]}, turnsOf(t, s, c))
}

func testConversationTenants(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	c := newConversation("acct_a", "proj_a", at(0))
	first := newTurn(0, at(0))
	mustConversation(t, s, c, &first)
	for _, other := range []struct{ acct, proj string }{{"acct_b", "proj_a"}, {"acct_a", "proj_b"}, {"acct_b", "proj_b"}} {
		_, err := s.Conversations.GetConversation(ctx(t), other.acct, other.proj, c.ID)
		wantErr(t, "GetConversation from "+other.acct+"/"+other.proj, err, voiceops.ErrNotFound)
		_, err = s.Conversations.Turns(ctx(t), other.acct, other.proj, c.ID)
		wantErr(t, "Turns from "+other.acct+"/"+other.proj, err, voiceops.ErrNotFound)
		theirs := next(c, func(x *voiceops.Conversation) { x.AccountID, x.ProjectID = other.acct, other.proj })
		wantErr(t, "AddTurn from "+other.acct+"/"+other.proj, s.Conversations.AddTurn(ctx(t), theirs, newTurn(1, at(1)), c.Version), voiceops.ErrNotFound)
		wantErr(t, "UpdateConversation from "+other.acct+"/"+other.proj, s.Conversations.UpdateConversation(ctx(t), theirs, c.Version), voiceops.ErrNotFound)
		if l, ok := s.Conversations.(conversationLister); ok {
			list, err := l.ListConversations(ctx(t), other.acct, other.proj, at(-3600), at(3600), "", 10)
			mustNil(t, "ListConversations", err)
			if len(list) != 0 {
				t.Errorf("ListConversations from %s/%s: %d conversations of another tenant", other.acct, other.proj, len(list))
			}
		}
	}
	checkConversation(t, "conversation", c, getConversation(t, s, c))
	checkTurns(t, "turns", []voiceops.Turn{first}, turnsOf(t, s, c))
}

func testConversationExpiry(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	gone := newConversation("acct_a", "proj_a", at(0))
	gone.ExpiresAt = time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	first := newTurn(0, at(0))
	mustConversation(t, s, gone, &first)
	live := mustConversation(t, s, newConversation("acct_a", "proj_a", at(1)), nil)

	_, err := s.Conversations.GetConversation(ctx(t), gone.AccountID, gone.ProjectID, gone.ID)
	wantErr(t, "GetConversation of an expired conversation", err, voiceops.ErrNotFound)
	_, err = s.Conversations.Turns(ctx(t), gone.AccountID, gone.ProjectID, gone.ID)
	wantErr(t, "Turns of an expired conversation", err, voiceops.ErrNotFound)
	nxt := next(gone, func(*voiceops.Conversation) {})
	wantErr(t, "AddTurn to an expired conversation", s.Conversations.AddTurn(ctx(t), nxt, newTurn(1, at(2)), gone.Version), voiceops.ErrNotFound)
	wantErr(t, "UpdateConversation of an expired conversation", s.Conversations.UpdateConversation(ctx(t), nxt, gone.Version), voiceops.ErrNotFound)

	if l, ok := s.Conversations.(conversationLister); ok {
		for name, list := range map[string]func(context.Context, string, string, time.Time, time.Time, string, int) ([]voiceops.Conversation, error){
			"ListConversations": l.ListConversations, "ListConversationIntervals": l.ListConversationIntervals,
		} {
			got, err := list(ctx(t), "acct_a", "proj_a", at(-10), at(10), "", 10)
			mustNil(t, name, err)
			if ids := conversationIDs(got); !slices.Equal(ids, []string{live.ID}) {
				t.Errorf("%s: want only the live conversation %s, got %v", name, live.ID, ids)
			}
		}
	}
	checkConversation(t, "live conversation", live, getConversation(t, s, live))
}

func testConversationKeys(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	for _, id := range []string{"", "conv_", "conv_x", "ar_" + voiceops.RandomBase62(22), voiceops.NewConversationID(at(0)) + "x",
		fmt.Sprintf("conv_%013d9%s", at(0).UnixMilli(), voiceops.RandomBase62(20)), "conv_../../etc/passwd"} {
		_, err := s.Conversations.GetConversation(ctx(t), "acct_a", "proj_a", id)
		wantErr(t, fmt.Sprintf("GetConversation(%q)", id), err, voiceops.ErrNotFound)
		_, err = s.Conversations.Turns(ctx(t), "acct_a", "proj_a", id)
		wantErr(t, fmt.Sprintf("Turns(%q)", id), err, voiceops.ErrNotFound)
	}
	c := newConversation("acct_a", "proj_a", at(0))
	c.StartedAt = c.StartedAt.Add(time.Millisecond)
	if err := s.Conversations.CreateConversation(ctx(t), c, nil); err == nil {
		t.Error("CreateConversation with a StartedAt other than its ID's millisecond succeeded")
	}
	c = newConversation("acct_a", "proj_a", at(0))
	c.ID = "conv_not_an_id"
	if err := s.Conversations.CreateConversation(ctx(t), c, nil); err == nil {
		t.Error("CreateConversation with a malformed ID succeeded")
	}
	// Sub-millisecond start times are kept; the ID carries the millisecond.
	c = newConversation("acct_a", "proj_a", at(0).Add(123456*time.Nanosecond))
	mustConversation(t, s, c, nil)
	checkConversation(t, "conversation started between milliseconds", c, getConversation(t, s, c))
}

func lister(t *testing.T, s voiceops.Stores) conversationLister {
	t.Helper()
	l, ok := s.Conversations.(conversationLister)
	if !ok {
		t.Fatalf("%T does not implement ListConversations and ListConversationIntervals", s.Conversations)
	}
	return l
}

func conversationIDs(cs []voiceops.Conversation) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func testListConversations(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	l := lister(t, s)
	// Every shard of three hours, the edges of the range, and two
	// conversations in the same millisecond.
	starts := []time.Time{at(-1), at(0), at(0), at(1), at(3600), at(3601), at(7200 + 59), at(7200 + 60)}
	var all []voiceops.Conversation
	for i, st := range starts {
		c := newConversation("acct_a", "proj_a", st)
		c.ID = conversationID(st, i%voiceops.ConversationShards)
		c.VariantID = fmt.Sprintf("var_%d", i)
		all = append(all, mustConversation(t, s, c, nil))
	}
	mustConversation(t, s, newConversation("acct_a", "proj_other", at(5)), nil)
	mustConversation(t, s, newConversation("acct_other", "proj_a", at(5)), nil)
	slices.SortFunc(all, func(a, b voiceops.Conversation) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	// [at(0), at(7200+60)): not at(-1), not the last one.
	want := all[1 : len(all)-1]
	got, err := l.ListConversations(ctx(t), "acct_a", "proj_a", at(0), at(7200+60), "", 100)
	mustNil(t, "ListConversations", err)
	if !slices.Equal(conversationIDs(got), conversationIDs(want)) {
		t.Fatalf("ListConversations:\n want %v\n got  %v", conversationIDs(want), conversationIDs(got))
	}
	for i := range want {
		checkConversation(t, "listed conversation", want[i], got[i])
	}

	intervals, err := l.ListConversationIntervals(ctx(t), "acct_a", "proj_a", at(0), at(7200+60), "", 100)
	mustNil(t, "ListConversationIntervals", err)
	if !slices.Equal(conversationIDs(intervals), conversationIDs(want)) {
		t.Fatalf("ListConversationIntervals:\n want %v\n got  %v", conversationIDs(want), conversationIDs(intervals))
	}
	for i, c := range want {
		w := voiceops.Conversation{
			ID: c.ID, AccountID: c.AccountID, ProjectID: c.ProjectID, Environment: c.Environment, Channel: c.Channel,
			VariantID: c.VariantID, VariantName: c.VariantName, FromNumber: c.FromNumber, ToNumber: c.ToNumber,
			ASRLang: c.ASRLang, TTSLang: c.TTSLang, StartedAt: c.StartedAt, EndedAt: c.EndedAt, EndReason: c.EndReason,
			InProgress: c.InProgress, ExpiresAt: c.ExpiresAt, IdleDue: c.IdleDue,
		}
		checkConversation(t, "listed interval", w, intervals[i])
	}

	t.Run("limits and empty ranges", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			from, to time.Time
			limit    int
			want     []voiceops.Conversation
		}{
			{"limit 1", at(0), at(99999), 1, all[1:2]},
			{"limit 3", at(-100), at(99999), 3, all[:3]},
			{"limit 0", at(-100), at(99999), 0, nil},
			{"empty range", at(0), at(0), 10, nil},
			{"reversed range", at(10), at(0), 10, nil},
			{"a range with nothing", at(100), at(3000), 10, nil},
			{"one millisecond", at(0), at(0).Add(time.Millisecond), 10, all[1:3]},
			{"wide range", time.Time{}, at(0).Add(100 * 365 * 24 * time.Hour), 100, all},
		} {
			got, err := l.ListConversations(ctx(t), "acct_a", "proj_a", tc.from, tc.to, "", tc.limit)
			mustNil(t, tc.name, err)
			if !slices.Equal(conversationIDs(got), conversationIDs(tc.want)) {
				t.Errorf("%s:\n want %v\n got  %v", tc.name, conversationIDs(tc.want), conversationIDs(got))
			}
		}
	})
	t.Run("bad cursor", func(t *testing.T) {
		_, err := l.ListConversations(ctx(t), "acct_a", "proj_a", at(0), at(10), "not a cursor", 10)
		wantErr(t, "ListConversations after a bad cursor", err, voiceops.ErrInvalidCursor)
		_, err = l.ListConversationIntervals(ctx(t), "acct_a", "proj_a", at(0), at(10), "not a cursor", 10)
		wantErr(t, "ListConversationIntervals after a bad cursor", err, voiceops.ErrInvalidCursor)
	})
	t.Run("a cursor before the range", func(t *testing.T) {
		got, err := l.ListConversations(ctx(t), "acct_a", "proj_a", at(0), at(2), all[0].ID, 10)
		mustNil(t, "ListConversations", err)
		if !slices.Equal(conversationIDs(got), conversationIDs(all[1:4])) {
			t.Errorf("want %v, got %v", conversationIDs(all[1:4]), conversationIDs(got))
		}
	})
}

// testListPagination walks many conversations over several hours and every
// shard, page by page, with conversations added during the walk.
func testListPagination(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	l := lister(t, s)
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 100
	var all []voiceops.Conversation
	for i := range n {
		// Over five hours, a few sharing their millisecond.
		st := base.Add(time.Duration(rng.IntN(5*3600*1000)) * time.Millisecond)
		if i%10 == 9 {
			st = all[i-1].StartedAt
		}
		c := voiceops.Conversation{
			ID: conversationID(st, rng.IntN(voiceops.ConversationShards)), AccountID: "acct_a", ProjectID: "proj_a",
			Environment: voiceops.EnvLive, StartedAt: st, InProgress: i%3 == 0, ExpiresAt: retained(), Version: 1,
		}
		all = append(all, mustConversation(t, s, c, nil))
	}
	from, to := base.Add(-time.Hour), base.Add(6*time.Hour)
	slices.SortFunc(all, func(a, b voiceops.Conversation) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for _, size := range []int{6, 45, 1000} {
		for name, list := range map[string]func(context.Context, string, string, time.Time, time.Time, string, int) ([]voiceops.Conversation, error){
			"ListConversations": l.ListConversations, "ListConversationIntervals": l.ListConversationIntervals,
		} {
			var got []string
			after, pages := "", 0
			for {
				page, err := list(ctx(t), "acct_a", "proj_a", from, to, after, size)
				mustNil(t, name, err)
				if len(page) > size {
					t.Fatalf("%s: %d conversations, limit %d", name, len(page), size)
				}
				if len(page) == 0 {
					break
				}
				got = append(got, conversationIDs(page)...)
				after = page[len(page)-1].ID
				if pages++; pages > n+1 {
					t.Fatalf("%s: more than %d pages of %d", name, pages, size)
				}
			}
			if want := conversationIDs(all); !slices.Equal(got, want) {
				t.Errorf("%s by pages of %d: %d conversations, want %d (missed or repeated, or out of order)", name, size, len(got), len(want))
			}
		}
	}

	t.Run("conversations added after the cursor during the walk", func(t *testing.T) {
		page, err := l.ListConversations(ctx(t), "acct_a", "proj_a", from, to, "", 40)
		mustNil(t, "ListConversations", err)
		cursor := page[len(page)-1]
		late := voiceops.Conversation{
			ID: conversationID(cursor.StartedAt.Add(time.Hour), 3), AccountID: "acct_a", ProjectID: "proj_a",
			StartedAt: cursor.StartedAt.Add(time.Hour), ExpiresAt: retained(), Version: 1,
		}
		late.StartedAt = time.UnixMilli(late.StartedAt.UnixMilli())
		mustConversation(t, s, late, nil)
		var rest []string
		for after := cursor.ID; ; {
			page, err := l.ListConversations(ctx(t), "acct_a", "proj_a", from, to, after, 25)
			mustNil(t, "ListConversations", err)
			if len(page) == 0 {
				break
			}
			rest = append(rest, conversationIDs(page)...)
			after = page[len(page)-1].ID
		}
		if !slices.Contains(rest, late.ID) {
			t.Errorf("the conversation added after the cursor is missing")
		}
		if len(rest) != n-40+1 {
			t.Errorf("after the first page: %d conversations, want %d", len(rest), n-40+1)
		}
	})
}

// testConversationBySharedID checks the handoff state's lookup: a shared
// ID set at creation, by the turn that hands off (AddTurn) or by an update
// is found, in its own project only, while the conversation carries it and
// lives.
func testConversationBySharedID(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	shared := func(what string) string { return "shr_" + what + "_" + voiceops.RandomBase62(12) }
	lookup := func(acct, proj, id string) (voiceops.Conversation, error) {
		return s.Conversations.ConversationBySharedID(ctx(t), acct, proj, id)
	}
	found := func(what string, want voiceops.Conversation) {
		t.Helper()
		got, err := lookup(want.AccountID, want.ProjectID, want.SharedID)
		mustNil(t, "ConversationBySharedID "+what, err)
		checkConversation(t, what, want, got)
	}
	notFound := func(what, acct, proj, id string) {
		t.Helper()
		_, err := lookup(acct, proj, id)
		wantErr(t, "ConversationBySharedID "+what, err, voiceops.ErrNotFound)
	}

	atCreate := newConversation("acct_a", "proj_a", at(0))
	atCreate.SharedID = shared("create")
	first := newTurn(0, at(0))
	mustConversation(t, s, atCreate, &first)
	found("set at creation", atCreate)

	plain := newConversation("acct_a", "proj_a", at(1))
	plain.SharedID, plain.Handoff, plain.InProgress, plain.EndedAt = "", false, true, nil
	mustConversation(t, s, plain, nil)
	handedOff := next(plain, func(c *voiceops.Conversation) {
		c.SharedID, c.Handoff, c.HandoffDestination, c.HandoffReason = shared("turn"), true, "support-queue", "asked for a human"
		c.InProgress, c.EndedAt, c.EndReason, c.NumTurns = false, ptr(at(30)), voiceops.EndHandoff, 2
	})
	mustNil(t, "AddTurn handing off", s.Conversations.AddTurn(ctx(t), handedOff, newTurn(1, at(20)), plain.Version))
	found("set by the turn that hands off", handedOff)

	updated := next(handedOff, func(c *voiceops.Conversation) { c.State = map[string]any{"bridged": true} })
	mustNil(t, "UpdateConversation", s.Conversations.UpdateConversation(ctx(t), updated, handedOff.Version))
	found("after an update", updated)

	renamed := next(updated, func(c *voiceops.Conversation) { c.SharedID = shared("renamed") })
	mustNil(t, "UpdateConversation changing the shared ID", s.Conversations.UpdateConversation(ctx(t), renamed, updated.Version))
	found("after a change of shared ID", renamed)
	notFound("of the shared ID before the change", "acct_a", "proj_a", updated.SharedID)

	stale := next(updated, func(c *voiceops.Conversation) { c.SharedID = shared("stale") })
	wantErr(t, "UpdateConversation at a stale version", s.Conversations.UpdateConversation(ctx(t), stale, updated.Version), voiceops.ErrConflictingWrite)
	notFound("written by a refused update", "acct_a", "proj_a", stale.SharedID)
	found("after a refused update", renamed)

	notFound("never given", "acct_a", "proj_a", shared("never"))
	notFound("empty", "acct_a", "proj_a", "")
	notFound("too long for a key", "acct_a", "proj_a", strings.Repeat("s", 4096))
	for _, other := range []struct{ acct, proj string }{{"acct_b", "proj_a"}, {"acct_a", "proj_b"}} {
		notFound("from "+other.acct+"/"+other.proj, other.acct, other.proj, atCreate.SharedID)
	}

	gone := newConversation("acct_a", "proj_a", at(2))
	gone.SharedID, gone.ExpiresAt = shared("expired"), time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	mustConversation(t, s, gone, nil)
	notFound("of an expired conversation", "acct_a", "proj_a", gone.SharedID)
}
