package chatapi

import (
	"net/http"

	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/conversations/turnreply"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Chat is the chat group (functions/chat). {version} is "v1" only: other
// values are 404.
type Chat struct {
	Engine Engine
}

// Routes lists every route of the chat group (the base host).
func (g *Chat) Routes() []httpapi.Route {
	return []httpapi.Route{
		httpapi.BaseRoute("POST", "/{version}/{account_id}/{project_id}/chat/create", httpapi.ChatKeys, g.chatCreate).Creates(),
		httpapi.BaseRoute("POST", "/{version}/{account_id}/{project_id}/chat/respond", httpapi.ChatKeys, g.chatRespond),
		httpapi.BaseRoute("PUT", "/{version}/{account_id}/{project_id}/chat/close", httpapi.ChatKeys, g.chatClose),
	}
}

var errNoVersion = voiceops.Errorf(voiceops.KindNotFound, "unknown API version: chat is served under /v1/")

// readLangs reads the optional language codes of a chat body.
func readLangs(o *httpapi.Object) (asr, tts string) {
	for _, f := range []struct {
		name string
		dst  *string
	}{{"asr_lang_code", &asr}, {"tts_lang_code", &tts}} {
		if v, ok := o.Str(f.name, false); ok {
			if !voiceops.ValidLanguageCode(v) {
				o.Fail(f.name, "must be a language code with a region, such as en-GB")
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

func (g *Chat) chatCreate(w http.ResponseWriter, r *http.Request, t httpapi.Caller) error {
	if r.PathValue("version") != "v1" {
		return errNoVersion
	}
	o, err := httpapi.ReadObject(w, r, true)
	if err != nil {
		return err
	}
	in := conversation.StartInput{AccountID: t.AccountID, ProjectID: t.ProjectID, Channel: voiceops.ChannelAPI,
		Environment: voiceops.Environment(t.Agent.Environment)}
	in.IntegrationAttributes, _ = o.JSONObjectMax("integration_attributes", true, voiceops.MaxAttributesBytes)
	if v, ok := o.Str("variant_id", false); ok {
		in.VariantID = v
	}
	if v, ok := o.Str("channel", false); ok {
		ch, ok := voiceops.ParseEnum(v, voiceops.ChatChannels)
		if !ok {
			o.Fail("channel", voiceops.OneOf(voiceops.ChatChannels))
		}
		in.Channel = ch
	}
	in.ASRLang, in.TTSLang = readLangs(o)
	initial, hasInitial := o.StrMax("initial_message", false, voiceops.MaxMessageBytes)
	if err := o.Done(); err != nil {
		return err
	}
	ans, err := g.Engine.Start(r.Context(), in)
	if err != nil {
		return err
	}
	// An initial message is the user's first turn: the answer to it is
	// the response (the greeting stays in the conversation's turns).
	if hasInitial && !ans.End {
		ans, err = g.Engine.Respond(r.Context(), t.AccountID, t.ProjectID, ans.Conversation.ID, conversation.TurnInput{Message: initial})
		if err != nil {
			return err
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, chatCreateJSON{ConversationID: ans.Conversation.ID, Response: ans.Response})
	return nil
}

func (g *Chat) chatRespond(w http.ResponseWriter, r *http.Request, t httpapi.Caller) error {
	if r.PathValue("version") != "v1" {
		return errNoVersion
	}
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	id := turnreply.ConversationID(o)
	var in conversation.TurnInput
	if v, ok := o.StrMax("message", false, voiceops.MaxMessageBytes); ok {
		in.Message = v
	}
	in.IntegrationAttributes, _ = o.JSONObjectMax("integration_attributes", true, voiceops.MaxAttributesBytes)
	in.Metadata, _ = o.JSONObjectMax("metadata", true, voiceops.MaxMetadataBytes)
	in.ASRLang, in.TTSLang = readLangs(o)
	if o.Has("variant_id") {
		o.Fail("variant_id", "is accepted on create only; a conversation's variant cannot change")
	}
	if err := o.Done(); err != nil {
		return err
	}
	ans, err := g.Engine.Respond(r.Context(), t.AccountID, t.ProjectID, id, in)
	if err != nil {
		return err
	}
	turnreply.Write(w, id, ans)
	return nil
}

func (g *Chat) chatClose(w http.ResponseWriter, r *http.Request, t httpapi.Caller) error {
	if r.PathValue("version") != "v1" {
		return errNoVersion
	}
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	id := turnreply.ConversationID(o)
	if err := o.Done(); err != nil {
		return err
	}
	if _, err := g.Engine.Close(r.Context(), t.AccountID, t.ProjectID, id, voiceops.EndClosed); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, turnreply.OK)
	return nil
}
