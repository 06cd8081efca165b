package apitest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// The size limits of the fields that reach a stored record: over
// its limit a field is 400 in the base host's shape, naming the field, and nothing
// changes. (On DynamoDB these bodies were 500s: the item limit.)
func TestFieldSizeLimits(t *testing.T) {
	h := newHarness(t)
	base := "/v1/acct_a/proj_a1/chat/"
	id := h.chat("POST", base+"create", h.keyA, h.agent, `{}`).Expect(t, 200).JSON(t)["conversation_id"].(string)
	obj := func(n int) string { return `{"blob":"` + strings.Repeat("a", n) + `"}` }
	str := func(n int) string { return `"` + strings.Repeat("a", n) + `"` }

	for _, c := range []struct {
		name, path, body, field string
	}{
		{"create: 700 KB integration_attributes", "create", `{"integration_attributes":` + obj(700<<10) + `}`, "integration_attributes"},
		{"create: attributes one byte over", "create", `{"integration_attributes":` + obj(voiceops.MaxAttributesBytes-11+1) + `}`, "integration_attributes"},
		{"create: 40 KB initial_message", "create", `{"initial_message":` + str(40<<10) + `}`, "initial_message"},
		{"respond: 500 KB metadata", "respond", `{"conversation_id":"` + id + `","metadata":` + obj(500<<10) + `}`, "metadata"},
		{"respond: 900 KB message", "respond", `{"conversation_id":"` + id + `","message":` + str(900<<10) + `}`, "message"},
		{"respond: message one byte over", "respond", `{"conversation_id":"` + id + `","message":` + str(voiceops.MaxMessageBytes+1) + `}`, "message"},
		{"respond: 100 KB integration_attributes", "respond", `{"conversation_id":"` + id + `","integration_attributes":` + obj(100<<10) + `}`, "integration_attributes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := h.chat("POST", base+c.path, h.keyA, h.agent, c.body).Expect(t, 400)
			msg, _ := res.JSON(t)["error_message"].(string)
			if !strings.Contains(msg, c.field+" is ") || !strings.Contains(msg, "bytes are accepted") {
				t.Errorf("error_message %q does not name %s and its limit", msg, c.field)
			}
		})
	}
	conv, err := h.stores.Conversations.GetConversation(context.Background(), "acct_a", "proj_a1", id)
	if err != nil || conv.NumTurns != 1 || len(conv.IntegrationAttributes) != 0 {
		t.Errorf("the refused responds changed the conversation: %+v %v", conv, err)
	}

	// At the limit: accepted.
	h.chat("POST", base+"respond", h.keyA, h.agent, `{"conversation_id":"`+id+`","message":`+str(voiceops.MaxMessageBytes)+`}`).Expect(t, 200)
	h.chat("POST", base+"create", h.keyA, h.agent, `{"integration_attributes":`+obj(voiceops.MaxAttributesBytes-11)+`}`).Expect(t, 200)

	// Each turn's attributes are under the limit, their merge is not: 400,
	// and the conversation keeps what it had.
	half := voiceops.MaxAttributesBytes/2 + 1
	h.chat("POST", base+"respond", h.keyA, h.agent, fmt.Sprintf(`{"conversation_id":%q,"integration_attributes":{"a":%s}}`, id, str(half))).Expect(t, 200)
	res := h.chat("POST", base+"respond", h.keyA, h.agent, fmt.Sprintf(`{"conversation_id":%q,"integration_attributes":{"b":%s}}`, id, str(half))).Expect(t, 400)
	if msg, _ := res.JSON(t)["error_message"].(string); !strings.Contains(msg, "integration_attributes is ") {
		t.Errorf("merge over the limit: %q", msg)
	}
	conv, _ = h.stores.Conversations.GetConversation(context.Background(), "acct_a", "proj_a1", id)
	if _, has := conv.IntegrationAttributes["b"]; has || conv.NumTurns != 3 {
		t.Errorf("the refused merge changed the conversation: turns %d, attributes %d", conv.NumTurns, len(conv.IntegrationAttributes))
	}

	// Voice: the transcript, DTMF and metadata of a turn.
	tenant := `"account_id":"acct_a","project_id":"proj_a1"`
	call := h.voice("/internal/v1/voice/calls", testInternalKey, `{`+tenant+`,"from_number":"+441632960001","to_number":"+441632960002"}`).Expect(t, 200).JSON(t)["conversation_id"].(string)
	for field, body := range map[string]string{
		"transcript": `{` + tenant + `,"transcript":` + str(voiceops.MaxMessageBytes+1) + `}`,
		"dtmf":       `{` + tenant + `,"dtmf":` + str(voiceops.MaxDTMFBytes+1) + `}`,
		"metadata":   `{` + tenant + `,"metadata":` + obj(500<<10) + `}`,
	} {
		res := h.voice("/internal/v1/voice/calls/"+call+"/turns", testInternalKey, body).Expect(t, 400)
		if msg, _ := res.JSON(t)["error_message"].(string); !strings.Contains(msg, field+" is ") {
			t.Errorf("voice %s: %q", field, msg)
		}
	}
}
