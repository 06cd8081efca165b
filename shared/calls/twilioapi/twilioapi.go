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
	"time"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
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
	// Deadline is the callbacks' request deadline (default
	// twilio.CallbackDeadline; tests shorten it).
	Deadline time.Duration
}

// Routes lists the callback routes (their paths: shared/calls/telephony/twilio).
// They take no key: Twilio's signature is checked in the handlers, with
// the call's account's token.
func (g *Callbacks) Routes() []httpapi.Route {
	deadline := g.Deadline
	if deadline <= 0 {
		deadline = twilio.CallbackDeadline
	}
	route := func(method, path string, h httpapi.Handler) httpapi.Route {
		return httpapi.Route{Method: method, Path: path, Family: httpapi.BaseErrors, Auth: httpapi.Public, Handle: h, Deadline: deadline}
	}
	return []httpapi.Route{
		route("POST", twilio.StatusRoute, g.status),
		route("POST", twilio.AnswerRoute, g.answer),
		route("POST", twilio.TurnRoute, g.turn),
	}
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
	form, err := ParseForm(string(body))
	if err != nil {
		return voiceops.Call{}, nil, err
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
//
// An answer slower than the deadline is answered with a filler and a
// <Redirect> to its result (?result=1), which Twilio fetches once it has
// said the filler: the stored greeting, or the filler again. A greeting
// whose work died is asked for again (a <Redirect> to the answer URL,
// which takes the step over).
func (g *Callbacks) answer(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	c, form, err := g.verified(w, r)
	if err != nil {
		return err
	}
	result, err := answerQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	var rep calls.Reply
	if result {
		rep, err = g.Calls.AnswerResult(r.Context(), c)
	} else {
		rep, err = g.Calls.Answer(r.Context(), c, form.Get("From"), r.Header.Get(twilio.IdempotencyHeader))
	}
	switch {
	case errors.Is(err, calls.ErrPending):
		return writeTwiML(w, hold(twilio.AnswerResultURL(g.PublicBaseURL, c.SID)))
	case errors.Is(err, calls.ErrStepLost):
		return writeTwiML(w, response{Redirect: &redirect{Method: http.MethodPost, URL: twilio.AnswerURL(g.PublicBaseURL, c.SID)}})
	case err != nil:
		return err
	}
	return writeTwiML(w, g.say(c.SID, rep))
}

// errAnswerQuery is an answer URL with a query it never has.
var errAnswerQuery = voiceops.Errorf(voiceops.KindBadRequest, "an answer URL's query must be empty or result=1")

// answerQuery parses an answer URL's raw query: none, or the result's.
func answerQuery(rawQuery string) (result bool, err error) {
	switch rawQuery {
	case "":
		return false, nil
	case twilio.ResultParam + "=1":
		return true, nil
	}
	return false, errAnswerQuery
}

// errTurnParam is a turn URL whose query is not the one TwiML names.
var errTurnParam = voiceops.Errorf(voiceops.KindBadRequest, "a turn URL's query must be turn=N, N a positive integer")

// ParseForm parses a callback's form as Twilio sends it, refusing what
// Twilio never sends: a parameter name that does not start with a letter
// or holds other than letters, digits, '_', '-' and '.', and a name given
// twice. The signature is HMAC over the URL then each sorted name and
// value with no separator, so the first rule is what keeps a URL's
// trailing digits (?turn=12) from moving into the first name
// (?turn=1 + 2AccountSid) with the same signature; the second keeps a
// parameter that the signature check does not see (it reads one value
// per name) out of the form.
func ParseForm(body string) (url.Values, error) {
	form, err := url.ParseQuery(body)
	if err != nil {
		return nil, errForm
	}
	for k, v := range form {
		if !twilioName(k) {
			return nil, voiceops.Errorf(voiceops.KindBadRequest, "%s is not a Twilio parameter name", strconv.QuoteToASCII(k))
		}
		if len(v) != 1 {
			return nil, voiceops.Errorf(voiceops.KindBadRequest, "the parameter %s is given %d times", k, len(v))
		}
	}
	return form, nil
}

// twilioName reports whether k has the shape of Twilio's parameter names
// (AccountSid, SpeechResult, msg, ...).
func twilioName(k string) bool {
	if k == "" || !isLetter(k[0]) {
		return false
	}
	for i := 1; i < len(k); i++ {
		c := k[i]
		if !isLetter(c) && !('0' <= c && c <= '9') && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// TurnNumber parses a turn URL's raw query: exactly what twilio.TurnURL
// writes, turn=N with N a positive integer without sign or leading zero,
// or what twilio.TurnResultURL writes, the same followed by &result=1
// (result). Anything else is refused rather than read leniently, so that
// no spelling of a signed URL names a turn, or a run, its TwiML did not.
func TurnNumber(rawQuery string) (n int, result bool, err error) {
	q, result := strings.CutSuffix(rawQuery, "&"+twilio.ResultParam+"=1")
	if n, err = turnNumber(q); err != nil {
		return 0, false, err
	}
	return n, result, nil
}

func turnNumber(rawQuery string) (int, error) {
	v, ok := strings.CutPrefix(rawQuery, twilio.TurnParam+"=")
	if !ok || v == "" || len(v) > 9 || v[0] == '0' {
		return 0, errTurnParam
	}
	n := 0
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, errTurnParam
		}
		n = n*10 + int(v[i]-'0')
	}
	return n, nil
}

// turn is a Gather's action: the callee's speech (or digits) is a turn.
// The URL numbers the turn (the TwiML that asked for it named it); a
// replay gets the stored TwiML and runs nothing. A URL that numbers no
// turn is refused: it would be a new step each time it is sent.
func (g *Callbacks) turn(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
	c, form, err := g.verified(w, r)
	if err != nil {
		return err
	}
	n, result, err := TurnNumber(r.URL.RawQuery)
	if err != nil {
		return err
	}
	convID := r.PathValue("conversation_id")
	var rep calls.Reply
	if result {
		rep, err = g.Calls.TurnResult(r.Context(), c, convID, n)
	} else {
		in := calls.Speech{Message: form.Get("SpeechResult"), DTMF: form.Get("Digits")}
		rep, err = g.Calls.Turn(r.Context(), c, convID, n, r.Header.Get(twilio.IdempotencyHeader), in)
	}
	switch {
	case errors.Is(err, calls.ErrPending):
		return writeTwiML(w, hold(twilio.TurnResultURL(g.PublicBaseURL, c.SID, convID, n)))
	case errors.Is(err, calls.ErrStepLost):
		// The same turn again: its next callback takes the step over.
		return writeTwiML(w, g.say(c.SID, calls.Reply{ConversationID: convID, Turn: n, Text: SayAgain}))
	case errors.Is(err, voiceops.ErrNotFound):
		return errUnknown
	case err != nil:
		return err
	}
	return writeTwiML(w, g.say(c.SID, rep))
}

// What the callee hears while the agent is slow, and when its answer was
// lost.
const (
	Filler   = "One moment, please."
	SayAgain = "Sorry, I missed that. Could you say it again?"
)

// hold keeps the call while a step runs: a filler, then a <Redirect> to
// the step's result, which Twilio fetches once it has said the filler
// (its request signed like any callback).
func hold(resultURL string) response {
	return response{Say: &say{Text: Filler}, Redirect: &redirect{Method: http.MethodPost, URL: resultURL}}
}

// TwiML: https://www.twilio.com/docs/voice/twiml
type response struct {
	XMLName  xml.Name  `xml:"Response"`
	Say      *say      `xml:"Say,omitempty"`
	Gather   *gather   `xml:"Gather,omitempty"`
	Redirect *redirect `xml:"Redirect,omitempty"`
	Hangup   *struct{} `xml:"Hangup,omitempty"`
}

type redirect struct {
	Method string `xml:"method,attr"`
	URL    string `xml:",chardata"`
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
