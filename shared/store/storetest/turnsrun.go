package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// testTurnsBetween: a run read (voiceops.TurnsRunReader, which both stores
// implement) returns for a live conversation of the project in the range
// exactly what Turns returns, and nothing of another project, of another
// tenant or of an expired conversation; a range across hours is refused.
// A store may leave out conversations it keeps otherwise (DynamoDB reads
// only those written before PageTurns: see TestPageTurnsOfOlderLayouts).
func testTurnsBetween(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	rr, ok := s.Conversations.(voiceops.TurnsRunReader)
	if !ok {
		t.Fatalf("%T does not read runs of turns", s.Conversations)
	}
	t0, t1 := newTurn(0, at(0)), newTurn(1, at(1))
	a := mustConversation(t, s, newConversation("acct_a", "proj_a", at(0)), &t0)
	a2 := next(a, func(c *voiceops.Conversation) { c.NumTurns = 3 })
	mustNil(t, "AddTurn", s.Conversations.AddTurn(ctx(t), a2, t1, a.Version))
	empty := mustConversation(t, s, newConversation("acct_a", "proj_a", at(1)), nil)
	gone := newConversation("acct_a", "proj_a", at(2))
	gone.ExpiresAt = time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	mustConversation(t, s, gone, &t0)
	mustConversation(t, s, newConversation("acct_a", "proj_b", at(2)), &t0)
	mustConversation(t, s, newConversation("acct_b", "proj_a", at(3)), &t0)
	last := mustConversation(t, s, newConversation("acct_a", "proj_a", at(4)), &t1)
	after := mustConversation(t, s, newConversation("acct_a", "proj_a", at(5)), &t0)

	got, err := rr.TurnsBetween(ctx(t), "acct_a", "proj_a", a.ID, last.ID)
	mustNil(t, "TurnsBetween", err)
	var ids []string
	for id := range got {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	want := []string{a.ID, empty.ID, last.ID}
	for _, id := range ids {
		if !slices.Contains(want, id) {
			t.Fatalf("TurnsBetween: conversations %v, want (some of) %v", ids, want)
		}
	}
	for _, c := range []voiceops.Conversation{a, empty, last} {
		if ts, ok := got[c.ID]; ok {
			checkTurns(t, "TurnsBetween "+c.ID, turnsOf(t, s, c), ts)
		}
	}
	if ts, ok := got[a.ID]; ok && len(ts) != 2 {
		t.Errorf("TurnsBetween: %d turns of %s, want 2", len(ts), a.ID)
	}

	one, err := rr.TurnsBetween(ctx(t), "acct_a", "proj_a", after.ID, after.ID)
	mustNil(t, "TurnsBetween of one", err)
	if len(one) > 1 || (len(one) == 1 && len(one[after.ID]) != 1) {
		t.Errorf("TurnsBetween of one conversation: %v", one)
	}
	later := mustConversation(t, s, newConversation("acct_a", "proj_a", at(3700)), nil)
	if _, err := rr.TurnsBetween(ctx(t), "acct_a", "proj_a", a.ID, later.ID); err == nil {
		t.Errorf("TurnsBetween across hours: no error")
	}
}

// testPageTurns: the turns of a listed page by key
// (voiceops.PageTurnsReader, which both stores implement) are exactly
// what Turns returns for each conversation it answers for, and only
// committed turns: a turn refused at a stale version is not on the page.
func testPageTurns(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	pr, ok := s.Conversations.(voiceops.PageTurnsReader)
	if !ok {
		t.Fatalf("%T does not read a page's turns", s.Conversations)
	}
	t0, t1 := newTurn(0, at(0)), newTurn(1, at(1))
	a := mustConversation(t, s, newConversation("acct_a", "proj_a", at(0)), &t0)
	a2 := next(a, func(c *voiceops.Conversation) { c.NumTurns = 2 })
	mustNil(t, "AddTurn", s.Conversations.AddTurn(ctx(t), a2, t1, a.Version))
	stale := next(a, func(c *voiceops.Conversation) { c.NumTurns = 3 })
	wantErr(t, "AddTurn at a stale version", s.Conversations.AddTurn(ctx(t), stale, newTurn(2, at(2)), a.Version), voiceops.ErrConflictingWrite)
	empty := mustConversation(t, s, newConversation("acct_a", "proj_a", at(1)), nil)
	mustConversation(t, s, newConversation("acct_b", "proj_a", at(2)), &t0)
	page, err := s.Conversations.ListConversations(ctx(t), "acct_a", "proj_a", at(-1), at(10), "", 10)
	mustNil(t, "ListConversations", err)
	if len(page) != 2 {
		t.Fatalf("listed %d conversations, want 2", len(page))
	}
	got, err := pr.PageTurns(ctx(t), "acct_a", "proj_a", page)
	mustNil(t, "PageTurns", err)
	for _, c := range []voiceops.Conversation{a, empty} {
		if ts, ok := got[c.ID]; ok {
			checkTurns(t, "PageTurns "+c.ID, turnsOf(t, s, c), ts)
		} else {
			t.Errorf("PageTurns left out %s, just listed", c.ID)
		}
	}
	if len(got[a.ID]) != 2 {
		t.Errorf("PageTurns: %d turns of %s, want 2", len(got[a.ID]), a.ID)
	}
	other, err := pr.PageTurns(ctx(t), "acct_b", "proj_a", page)
	mustNil(t, "PageTurns of another tenant", err)
	for id, ts := range other {
		if len(ts) > 0 {
			t.Errorf("PageTurns as acct_b read %d turns of acct_a's %s", len(ts), id)
		}
	}
}
