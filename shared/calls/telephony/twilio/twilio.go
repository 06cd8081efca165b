// Package twilio is the Twilio adapter of the telephony provider, on the
// official library (github.com/twilio/twilio-go: its Calls API client and
// its RequestValidator). Only functions/dialer (placing calls) and
// functions/calls (the callbacks) link it, and they link only the API v2010
// client, not the whole library.
//
// Each account places calls with its own Twilio credentials and caller ID
// (Credentials; the operator sets them with opsctl twilio set). A call is
// created with our call SID in its callback URLs:
//
//	status   POST {base}/v1/telephony/twilio/{callSid}/status   every event
//	answer   POST {base}/v1/telephony/twilio/{callSid}/answer   TwiML: the voice intake
//	turns    POST {base}/v1/telephony/twilio/{callSid}/turns/{conversation_id}?turn=N
//
// so that a report needs no lookup of Twilio's own SID, and Twilio's
// signature (X-Twilio-Signature, over the full URL) covers which call it is.
package twilio

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/twilio/twilio-go/client"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// DefaultAPIBaseURL is Twilio's REST API.
const DefaultAPIBaseURL = "https://api.twilio.com"

// Account is an account's Twilio credentials and caller ID. The auth token
// is a secret: it is never logged nor shown (String hides it).
type Account struct {
	AccountSID string `json:"account_sid"`
	AuthToken  string `json:"auth_token"`
	// FromNumber is the caller ID: a Twilio number of that account, E.164.
	FromNumber string `json:"from_number"`
}

// String hides the auth token, so that a logged Account leaks nothing.
func (a Account) String() string {
	return fmt.Sprintf("twilio.Account{AccountSID: %s, FromNumber: %s, AuthToken: [hidden]}", a.AccountSID, a.FromNumber)
}

// Credentials finds an account's Twilio account; voiceops.ErrNotFound when
// the operator set none.
type Credentials interface {
	Twilio(ctx context.Context, accountID string) (Account, error)
}

// Provider places calls through Twilio.
type Provider struct {
	Creds Credentials
	// APIBaseURL is Twilio's REST API (DefaultAPIBaseURL when empty); the
	// tests point it at a local fake.
	APIBaseURL string
	// CallbackBaseURL is our base host's public URL, which Twilio calls back.
	CallbackBaseURL string
	// HTTPClient makes the API requests (nil: 10 s timeout, no redirects).
	HTTPClient *http.Client
}

var _ telephony.Provider = (*Provider)(nil)

// The callback routes, written once: shared/calls/twilioapi serves these
// patterns, and the URLs below (which Place and the TwiML name) fill them.
const (
	StatusRoute = "/v1/telephony/twilio/{callSid}/status"
	AnswerRoute = "/v1/telephony/twilio/{callSid}/answer"
	TurnRoute   = "/v1/telephony/twilio/{callSid}/turns/{conversation_id}"
	// TurnParam is the query parameter of a turn's URL that numbers the
	// turn (the call's own turn sequence; Twilio's signature covers it).
	TurnParam = "turn"
	// ResultParam=1 marks the URL that fetches an answer's or a turn's
	// result once it is ready (a <Redirect> after a filler): it reads the
	// stored reply and never runs a step.
	ResultParam = "result"
)

// FirstByteLimit is how long Twilio waits for the first byte of a call
// webhook's answer before it drops the call (its error 31408).
const FirstByteLimit = 15 * time.Second

// CallbackDeadline is the request deadline of the call callbacks: under
// FirstByteLimit by what the answer's way back takes (API Gateway, Lambda,
// the network) with room to spare. A step slower than it is answered with
// a filler and a <Redirect> to its result, so the call goes on.
const CallbackDeadline = 12 * time.Second

// IdempotencyHeader is the header in which Twilio sends a webhook's
// idempotency token: the same on each retry of one request.
const IdempotencyHeader = "I-Twilio-Idempotency-Token"

// fill is route with its variables set.
func fill(base, route, sid, conversationID string) string {
	return strings.TrimSuffix(base, "/") + strings.NewReplacer("{callSid}", sid, "{conversation_id}", conversationID).Replace(route)
}

