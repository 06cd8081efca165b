package apitest

import (
	"github.com/voiceops/opsapi/shared/testsupport/spectest"

	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// chat sends a base-host chat request with the given X-API-KEY and X-TOKEN.
func (h *harness) chat(method, path, apiKey, token, body string) response {
	h.t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	if apiKey != "" {
		req.Header.Set("X-API-KEY", apiKey)
	}
	if token != "" {
		req.Header.Set("X-TOKEN", token)
	}
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	res := response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if h.check {
		if err := spectest.Validator(h.t).Check(req, res.Status, res.Header, res.Body); err != nil {
			h.t.Errorf("%s %s -> %d %s: response does not match the OpenAPI document: %v", method, path, res.Status, res.Body, err)
		}
	}
	return res
}

func TestChatConversation(t *testing.T) {
	h := newHarness(t)
	base := "/v1/acct_a/proj_a1/chat/"
	created := h.chat("POST", base+"create", h.keyA, h.agent, `{"channel":"webchat","asr_lang_code":"en-GB","integration_attributes":{"crm":"c-1"}}`).Expect(t, 200).JSON(t)
	id, _ := created["conversation_id"].(string)
	if !voiceops.ValidConversationID(id) || !strings.HasPrefix(created["response"].(string), "Welcome to Acme") {
		t.Fatalf("create: %v", created)
	}
	got := h.chat("POST", base+"respond", h.keyA, h.agent, `{"conversation_id":"`+id+`","message":"balance","metadata":{"page":"/x"}}`).Expect(t, 200).JSON(t)
	if got["conversation_id"] != id || got["end_conversation"] != false || !strings.Contains(got["response"].(string), "1,234.56") {
		t.Errorf("respond: %v", got)
	}
	if _, has := got["handoff"]; has {
		t.Errorf("handoff present without a handoff: %v", got)
	}
	// A project-scoped key of the project works too.
	h.chat("POST", base+"respond", h.projKey, h.agent, `{"conversation_id":"`+id+`"}`).Expect(t, 200)
	if got := h.chat("PUT", base+"close", h.keyA, h.agent, `{"conversation_id":"`+id+`"}`).Expect(t, 200).JSON(t); got["success"] != true {
		t.Errorf("close: %v", got)
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", base + "respond", `{"conversation_id":"` + id + `","message":"hi"}`},
		{"PUT", base + "close", `{"conversation_id":"` + id + `"}`},
	} {
		res := h.chat(c.method, c.path, h.keyA, h.agent, c.body).Expect(t, 410)
		if res.JSON(t)["error_message"] == "" {
			t.Errorf("410 body %s", res.Body)
		}
	}
	c, err := h.stores.Conversations.GetConversation(context.Background(), "acct_a", "proj_a1", id)
	if err != nil || c.Channel != voiceops.ChannelWebchat || c.ASRLang != "en-GB" || c.IntegrationAttributes["crm"] != "c-1" ||
		c.EndReason != voiceops.EndClosed || c.NumTurns != 3 {
		t.Errorf("stored conversation %+v %v", c, err)
	}
	turns, _ := h.stores.Conversations.Turns(context.Background(), "acct_a", "proj_a1", id)
	if len(turns) != 3 || turns[1].Metadata["page"] != "/x" {
		t.Errorf("turns %+v", turns)
	}
}

func TestChatHandoffAndInitialMessage(t *testing.T) {
	h := newHarness(t)
	base := "/v1/acct_a/proj_a2/chat/"
	created := h.chat("POST", base+"create", h.keyA, h.agent2, `{"initial_message":"press 1","variant_id":"express"}`).Expect(t, 200).JSON(t)
	if created["response"] != "Sorry? Balance, agent or bye." {
		t.Errorf("initial message answered with %v", created["response"])
	}
	id := created["conversation_id"].(string)
	got := h.chat("POST", base+"respond", h.keyA, h.agent2, `{"conversation_id":"`+id+`","message":"agent please"}`).Expect(t, 200).JSON(t)
	ho, _ := got["handoff"].(map[string]any)
	if got["end_conversation"] != true || ho["destination"] != "support-queue" || ho["reason"] != "caller asked for a human" {
		t.Errorf("handoff answer %v", got)
	}
	// The shared ID reads the handoff context back.
	req := httptest.NewRequest("GET", "/v1/acct_a/proj_a2/handoff_state?shared_id="+ho["shared_id"].(string), nil)
	req.Header.Set("x-api-key", h.keyA)
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"id":"`+id+`"`) || !strings.Contains(rec.Body.String(), `"data":{`) {
		t.Errorf("handoff_state: %d %s", rec.Code, rec.Body)
	}
}

func TestChatAuthAndValidation(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	unknownTok := keys.New(voiceops.KeyAgent, voiceops.RegionUS)
	otherAcctTok, _, err := h.prov.CreateKey(ctx, voiceops.KeyAgent, "acct_b", "proj_b1")
	if err != nil {
		t.Fatal(err)
	}
	create := "/v1/acct_a/proj_a1/chat/create"
	cases := []struct {
		name        string
		path, key   string
		token, body string
		status      int
	}{
		{"no api key", create, "", h.agent, `{}`, 401},
		{"bad api key", create, "nope", h.agent, `{}`, 401},
		{"agent token as api key", create, h.agent, h.agent, `{}`, 401},
		{"no token", create, h.keyA, "", `{}`, 401},
		{"unknown token", create, h.keyA, unknownTok, `{}`, 401},
		{"api key of another account", create, h.keyB, h.agent, `{}`, 403},
		{"project key of another project", create, h.projKey2, h.agent, `{}`, 403},
		{"token of another project", create, h.keyA, h.agent2, `{}`, 403},
		{"token of another account", create, h.keyA, otherAcctTok, `{}`, 403},
		// An account-scoped key on an unknown project of its account: 404.
		{"unknown project", "/v1/acct_a/proj_zz/chat/create", h.keyA, h.agent, `{}`, 404},
		{"unknown account", "/v1/acct_zz/proj_a1/chat/create", h.keyA, h.agent, `{}`, 403},
		{"version v2", "/v2/acct_a/proj_a1/chat/create", h.keyA, h.agent, `{}`, 404},
		{"bad channel", create, h.keyA, h.agent, `{"channel":"fax"}`, 400},
		{"bad language", create, h.keyA, h.agent, `{"asr_lang_code":"english"}`, 400},
		{"unknown field", create, h.keyA, h.agent, `{"colour":"red"}`, 400},
		{"unknown variant", create, h.keyA, h.agent, `{"variant_id":"nope"}`, 400},
		{"attributes not an object", create, h.keyA, h.agent, `{"integration_attributes":[1]}`, 400},
		{"not JSON", create, h.keyA, h.agent, `{`, 400},
		{"respond without id", "/v1/acct_a/proj_a1/chat/respond", h.keyA, h.agent, `{"message":"hi"}`, 400},
		{"respond unknown id", "/v1/acct_a/proj_a1/chat/respond", h.keyA, h.agent, `{"conversation_id":"conv_17953416000000SampleConversation01"}`, 404},
		{"respond variant", "/v1/acct_a/proj_a1/chat/respond", h.keyA, h.agent, `{"conversation_id":"x","variant_id":"main"}`, 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method := "POST"
			res := h.chat(method, c.path, c.key, c.token, c.body).Expect(t, c.status)
			var body map[string]any
			if err := json.Unmarshal(res.Body, &body); err != nil || body["error_message"] == "" {
				t.Errorf("error body %s", res.Body)
			}
		})
	}
	// A project without an agent: its token works, but there is nobody to talk to.
	if _, err := h.prov.CreateProject(ctx, "acct_a", "proj_a3", "no agent"); err != nil {
		t.Fatal(err)
	}
	tok3, _, err := h.prov.CreateKey(ctx, voiceops.KeyAgent, "acct_a", "proj_a3")
	if err != nil {
		t.Fatal(err)
	}
	h.chat("POST", "/v1/acct_a/proj_a3/chat/create", h.keyA, tok3, `{}`).Expect(t, 404)
}
