package api

import (
	"net/http"

	"github.com/voiceops/opsapi/shared/conversation"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// voiceRoutes lists the internal routes of the telephony system: a call
// starts, each user turn (transcript, DTMF or silence) is answered, and the
// call ends (completed or crashed). They need the internal key
// (X-Internal-Key) and answer errors in doc 2's shape; functions/calls
// serves them.
func voiceRoutes(s *server, mux *http.ServeMux) {
	mux.Handle("POST /internal/v1/voice/calls", s.internalDoc2(s.voiceStart))
	mux.Handle("POST /internal/v1/voice/calls/{conversation_id}/turns", s.internalDoc2(s.voiceTurn))
	mux.Handle("POST /internal/v1/voice/calls/{conversation_id}/end", s.internalDoc2(s.voiceEnd))
}

// internalDoc2 checks the internal key and answers errors in doc 2's shape.
func (s *server) internalDoc2(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return s.doc2(func(w http.ResponseWriter, r *http.Request) error {
		if err := s.checkInternalKey(r.Header.Get("X-Internal-Key")); err != nil {
			return err
		}
		return h(w, r)
	})
}

// readTenant reads the account and project a telephony request is for.
func readTenant(o *object) (accountID, projectID string) {
	accountID, _ = o.str("account_id", true)
	projectID, _ = o.str("project_id", true)
	if accountID != "" && !voiceops.ValidTenantID(accountID) {
		o.fail("account_id", "must be an account ID")
	}
	if projectID != "" && !voiceops.ValidTenantID(projectID) {
		o.fail("project_id", "must be a project ID")
	}
	return accountID, projectID
}

func (s *server) voiceStart(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	in := conversation.StartInput{Channel: voiceops.ChannelVoice}
	in.AccountID, in.ProjectID = readTenant(o)
	in.FromNumber, _ = o.str("from_number", true)
	in.ToNumber, _ = o.str("to_number", true)
	in.VariantID, _ = o.str("variant_id", false)
	if v, ok := o.str("language", false); ok {
		if !langPattern.MatchString(v) {
			o.fail("language", "must be a language code with a region, such as en-GB")
		}
		in.ASRLang, in.TTSLang = v, v
	}
	if v, ok := o.str("environment", false); ok {
		env, ok := voiceops.ParseEnum(v, voiceops.Environments)
		if !ok {
			o.fail("environment", voiceops.OneOf(voiceops.Environments))
		}
		in.Environment = env
	}
	in.IntegrationAttributes, _ = o.jsonObject("integration_attributes", true)
	if err := o.done(); err != nil {
		return err
	}
	ans, err := s.Conversations.Start(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, chatRespondJSON{ConversationID: ans.Conversation.ID, Response: ans.Response,
		EndConversation: ans.End, Handoff: toHandoffJSON(ans.Handoff, ans.Conversation.SharedID)})
	return nil
}

func (s *server) voiceTurn(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	acct, proj := readTenant(o)
	var in conversation.TurnInput
	in.Message, _ = o.str("transcript", false)
	in.DTMF, _ = o.str("dtmf", false)
	in.Silence, _ = o.boolean("silence", false)
	in.Metadata, _ = o.jsonObject("metadata", true)
	if in.Silence && (in.Message != "" || in.DTMF != "") {
		o.fail("silence", "a silent turn has no transcript or DTMF")
	}
	if err := o.done(); err != nil {
		return err
	}
	id := r.PathValue("conversation_id")
	ans, err := s.Conversations.Respond(r.Context(), acct, proj, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, chatRespondJSON{ConversationID: id, Response: ans.Response,
		EndConversation: ans.End, Handoff: toHandoffJSON(ans.Handoff, ans.Conversation.SharedID)})
	return nil
}

func (s *server) voiceEnd(w http.ResponseWriter, r *http.Request) error {
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	acct, proj := readTenant(o)
	reason := voiceops.EndCompleted
	if v, ok := o.str("outcome", true); ok {
		switch voiceops.EndReason(v) {
		case voiceops.EndCompleted, voiceops.EndCrashed:
			reason = voiceops.EndReason(v)
		default:
			o.fail("outcome", "must be one of: completed, crashed")
		}
	}
	if err := o.done(); err != nil {
		return err
	}
	if _, err := s.Conversations.Close(r.Context(), acct, proj, r.PathValue("conversation_id"), reason); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, successJSON{Success: true})
	return nil
}