// Callback URLs of a call (see the package comment).
func StatusURL(base, sid string) string { return fill(base, StatusRoute, sid, "") }
func AnswerURL(base, sid string) string { return fill(base, AnswerRoute, sid, "") }

// TurnURL is the URL of the call's turn number turn.
func TurnURL(base, sid, conversationID string, turn int) string {
	return fill(base, TurnRoute, sid, conversationID) + "?" + TurnParam + "=" + strconv.Itoa(turn)
}

// AnswerResultURL fetches the answer's result (after a filler).
func AnswerResultURL(base, sid string) string {
	return AnswerURL(base, sid) + "?" + ResultParam + "=1"
}

// TurnResultURL fetches the result of the call's turn number turn.
func TurnResultURL(base, sid, conversationID string, turn int) string {
	return TurnURL(base, sid, conversationID, turn) + "&" + ResultParam + "=1"
}

// StatusEvents are the status callback events asked for: every one Twilio has.
var StatusEvents = []string{"initiated", "ringing", "answered", "completed"}

// Place creates the call with Twilio. A refusal (4xx: a bad number, wrong
// credentials, no caller ID set) wraps telephony.ErrRejected; other errors
// may pass on a retry.
func (p *Provider) Place(ctx context.Context, req telephony.CallRequest) error {
	acct, err := p.Creds.Twilio(ctx, req.AccountID)
	if errors.Is(err, voiceops.ErrNotFound) {
		return fmt.Errorf("%w: account %s has no Twilio credentials", telephony.ErrRejected, req.AccountID)
	}
	if err != nil {
		return err
	}
	c := &client.Client{Credentials: client.NewCredentials(acct.AccountSID, acct.AuthToken), HTTPClient: p.HTTPClient}
	c.SetAccountSid(acct.AccountSID)
	api := openapi.NewApiServiceWithClient(&rebased{Client: c, base: p.APIBaseURL})
	params := (&openapi.CreateCallParams{}).
		SetTo(req.To).SetFrom(acct.FromNumber).
		SetUrl(AnswerURL(p.CallbackBaseURL, req.SID)).SetMethod(http.MethodPost).
		SetStatusCallback(StatusURL(p.CallbackBaseURL, req.SID)).SetStatusCallbackMethod(http.MethodPost).
		SetStatusCallbackEvent(StatusEvents).
		SetTimeout(int(voiceops.CallRingTimeout / time.Second)).
		SetTimeLimit(int(voiceops.CallTimeLimit / time.Second))
	if _, err := api.CreateCall(params); err != nil {
		var rest *client.TwilioRestError
		if errors.As(err, &rest) && rest.Status >= 400 && rest.Status < 500 && rest.Status != http.StatusTooManyRequests {
			return fmt.Errorf("%w: Twilio %d (code %d): %s", telephony.ErrRejected, rest.Status, rest.Code, rest.Message)
		}
		return fmt.Errorf("twilio: creating the call: %w", err)
	}
	return nil
}

// rebased sends the library's requests to base instead of Twilio's host
// (the library's own base URL is fixed).
type rebased struct {
	*client.Client
	base string
}

func (r *rebased) SendRequest(method, rawURL string, data url.Values, headers map[string]interface{}, body ...byte) (*http.Response, error) {
	if r.base != "" {
		rawURL = strings.TrimSuffix(r.base, "/") + strings.TrimPrefix(rawURL, DefaultAPIBaseURL)
	}
	return r.Client.SendRequest(method, rawURL, data, headers, body...)
}

// Valid reports whether a callback's X-Twilio-Signature is Twilio's, for
// the callback's full public URL and its form parameters, with the
// account's auth token (the library's RequestValidator).
func Valid(authToken, fullURL string, form url.Values, signature string) bool {
	if signature == "" {
		return false
	}
	params := make(map[string]string, len(form))
	for k, v := range form {
		if len(v) > 0 {
			params[k] = v[0]
		}
	}
	v := client.NewRequestValidator(authToken)
	return v.Validate(fullURL, params, signature)
}
