package voiceapi

import (
	"net/http"

	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/conversations/turnreply"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Voice is the telephony system's voice intake (functions/calls): a call
// starts, each user turn (transcript, DTMF or silence) is answered, and the
// call ends (completed or crashed). Internal key, the base host's errors.
type Voice struct {
	Engine Engine
}

// Routes lists the voice intake's routes.
func (g *Voice) Routes() []httpapi.Route {
	return []httpapi.Route{
		httpapi.BaseRoute("POST", "/internal/v1/voice/calls", httpapi.InternalKey, g.voiceStart),
		httpapi.BaseRoute("POST", "/internal/v1/voice/calls/{conversation_id}/turns", httpapi.InternalKey, g.voiceTurn),
		httpapi.BaseRoute("POST", "/internal/v1/voice/calls/{conversation_id}/end", httpapi.InternalKey, g.voiceEnd),
	}
}

// readTenant reads the account and project a telephony request is for.
func readTenant(o *httpapi.Object) (accountID, projectID string) {
	accountID, _ = o.Str("account_id", true)
	projectID, _ = o.Str("project_id", true)
	if accountID != "" && !voiceops.ValidTenantID(accountID) {
		o.Fail("account_id", "must be an account ID")
	}
	if projectID != "" && !voiceops.ValidTenantID(projectID) {
		o.Fail("project_id", "must be a project ID")
	}
	return accountID, projectID
}

func (g *Voice) voiceStart(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	in := conversation.StartInput{Channel: voiceops.ChannelVoice}
	in.AccountID, in.ProjectID = readTenant(o)
	in.FromNumber, _ = o.Str("from_number", true)
	in.ToNumber, _ = o.Str("to_number", true)
	in.VariantID, _ = o.Str("variant_id", false)
	if v, ok := o.Str("language", false); ok {
		if !voiceops.ValidLanguageCode(v) {
			o.Fail("language", "must be a language code with a region, such as en-GB")
		}
		in.ASRLang, in.TTSLang = v, v
	}
	if v, ok := o.Str("environment", false); ok {
		env, ok := voiceops.ParseEnum(v, voiceops.Environments)
		if !ok {
			o.Fail("environment", voiceops.OneOf(voiceops.Environments))
		}
		in.Environment = env
	}
	in.IntegrationAttributes, _ = o.JSONObjectMax("integration_attributes", true, voiceops.MaxAttributesBytes)
	if err := o.Done(); err != nil {
		return err
	}
	ans, err := g.Engine.Start(r.Context(), in)
	if err != nil {
		return err
	}
	turnreply.Write(w, ans.Conversation.ID, ans)
	return nil
}

func (g *Voice) voiceTurn(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	acct, proj := readTenant(o)
	var in conversation.TurnInput
	in.Message, _ = o.StrMax("transcript", false, voiceops.MaxMessageBytes)
	in.DTMF, _ = o.StrMax("dtmf", false, voiceops.MaxDTMFBytes)
	in.Silence, _ = o.Boolean("silence", false)
	in.Metadata, _ = o.JSONObjectMax("metadata", true, voiceops.MaxMetadataBytes)
	if in.Silence && (in.Message != "" || in.DTMF != "") {
		o.Fail("silence", "a silent turn has no transcript or DTMF")
	}
	if err := o.Done(); err != nil {
		return err
	}
	id := r.PathValue("conversation_id")
	ans, err := g.Engine.Respond(r.Context(), acct, proj, id, in)
	if err != nil {
		return err
	}
	turnreply.Write(w, id, ans)
	return nil
}

func (g *Voice) voiceEnd(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	o, err := httpapi.ReadObject(w, r, false)
	if err != nil {
		return err
	}
	acct, proj := readTenant(o)
	reason := voiceops.EndCompleted
	if v, ok := o.Str("outcome", true); ok {
		switch voiceops.EndReason(v) {
		case voiceops.EndCompleted, voiceops.EndCrashed:
			reason = voiceops.EndReason(v)
		default:
			o.Fail("outcome", "must be one of: completed, crashed")
		}
	}
	if err := o.Done(); err != nil {
		return err
	}
	if _, err := g.Engine.Close(r.Context(), acct, proj, r.PathValue("conversation_id"), reason); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, turnreply.OK)
	return nil
}
