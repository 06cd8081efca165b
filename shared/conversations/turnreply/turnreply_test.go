package turnreply

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Write answers what httpapi.WriteJSON of Of answers, byte for byte: with
// and without a handoff (a destination, or a SIP endpoint in its place),
// at the end or not, and texts that need escaping.
func TestWriteAsEncodingJSON(t *testing.T) {
	texts := []string{"Your balance is 42 pounds.", `quo"te\`, "<b>&amp;</b>", "tab\tnl\n\x01\x7f", "é 日本 😀", "bad\xffutf8", "sep\u2028\u2029", ""}
	handoffs := []*agent.Handoff{nil, {Destination: "queue-billing", Reason: "asked for a person"},
		{Reason: "transfer", SIP: &agent.SIPHandoff{OutboundEndpoint: "sip:desk@example.com"}}, {}}
	for i, text := range texts {
		for j, h := range handoffs {
			ans := conversation.Answer{Response: text, End: (i+j)%2 == 0, Handoff: h,
				Conversation: voiceops.Conversation{SharedID: texts[(i+j)%len(texts)]}}
			id := "conv_" + texts[(i+1)%len(texts)]
			want, got := httptest.NewRecorder(), httptest.NewRecorder()
			httpapi.WriteJSON(want, http.StatusOK, Of(id, ans))
			Write(got, id, ans)
			if got.Body.String() != want.Body.String() || got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
				t.Errorf("text %q, handoff %+v:\n got %d %s %s\nwant %d %s %s", text, h, got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
			}
		}
	}
}
