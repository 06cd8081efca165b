// Package turnreply holds the JSON bodies that the base host's groups
// running conversations share (the base host): the agent's reply to a turn (chat
// respond and the voice intake), {"success": true}, and the conversation_id
// of a request body.
package turnreply

import (
	"net/http"
	"strconv"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/jsontext"
)

// Handoff is a reply's handoff.
type Handoff struct {
	Destination string `json:"destination"`
	Reason      string `json:"reason"`
	// SharedID reads the handoff context back (handoff_state?shared_id=).
	SharedID string `json:"shared_id"`
}

// Reply is the agent's reply to a turn.
type Reply struct {
	ConversationID  string   `json:"conversation_id"`
	Response        string   `json:"response"`
	EndConversation bool     `json:"end_conversation"`
	Handoff         *Handoff `json:"handoff,omitempty"`
}

// Of is the reply of the answer ans in the conversation id.
func Of(id string, ans conversation.Answer) Reply {
	return Reply{ConversationID: id, Response: ans.Response, EndConversation: ans.End, Handoff: handoff(ans.Handoff, ans.Conversation.SharedID)}
}

// Write answers the reply of the answer ans in the conversation id: Of's
// JSON as httpapi.WriteJSON encodes it, written by hand (a turn is
// answered without reflection; turnreply_test.go holds the two equal).
func Write(w http.ResponseWriter, id string, ans conversation.Answer) {
	r := Of(id, ans)
	httpapi.WriteAppended(w, http.StatusOK, func(b []byte) []byte { return appendReply(b, r) })
}

func appendReply(b []byte, r Reply) []byte {
	b = append(b, `{"conversation_id":`...)
	b = jsontext.AppendString(b, r.ConversationID)
	b = append(b, `,"response":`...)
	b = jsontext.AppendString(b, r.Response)
	b = append(b, `,"end_conversation":`...)
	b = strconv.AppendBool(b, r.EndConversation)
	if h := r.Handoff; h != nil {
		b = append(b, `,"handoff":{"destination":`...)
		b = jsontext.AppendString(b, h.Destination)
		b = append(b, `,"reason":`...)
		b = jsontext.AppendString(b, h.Reason)
		b = append(b, `,"shared_id":`...)
		b = jsontext.AppendString(b, h.SharedID)
		b = append(b, '}')
	}
	return append(b, '}')
}

func handoff(h *agent.Handoff, sharedID string) *Handoff {
	if h == nil {
		return nil
	}
	out := &Handoff{Destination: h.Destination, Reason: h.Reason, SharedID: sharedID}
	if out.Destination == "" && h.SIP != nil {
		out.Destination = h.SIP.OutboundEndpoint
	}
	return out
}

// Success is {"success": true}.
type Success struct {
	Success bool `json:"success"`
}

// OK is the body of a request that succeeded with nothing else to say.
var OK = Success{Success: true}

// ConversationID reads the required conversation_id of a body.
func ConversationID(o *httpapi.Object) string {
	id, ok := o.Str("conversation_id", true)
	if ok && (id == "" || len(id) > 128) {
		o.Fail("conversation_id", "must be a conversation ID")
	}
	return id
}
