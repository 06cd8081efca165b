// Package twilioapi serves Twilio's callbacks of outbound calls on the base
// host (functions/calls): status reports, the answer URL and the speech
// turns of an answered call. It checks and parses; the calls service
// (shared/calls) decides, as it does for the dev server's simulator. Every request is checked with Twilio's
// signature (X-Twilio-Signature, the library's RequestValidator) and the
// auth token of the call's account: an invalid one is 403 and changes
// nothing. Twilio hears TwiML, rendered from the service's reply alone.
package twilioapi

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/httpapi"
	"github.com/voiceops/opsapi/shared/telephony"
	"github.com/voiceops/opsapi/shared/telephony/twilio"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Callbacks is the group of Twilio's callback routes. It checks the
// signature and parses; the calls service decides (shared/calls).
type Callbacks struct {
	Calls *calls.Service
	Creds twilio.Credentials
	// PublicBaseURL is the base host's public URL: the URL Twilio signed is
	// PublicBaseURL + the request's path (API Gateway's Host header may
	// not be the public one).
	PublicBaseURL string
}

// Routes lists the callback routes (their paths: shared/telephony/twilio).
// They take no key: Twilio's signature is checked in the handlers, with
// the call's account's token.
func (g *Callbacks) Routes() []httpapi.Route {
	return []httpapi.Route{
		route("POST", twilio.StatusRoute, g.status),
		route("POST", twilio.AnswerRoute, g.answer),
		route("POST", twilio.TurnRoute, g.turn),
	}
}

func route(method, path string, h httpapi.Handler) httpapi.Route {
	return httpapi.Route{Method: method, Path: path, Family: httpapi.BaseErrors, Auth: httpapi.Public, Handle: h}
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
	c, err := g.Calls.Get(r.Context(), sid)
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

// status is a status callback: CallStatus moves the call (the calls
// service: repeats and late reports change nothing; the end of an
// answered call ends its conversation).
func (g *Callbacks) status(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	c, form, err := g.verified(w, r)
	if err != nil {
		return err
	}
	if _, err := g.Calls.Report(r.Context(), c.SID, telephony.Status(form.Get("CallStatus"))); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// answer is the answer URL: the call starts its voice conversation and
// Twilio says the agent's greeting. A replay gets the same TwiML; an
// answer for a call that has ended gets <Hangup/>.
func (g *Callbacks) answer(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	c, form, err := g.verified(w, r)
	if err != nil {
		return err
	}
	rep, err := g.Calls.Answer(r.Context(), c, form.Get("From"), r.Header.Get(twilio.IdempotencyHeader))
	if err != nil {
		return err
	}
	return writeTwiML(w, g.say(c.SID, rep))
}

// errTurnParam is a turn URL whose turn number is not one.
var errTurnParam = voiceops.Errorf(voiceops.KindBadRequest, "the turn parameter must be a positive integer")

// turn is a Gather's action: the callee's speech (or digits) is a turn.
// The URL numbers the turn (the TwiML that asked for it named it); a
// replay gets the stored TwiML and runs nothing.
func (g *Callbacks) turn(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	c, form, err := g.verified(w, r)
	if err != nil {
		return err
	}
	n := 0 // a URL without a number (TwiML rendered before turns were numbered)
	if v := r.URL.Query().Get(twilio.TurnParam); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			return errTurnParam
		}
	}
	in := calls.Speech{Message: form.Get("SpeechResult"), DTMF: form.Get("Digits")}
	rep, err := g.Calls.Turn(r.Context(), c, r.PathValue("conversation_id"), n, r.Header.Get(twilio.IdempotencyHeader), in)
	if errors.Is(err, voiceops.ErrNotFound) {
		return errUnknown
	}
	if err != nil {
		return err
	}
	return writeTwiML(w, g.say(c.SID, rep))
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
// followed by a hang-up when the conversation ended (no words: only the
// hang-up). It depends on the reply alone, so a replay is the same TwiML.
func (g *Callbacks) say(sid string, rep calls.Reply) response {
	if rep.End {
		res := response{Hangup: &struct{}{}}
		if rep.Text != "" {
			res.Say = &say{Text: rep.Text}
		}
		return res
	}
	return response{Gather: &gather{Input: "speech dtmf", Method: http.MethodPost,
		Action: twilio.TurnURL(g.PublicBaseURL, sid, rep.ConversationID, rep.Turn), Say: say{Text: rep.Text}}}
}

func writeTwiML(w http.ResponseWriter, v response) error {
	b, err := xml.Marshal(v)
	if err != nil {
		return err
	}
	// encoding/xml writes no empty-element tags; TwiML's own examples do.
	b = bytes.ReplaceAll(b, []byte("<Hangup></Hangup>"), []byte("<Hangup/>"))
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append([]byte(xml.Header), b...))
	return nil
}
