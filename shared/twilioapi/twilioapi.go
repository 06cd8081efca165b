// Package twilioapi serves Twilio's callbacks of outbound calls on the base
// host (functions/calls): status reports, the answer URL and the speech
// turns of an answered call. Every request is checked with Twilio's
// signature (X-Twilio-Signature, the library's RequestValidator) and the
// auth token of the call's account: an invalid one is 403 and changes
// nothing. The answered call is a voice conversation run by the same
// conversation engine as the voice intake; Twilio hears TwiML.
package twilioapi

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/conversation"
	"github.com/voiceops/opsapi/shared/httpapi"
	"github.com/voiceops/opsapi/shared/telephony"
	"github.com/voiceops/opsapi/shared/telephony/twilio"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Engine is the conversation engine's voice entry points.
type Engine interface {
	Start(ctx context.Context, in conversation.StartInput) (conversation.Answer, error)
	Respond(ctx context.Context, accountID, projectID, conversationID string, in conversation.TurnInput) (conversation.Answer, error)
	Close(ctx context.Context, accountID, projectID, conversationID string, reason voiceops.EndReason) (voiceops.Conversation, error)
}

// Callbacks is the group of Twilio's callback routes.
type Callbacks struct {
	Calls  voiceops.CallStore
	Creds  twilio.Credentials
	Engine Engine
	// PublicBaseURL is the base host's public URL: the URL Twilio signed is
	// PublicBaseURL + the request's path (API Gateway's Host header may
	// not be the public one).
	PublicBaseURL string
	Now           func() time.Time
}

// Routes lists the callback routes. They take no key: Twilio's signature
// is checked in the handlers, with the call's account's token.
func (g *Callbacks) Routes() []httpapi.Route {
	return []httpapi.Route{
		route("POST", "/v1/telephony/twilio/{callSid}/status", g.status),
		route("POST", "/v1/telephony/twilio/{callSid}/answer", g.answer),
		route("POST", "/v1/telephony/twilio/{callSid}/turns/{conversation_id}", g.turn),
	}
}

func route(method, path string, h httpapi.Handler) httpapi.Route {
	return httpapi.Route{Method: method, Path: path, Family: httpapi.Doc2, Auth: httpapi.Public, Handle: h}
}

var (
	errSignature = voiceops.Errorf(voiceops.KindForbidden, "invalid X-Twilio-Signature")
	errUnknown   = voiceops.Errorf(voiceops.KindNotFound, "call not found")
	errForm      = voiceops.Errorf(voiceops.KindBadRequest, "the body must be application/x-www-form-urlencoded")
)

// maxFormBytes bounds a callback's form (Twilio's are a few KB).
const maxFormBytes = 64 << 10

// verified reads the form and the call, and checks Twilio's signature
// with the call's account's auth token.
func (g *Callbacks) verified(w http.ResponseWriter, r *http.Request) (voiceops.Call, url.Values, error) {
	sid := r.PathValue("callSid")
	if !voiceops.ValidCallSID(sid) {
		return voiceops.Call{}, nil, errUnknown
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFormBytes))
	if err != nil {
		return voiceops.Call{}, nil, errForm
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return voiceops.Call{}, nil, errForm
	}
	c, err := g.Calls.GetCall(r.Context(), sid, g.Now())
	if errors.Is(err, voiceops.ErrNotFound) {
		return voiceops.Call{}, nil, errUnknown
	}
	if err != nil {
		return voiceops.Call{}, nil, err
	}
	acct, err := g.Creds.Twilio(r.Context(), c.AccountID)
	if errors.Is(err, voiceops.ErrNotFound) {
		return voiceops.Call{}, nil, errSignature // no token: nothing can be Twilio's
	}
	if err != nil {
		return voiceops.Call{}, nil, err
	}
	full := strings.TrimSuffix(g.PublicBaseURL, "/") + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		full += "?" + r.URL.RawQuery
	}
	if !twilio.Valid(acct.AuthToken, full, form, r.Header.Get("X-Twilio-Signature")) {
		return voiceops.Call{}, nil, errSignature
	}
	return c, form, nil
}

