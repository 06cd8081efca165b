package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// testTurnsBetween: a run read (voiceops.TurnsRunReader, which both stores
// implement) returns for each live conversation of the project in the
// range exactly what Turns returns, and nothing of another project, of
// another tenant or of an expired conversation; a range across hours is
// refused.
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
	if want := []string{a.ID, empty.ID, last.ID}; !slices.Equal(ids, want) {
		t.Fatalf("TurnsBetween: conversations %v, want %v", ids, want)
	}
	for _, c := range []voiceops.Conversation{a, empty, last} {
		checkTurns(t, "TurnsBetween "+c.ID, turnsOf(t, s, c), got[c.ID])
	}
	if len(got[a.ID]) != 2 {
		t.Errorf("TurnsBetween: %d turns of %s, want 2", len(got[a.ID]), a.ID)
	}

	one, err := rr.TurnsBetween(ctx(t), "acct_a", "proj_a", after.ID, after.ID)
	mustNil(t, "TurnsBetween of one", err)
	if len(one) != 1 || len(one[after.ID]) != 1 {
		t.Errorf("TurnsBetween of one conversation: %v", one)
	}
	later := mustConversation(t, s, newConversation("acct_a", "proj_a", at(3700)), nil)
	if _, err := rr.TurnsBetween(ctx(t), "acct_a", "proj_a", a.ID, later.ID); err == nil {
		t.Errorf("TurnsBetween across hours: no error")
	}
}
