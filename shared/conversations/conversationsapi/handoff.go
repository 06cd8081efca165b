package conversationsapi

import (
	"errors"
	"net/http"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Handoff is the handoff state route (functions/conversations).
type Handoff struct {
	Store voiceops.ConversationStore
}

// Routes lists the handoff state route (the base host).
func (g *Handoff) Routes() []httpapi.Route {
	return []httpapi.Route{httpapi.BaseRoute("GET", "/v1/{account_id}/{project_id}/handoff_state", httpapi.ProjectKey, g.handoffState)}
}

// maxSharedIDLength bounds the shared_id parameter (the engine's shared IDs
// are a few dozen characters).
const maxSharedIDLength = 256

var (
	errNoConversation = voiceops.Errorf(voiceops.KindNotFound, "conversation not found")
	errNoHandoff      = voiceops.Errorf(voiceops.KindNotFound, "no handoff")
)

// handoffStateJSON is the vendor's handoff state: the conversation's ID,
// the ID it shares with the system it was handed to, and data, the
// key-value data the agent and the project functions stored for the
// handoff: the conversation's state as it was at the handoff ({} when
// empty). The handoff answer itself (destination, reason) went to the
// client with the turn that handed off.
type handoffStateJSON struct {
	ID       string         `json:"id"`
	SharedID string         `json:"shared_id"`
	Data     map[string]any `json:"data"`
}

func toHandoffStateJSON(c voiceops.Conversation) handoffStateJSON {
	data := c.State
	if data == nil {
		data = map[string]any{}
	}
	return handoffStateJSON{ID: c.ID, SharedID: c.SharedID, Data: data}
}

// handoffState answers the handoff state of a conversation named by its
// ID (id=) or by the ID it shares with the system it was handed to
// (shared_id=); with both, shared_id wins (the vendor's precedence), and
// id is then not looked up. A conversation that was not handed off is 404
// "no handoff", like one that does not exist.
func (g *Handoff) handoffState(w http.ResponseWriter, r *http.Request, t httpapi.Caller) error {
	q := r.URL.Query()
	var errs []voiceops.FieldError
	for _, name := range []string{"id", "shared_id"} {
		switch vs := q[name]; {
		case len(vs) > 1:
			errs = append(errs, voiceops.FieldError{Field: name, Message: "must be given once"})
		case len(vs) == 1 && vs[0] == "":
			errs = append(errs, voiceops.FieldError{Field: name, Message: "must not be empty"})
		}
	}
	id, sharedID := q.Get("id"), q.Get("shared_id")
	switch {
	case !q.Has("id") && !q.Has("shared_id"):
		errs = append(errs, voiceops.FieldError{Field: "id", Message: "id or shared_id must be given"})
	case len(sharedID) > maxSharedIDLength:
		errs = append(errs, voiceops.FieldError{Field: "shared_id", Message: "must be at most 256 characters"})
	}
	if len(errs) > 0 {
		return &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "invalid query parameter", Fields: errs}
	}

	var c voiceops.Conversation
	var err error
	if sharedID != "" {
		c, err = g.Store.ConversationBySharedID(r.Context(), t.AccountID, t.ProjectID, sharedID)
	} else {
		c, err = g.Store.GetConversation(r.Context(), t.AccountID, t.ProjectID, id)
	}
	switch {
	case errors.Is(err, voiceops.ErrNotFound):
		return errNoConversation
	case err != nil:
		return err
	case !c.Handoff:
		return errNoHandoff
	}
	httpapi.WriteJSON(w, http.StatusOK, toHandoffStateJSON(c))
	return nil
}
