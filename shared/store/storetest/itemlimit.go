package storetest

import (
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// The item limit (voiceops.MaxItemBytes, DynamoDB's 400 KB): a record just
// under it is stored whole; one over it is refused with KindTooLarge (413,
// not a 500) and nothing is written. Both stores draw the line, so the dev
// server behaves like DynamoDB.

// big is a string of n bytes.
func big(n int) string { return strings.Repeat("x", n) }

func wantTooLarge(t *testing.T, what string, err error) {
	t.Helper()
	if k := voiceops.KindOf(err); k != voiceops.KindTooLarge {
		t.Errorf("%s: want a KindTooLarge error, got %v (kind %d)", what, err, k)
	}
}

func testConversationItemLimit(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	under, over := voiceops.MaxItemBytes-20<<10, voiceops.MaxItemBytes+1

	t.Run("a conversation just under the limit round-trips", func(t *testing.T) {
		c := newConversation("acct_a", "proj_a", at(0))
		c.IntegrationAttributes = map[string]any{"blob": big(under)}
		mustConversation(t, s, c, nil)
		checkConversation(t, "GetConversation", c, getConversation(t, s, c))
	})
	t.Run("a conversation over the limit is refused and not stored", func(t *testing.T) {
		c := newConversation("acct_a", "proj_a", at(1))
		c.IntegrationAttributes = map[string]any{"blob": big(over)}
		wantTooLarge(t, "CreateConversation", s.Conversations.CreateConversation(ctx(t), c, nil))
		_, err := s.Conversations.GetConversation(ctx(t), c.AccountID, c.ProjectID, c.ID)
		wantErr(t, "GetConversation after the refused create", err, voiceops.ErrNotFound)
	})
	t.Run("a first turn over the limit refuses the whole create", func(t *testing.T) {
		c := newConversation("acct_a", "proj_a", at(2))
		first := newTurn(0, at(2))
		first.AgentResponse = big(over)
		wantTooLarge(t, "CreateConversation", s.Conversations.CreateConversation(ctx(t), c, &first))
		_, err := s.Conversations.GetConversation(ctx(t), c.AccountID, c.ProjectID, c.ID)
		wantErr(t, "GetConversation after the refused create", err, voiceops.ErrNotFound)
	})

	c := newConversation("acct_a", "proj_a", at(3))
	c.InProgress, c.EndedAt, c.NumTurns = true, nil, 1
	first := newTurn(0, at(3))
	mustConversation(t, s, c, &first)
	t.Run("a turn over the limit changes nothing", func(t *testing.T) {
		tn := newTurn(1, at(4))
		tn.Metadata = map[string]any{"blob": big(over)}
		c2 := next(c, func(c *voiceops.Conversation) { c.NumTurns = 2 })
		wantTooLarge(t, "AddTurn", s.Conversations.AddTurn(ctx(t), c2, tn, c.Version))
		checkConversation(t, "after the refused AddTurn", c, getConversation(t, s, c))
		checkTurns(t, "turns after the refused AddTurn", []voiceops.Turn{first}, turnsOf(t, s, c))
	})
	t.Run("a conversation grown over the limit changes nothing", func(t *testing.T) {
		tn := newTurn(1, at(4))
		c2 := next(c, func(c *voiceops.Conversation) { c.NumTurns, c.State = 2, map[string]any{"blob": big(over)} })
		wantTooLarge(t, "AddTurn", s.Conversations.AddTurn(ctx(t), c2, tn, c.Version))
		wantTooLarge(t, "UpdateConversation", s.Conversations.UpdateConversation(ctx(t), c2, c.Version))
		checkConversation(t, "after the refused writes", c, getConversation(t, s, c))
		checkTurns(t, "turns after the refused writes", []voiceops.Turn{first}, turnsOf(t, s, c))
	})
}

func testEndpointItemLimit(t *testing.T, newStores func(*testing.T) voiceops.Stores) {
	s := newStores(t)
	a := mustAccount(t, s)
	e := newEndpoint(a.ID, 1)
	e.Headers = map[string]string{"X-Big": big(voiceops.MaxItemBytes + 1)}
	wantTooLarge(t, "CreateEndpoint", s.Endpoints.CreateEndpoint(ctx(t), e))
	_, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, e.ID)
	wantErr(t, "GetEndpoint after the refused create", err, voiceops.ErrNotFound)

	ok := newEndpoint(a.ID, 2)
	mustNil(t, "CreateEndpoint", s.Endpoints.CreateEndpoint(ctx(t), ok))
	grown := ok
	grown.Headers, grown.Version = map[string]string{"X-Big": big(voiceops.MaxItemBytes + 1)}, ok.Version+1
	wantTooLarge(t, "UpdateEndpoint", s.Endpoints.UpdateEndpoint(ctx(t), grown, ok.Version))
	got, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, ok.ID)
	mustNil(t, "GetEndpoint", err)
	checkEndpoint(t, "after the refused update", ok, got)
}
