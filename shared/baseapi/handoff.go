package baseapi

import (
	"errors"
	"net/http"

	"github.com/voiceops/opsapi/shared/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Handoff is the handoff state route (functions/conversations).
type Handoff struct {
	Store voiceops.ConversationStore
}

// Routes lists the handoff state route (doc 2).
func (g *Handoff) Routes() []httpapi.Route {
	return []httpapi.Route{doc2("GET", "/v1/{account_id}/{project_id}/handoff_state", httpapi.ProjectKey, g.handoffState)}
}

// maxSharedIDLength bounds the shared_id parameter (the engine's shared IDs
// are a few dozen characters).
const maxSharedIDLength = 256

var (
	errNoConversation = voiceops.Errorf(voiceops.KindNotFound, "conversation not found")
	errNoHandoff      = voiceops.Errorf(voiceops.KindNotFound, "no handoff")
)

// handoffStateJSON is the handoff context of a conversation: what the
// system that takes the conversation over needs to carry on (where and why
// it was handed off, the agent's state, who called whom, in which
// language), in the style of the v3 conversations list (empty strings,
// not null, for absent text).
type handoffStateJSON struct {
	ConversationID        string         `json:"conversation_id"`
	SharedID              string         `json:"shared_id"`
	AccountID             string         `json:"account_id"`
	ProjectID             string         `json:"project_id"`
	Handoff               bool           `json:"handoff"`
	Destination           string         `json:"destination"`
	Reason                string         `json:"reason"`
	State                 map[string]any `json:"state"`
	IntegrationAttributes map[string]any `json:"integration_attributes"`
	Environment           string         `json:"environment"`
	Channel               string         `json:"channel"`
	VariantID             string         `json:"variant_id"`
	VariantName           string         `json:"variant_name"`
	FromNumber            string         `json:"from_number"`
	ToNumber              string         `json:"to_number"`
	ASRLangCode           string         `json:"asr_lang_code"`
	TTSLangCode           string         `json:"tts_lang_code"`
	StartedAt             string         `json:"started_at"`
	EndedAt               *string        `json:"ended_at"`
	InProgress            bool           `json:"in_progress"`
	NumTurns              int            `json:"num_turns"`
}

func toHandoffStateJSON(c voiceops.Conversation) handoffStateJSON {
	state, attrs := c.State, c.IntegrationAttributes
	if state == nil {
		state = map[string]any{}
	}
	if attrs == nil {
		attrs = map[string]any{}
	}
	return handoffStateJSON{
		ConversationID: c.ID, SharedID: c.SharedID, AccountID: c.AccountID, ProjectID: c.ProjectID,
		Handoff: c.Handoff, Destination: c.HandoffDestination, Reason: c.HandoffReason,
		State: state, IntegrationAttributes: attrs,
		Environment: string(c.Environment), Channel: string(c.Channel),
		VariantID: c.VariantID, VariantName: c.VariantName, FromNumber: c.FromNumber, ToNumber: c.ToNumber,
		ASRLangCode: c.ASRLang, TTSLangCode: c.TTSLang,
		StartedAt: httpapi.Time(c.StartedAt), EndedAt: httpapi.TimePtr(c.EndedAt), InProgress: c.InProgress,
		NumTurns: c.NumTurns,
	}
}

// handoffState answers the handoff context of a conversation named by its
// ID (id=) or by the ID it shares with the system it was handed to
// (shared_id=): exactly one of the two. A conversation that was not handed
// off is 404 "no handoff", like one that does not exist.
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
	case q.Has("id") == q.Has("shared_id"):
		errs = append(errs, voiceops.FieldError{Field: "id", Message: "exactly one of id and shared_id must be given"})
	case len(sharedID) > maxSharedIDLength:
		errs = append(errs, voiceops.FieldError{Field: "shared_id", Message: "must be at most 256 characters"})
	}
	if len(errs) > 0 {
		return &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "invalid query parameter", Fields: errs}
	}

	var c voiceops.Conversation
	var err error
	if id != "" {
		c, err = g.Store.GetConversation(r.Context(), t.AccountID, t.ProjectID, id)
	} else {
		c, err = g.Store.ConversationBySharedID(r.Context(), t.AccountID, t.ProjectID, sharedID)
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
