package apitest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// handedOff runs a chat on proj_a2 that the demo agent hands off, and
// returns the stored conversation.
func (h *harness) handedOff(tb testing.TB) voiceops.Conversation {
	tb.Helper()
	base := "/v1/acct_a/proj_a2/chat/"
	created := h.chat("POST", base+"create", h.keyA, h.agent2, `{"channel":"webchat","asr_lang_code":"en-GB","integration_attributes":{"crm":"c-9"}}`).Expect(tb, 200).JSON(tb)
	id := created["conversation_id"].(string)
	h.chat("POST", base+"respond", h.keyA, h.agent2, `{"conversation_id":"`+id+`","message":"agent please"}`).Expect(tb, 200)
	c, err := h.stores.Conversations.GetConversation(context.Background(), "acct_a", "proj_a2", id)
	if err != nil {
		tb.Fatal(err)
	}
	if !c.Handoff || c.SharedID == "" {
		tb.Fatalf("the chat did not hand off: %+v", c)
	}
	return c
}

func handoffPath(project string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Add(kv[i], kv[i+1])
	}
	return "/v1/acct_a/" + project + "/handoff_state?" + q.Encode()
}

func TestHandoffState(t *testing.T) {
	h := newHarness(t)
	c := h.handedOff(t)
	if !strings.HasPrefix(c.SharedID, "shr_") {
		t.Errorf("shared ID %q", c.SharedID)
	}
	other := h.handedOff(t)
	for _, q := range [][]string{{"id", c.ID}, {"shared_id", c.SharedID}, {"id", other.ID, "shared_id", c.SharedID}} {
		t.Run(strings.Join(q, "="), func(t *testing.T) {
			for _, key := range []string{h.keyA, h.projKey2} {
				got := h.do("GET", handoffPath("proj_a2", q...), key, nil).Expect(t, 200).JSON(t)
				if len(got) != 3 || got["id"] != c.ID || got["shared_id"] != c.SharedID {
					t.Errorf("handoff state %v, want {id: %s, shared_id: %s, data}", got, c.ID, c.SharedID)
				}
				data, ok := got["data"].(map[string]any)
				if !ok {
					t.Fatalf("data %v is not an object", got["data"])
				}
				if fmt.Sprint(data) != fmt.Sprint(c.State) {
					t.Errorf("data %v, want the conversation's state %v", data, c.State)
				}
			}
		})
	}
}

// TestHandoffStateOfStoredConversation: data is what the agent and the
// functions stored; {} when nothing.
func TestHandoffStateOfStoredConversation(t *testing.T) {
	h := newHarness(t)
	started := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	c := voiceops.Conversation{
		ID: voiceops.NewConversationID(started), AccountID: "acct_a", ProjectID: "proj_a1", Environment: voiceops.EnvSandbox,
		Channel: voiceops.ChannelVoice, VariantID: "main", State: map[string]any{"step": "billing", "verified": true, "n": 3},
		StartedAt: started, InProgress: true, NumTurns: 4,
		Handoff: true, HandoffDestination: "sip:desk@example.com", HandoffReason: "bridged", SharedID: "shr_bridge1", Version: 1,
	}
	if err := h.stores.Conversations.CreateConversation(context.Background(), c, nil); err != nil {
		t.Fatal(err)
	}
	got := h.do("GET", handoffPath("proj_a1", "shared_id", "shr_bridge1"), h.projKey, nil).Expect(t, 200).JSON(t)
	data, _ := got["data"].(map[string]any)
	if got["id"] != c.ID || data["step"] != "billing" || data["verified"] != true || data["n"] != 3.0 || len(data) != 3 {
		t.Errorf("handoff state %v", got)
	}
	c2 := c
	c2.ID, c2.SharedID, c2.State = voiceops.NewConversationID(started), "shr_bridge2", nil
	if err := h.stores.Conversations.CreateConversation(context.Background(), c2, nil); err != nil {
		t.Fatal(err)
	}
	got = h.do("GET", handoffPath("proj_a1", "id", c2.ID), h.projKey, nil).Expect(t, 200).JSON(t)
	if data, ok := got["data"].(map[string]any); !ok || len(data) != 0 {
		t.Errorf("data %v, want {}", got["data"])
	}
}

func TestHandoffStateErrors(t *testing.T) {
	h := newHarness(t)
	c := h.handedOff(t)
	plain := h.chat("POST", "/v1/acct_a/proj_a2/chat/create", h.keyA, h.agent2, `{}`).Expect(t, 200).JSON(t)["conversation_id"].(string)
	cases := []struct {
		name, path, key string
		status          int
		message         string
	}{
		{"no key", handoffPath("proj_a2", "id", c.ID), "", 401, "API key"},
		{"malformed key", handoffPath("proj_a2", "id", c.ID), "nope", 401, "API key"},
		{"agent token as key", handoffPath("proj_a2", "id", c.ID), h.agent2, 401, "API key"},
		{"key of another account", handoffPath("proj_a2", "id", c.ID), h.keyB, 403, "account"},
		{"project key of another project", handoffPath("proj_a2", "id", c.ID), h.projKey, 403, "project"},
		{"unknown project", handoffPath("proj_zz", "id", c.ID), h.keyA, 404, "account or project not found"},
		{"no handoff", handoffPath("proj_a2", "id", plain), h.keyA, 404, "no handoff"},
		{"unknown id", handoffPath("proj_a2", "id", "conv_17953416000000SampleConversation01"), h.keyA, 404, "conversation not found"},
		{"malformed id", handoffPath("proj_a2", "id", "../x"), h.keyA, 404, "conversation not found"},
		{"unknown shared_id", handoffPath("proj_a2", "shared_id", "shr_nope"), h.keyA, 404, "conversation not found"},
		{"id of another project", handoffPath("proj_a1", "id", c.ID), h.keyA, 404, "conversation not found"},
		{"shared_id of another project", handoffPath("proj_a1", "shared_id", c.SharedID), h.keyA, 404, "conversation not found"},
		{"neither", handoffPath("proj_a2"), h.keyA, 400, "id or shared_id must be given"},
		{"both, shared_id unknown", handoffPath("proj_a2", "id", c.ID, "shared_id", "shr_nope"), h.keyA, 404, "conversation not found"},
		{"empty id", handoffPath("proj_a2", "id", ""), h.keyA, 400, "id must not be empty"},
		{"empty shared_id", handoffPath("proj_a2", "shared_id", ""), h.keyA, 400, "shared_id must not be empty"},
		{"id twice", handoffPath("proj_a2", "id", c.ID, "id", c.ID), h.keyA, 400, "id must be given once"},
		{"shared_id too long", handoffPath("proj_a2", "shared_id", strings.Repeat("s", 257)), h.keyA, 400, "at most 256"},
		{"auth before validation", handoffPath("proj_a2"), h.keyB, 403, "account"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := h.do("GET", c.path, c.key, nil).Expect(t, c.status)
			if msg, _ := res.JSON(t)["error_message"].(string); !strings.Contains(msg, c.message) {
				t.Errorf("error_message %q, want it to contain %q", msg, c.message)
			}
		})
	}
}
