package api

import (
	"encoding/json"
	"net/http"
	"regexp"

	"github.com/voiceops/opsapi/shared/agent"
	"github.com/voiceops/opsapi/shared/conversation"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// chatRoutes lists every route of the chat group (doc 2; functions/chat).
// {version} is "v1" only: other values are 404 (DECISIONS.md).
func chatRoutes(s *server, mux *http.ServeMux) {
	mux.Handle("POST /{version}/{account_id}/{project_id}/chat/create", s.doc2Chat(s.chatCreate))
	mux.Handle("POST /{version}/{account_id}/{project_id}/chat/respond", s.doc2Chat(s.chatRespond))
	mux.Handle("PUT /{version}/{account_id}/{project_id}/chat/close", s.doc2Chat(s.chatClose))
}

var errNoVersion = voiceops.Errorf(voiceops.KindNotFound, "unknown API version: chat is served under /v1/")

// langPattern accepts language codes with a region (en-GB, es-419, zh-Hant-TW).
var langPattern = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$`)

// readLangs reads the optional language codes of a chat body.
func readLangs(o *object) (asr, tts string) {
	for _, f := range []struct {
		name string
		dst  *string
	}{{"asr_lang_code", &asr}, {"tts_lang_code", &tts}} {
		if v, ok := o.str(f.name, false); ok {
			if !langPattern.MatchString(v) {
				o.fail(f.name, "must be a language code with a region, such as en-GB")
			}
			*f.dst = v
		}
	}
	return asr, tts
}

type chatCreateJSON struct {
	ConversationID string `json:"conversation_id"`
	Response       string `json:"response"`
}

func (s *server) chatCreate(w http.ResponseWriter, r *http.Request, t target) error {
	if r.PathValue("version") != "v1" {
		return errNoVersion
	}
	o, err := readObject(w, r, true)
	if err != nil {
		return err
	}
	in := conversation.StartInput{AccountID: t.AccountID, ProjectID: t.ProjectID, Channel: voiceops.ChannelAPI,
		Environment: voiceops.Environment(t.Agent.Environment)}
	in.IntegrationAttributes, _ = o.jsonObject("integration_attributes", true)
	if v, ok := o.str("variant_id", false); ok {
		in.VariantID = v
	}
	if v, ok := o.str("channel", false); ok {
		ch, ok := voiceops.ParseEnum(v, voiceops.ChatChannels)
		if !ok {
			o.fail("channel", voiceops.OneOf(voiceops.ChatChannels))
		}
		in.Channel = ch
	}
	in.ASRLang, in.TTSLang = readLangs(o)
	initial, hasInitial := o.str("initial_message", false)
	if err := o.done(); err != nil {
		return err
	}
	ans, err := s.Conversations.Start(r.Context(), in)
	if err != nil {
		return err
	}
	// An initial message is the user's first turn: the answer to it is
	// the response (the greeting stays in the conversation's turns).
	if hasInitial && !ans.End {
		ans, err = s.Conversations.Respond(r.Context(), t.AccountID, t.ProjectID, ans.Conversation.ID, conversation.TurnInput{Message: initial})
		if err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, chatCreateJSON{ConversationID: ans.Conversation.ID, Response: ans.Response})
	return nil
}

type handoffJSON struct {
	Destination string `json:"destination"`
	Reason      string `json:"reason"`
	// SharedID reads the handoff context back (handoff_state?shared_id=).
	SharedID string `json:"shared_id"`
}

type chatRespondJSON struct {
	ConversationID  string       `json:"conversation_id"`
	Response        string       `json:"response"`
	EndConversation bool         `json:"end_conversation"`
	Handoff         *handoffJSON `json:"handoff,omitempty"`
}

func toHandoffJSON(h *agent.Handoff, sharedID string) *handoffJSON {
	if h == nil {
		return nil
	}
	out := &handoffJSON{Destination: h.Destination, Reason: h.Reason, SharedID: sharedID}
	if out.Destination == "" && h.SIP != nil {
		out.Destination = h.SIP.OutboundEndpoint
	}
	return out
}

// readConversationID reads the required conversation_id of a body.
func readConversationID(o *object) string {
	id, ok := o.str("conversation_id", true)
	if ok && (id == "" || len(id) > 128) {
		o.fail("conversation_id", "must be a conversation ID")
	}
	return id
}

func (s *server) chatRespond(w http.ResponseWriter, r *http.Request, t target) error {
	if r.PathValue("version") != "v1" {
		return errNoVersion
	}
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	id := readConversationID(o)
	var in conversation.TurnInput
	if v, ok := o.str("message", false); ok {
		in.Message = v
	}
	in.IntegrationAttributes, _ = o.jsonObject("integration_attributes", true)
	in.Metadata, _ = o.jsonObject("metadata", true)
	in.ASRLang, in.TTSLang = readLangs(o)
	if _, sent := o.fields["variant_id"]; sent {
		o.used["variant_id"] = true
		o.fail("variant_id", "is accepted on create only; a conversation's variant cannot change")
	}
	if err := o.done(); err != nil {
		return err
	}
	ans, err := s.Conversations.Respond(r.Context(), t.AccountID, t.ProjectID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, chatRespondJSON{
		ConversationID: id, Response: ans.Response, EndConversation: ans.End, Handoff: toHandoffJSON(ans.Handoff, ans.Conversation.SharedID),
	})
	return nil
}

type successJSON struct {
	Success bool `json:"success"`
}

func (s *server) chatClose(w http.ResponseWriter, r *http.Request, t target) error {
	if r.PathValue("version") != "v1" {
		return errNoVersion
	}
	o, err := readObject(w, r, false)
	if err != nil {
		return err
	}
	id := readConversationID(o)
	if err := o.done(); err != nil {
		return err
	}
	if _, err := s.Conversations.Close(r.Context(), t.AccountID, t.ProjectID, id, voiceops.EndClosed); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, successJSON{Success: true})
	return nil
}

// jsonObject reads an object field of any JSON values; with nullable, null
// reads as nil.
func (o *object) jsonObject(name string, nullable bool) (map[string]any, bool) {
	raw, ok := o.take(name, false, nullable)
	if !ok || isNull(raw) {
		return nil, ok
	}
	var m map[string]any
	if raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		o.fail(name, "must be an object")
		return nil, false
	}
	return m, true
}