// status is a status callback: CallStatus moves the call (telephony.Apply:
// repeats and late reports change nothing); the end of an answered call
// ends its conversation.
func (g *Callbacks) status(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	c, form, err := g.verified(w, r)
	if err != nil {
		return err
	}
	c, err = telephony.Apply(r.Context(), g.Calls, c.SID, telephony.Status(form.Get("CallStatus")), g.Now().UTC())
	if err != nil {
		return err
	}
	if c.Status.Terminal() && c.ConversationID != "" {
		_, err := g.Engine.Close(r.Context(), c.AccountID, c.ProjectID, c.ConversationID, voiceops.EndCompleted)
		if err != nil && !errors.Is(err, conversation.ErrEnded) && !errors.Is(err, conversation.ErrNoSuchConv) {
			return err
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// answer is the answer URL: the call starts its voice conversation (from
// our caller ID to the called number, the trigger's metadata as its
// integration attributes) and Twilio says the agent's greeting.
func (g *Callbacks) answer(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	c, form, err := g.verified(w, r)
	if err != nil {
		return err
	}
	ans, err := g.Engine.Start(r.Context(), conversation.StartInput{
		AccountID: c.AccountID, ProjectID: c.ProjectID, Channel: voiceops.ChannelVoice,
		FromNumber: form.Get("From"), ToNumber: c.ToNumber, IntegrationAttributes: c.Metadata,
	})
	if err != nil {
		return err
	}
	if err := g.Calls.SetCallConversation(r.Context(), c.SID, ans.Conversation.ID, g.Now().UTC()); err != nil {
		if !errors.Is(err, voiceops.ErrAlreadyExists) {
			return err
		}
		// Either the SDK retried our own landed write, or Twilio asked
		// twice: then the first conversation is the call's.
		if cur, gerr := g.Calls.GetCall(r.Context(), c.SID, g.Now()); gerr != nil || cur.ConversationID != ans.Conversation.ID {
			_, _ = g.Engine.Close(r.Context(), c.AccountID, c.ProjectID, ans.Conversation.ID, voiceops.EndCompleted)
			return err
		}
	}
	return writeTwiML(w, g.say(c.SID, ans))
}

// turn is a Gather's action: the callee's speech (or digits) is a turn.
func (g *Callbacks) turn(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	c, form, err := g.verified(w, r)
	if err != nil {
		return err
	}
	id := r.PathValue("conversation_id")
	if id != c.ConversationID {
		return errUnknown
	}
	in := conversation.TurnInput{Message: form.Get("SpeechResult"), DTMF: form.Get("Digits")}
	ans, err := g.Engine.Respond(r.Context(), c.AccountID, c.ProjectID, id, in)
	if errors.Is(err, conversation.ErrEnded) {
		return writeTwiML(w, response{Hangup: &struct{}{}})
	}
	if err != nil {
		return err
	}
	return writeTwiML(w, g.say(c.SID, ans))
}

// TwiML: https://www.twilio.com/docs/voice/twiml
type response struct {
	XMLName xml.Name  `xml:"Response"`
	Say     *say      `xml:"Say,omitempty"`
	Gather  *gather   `xml:"Gather,omitempty"`
	Hangup  *struct{} `xml:"Hangup,omitempty"`
}

type say struct {
	Text string `xml:",chardata"`
}

type gather struct {
	Input  string `xml:"input,attr"`
	Action string `xml:"action,attr"`
	Method string `xml:"method,attr"`
	Say    say    `xml:"Say"`
}

// say answers with the agent's words: in a Gather for the next turn, or
// followed by a hang-up when the conversation ended.
func (g *Callbacks) say(sid string, ans conversation.Answer) response {
	if ans.End {
		return response{Say: &say{Text: ans.Response}, Hangup: &struct{}{}}
	}
	return response{Gather: &gather{Input: "speech dtmf", Method: http.MethodPost,
		Action: twilio.TurnURL(g.PublicBaseURL, sid, ans.Conversation.ID), Say: say{Text: ans.Response}}}
}

func writeTwiML(w http.ResponseWriter, v response) error {
	b, err := xml.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append([]byte(xml.Header), b...))
	return nil
}
