// Package twiliofake is a local stand-in for Twilio, for tests only: its
// REST API's create-call endpoint, and Twilio's side of a call (the signed
// callbacks it posts). It computes X-Twilio-Signature itself, from
// Twilio's documentation, so that it checks the code under test rather
// than repeating it; hence it imports nothing of this module.
package twiliofake

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The fake account's credentials and the SID of every call it creates.
const (
	AccountSID = "AC0123456789abcdef0123456789abcdef"
	AuthToken  = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	CallSID    = "CAfeedfeedfeedfeedfeedfeedfeedfeed"
	FromNumber = "+15005550006" // Twilio's magic test number
)

// Sign is X-Twilio-Signature as Twilio documents it: base64 of HMAC-SHA1,
// keyed by the auth token, over the full URL followed by each POST
// parameter's name and value, sorted by name.
func Sign(token, fullURL string, form url.Values) string {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := fullURL
	for _, k := range keys {
		s += k + form.Get(k)
	}
	m := hmac.New(sha1.New, []byte(token))
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// SetCallback makes req a callback form post as Twilio sends it, with the
// signature sig (Sign's, or a forged one).
func SetCallback(req *http.Request, sig string) {
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", sig)
}

// callbackClient sends the callbacks: one that is never answered fails
// after a minute (Twilio gives up on a webhook after 15 s) instead of
// holding the call being played.
var callbackClient = &http.Client{Timeout: time.Minute}

// Post sends a callback to fullURL over the network with the signature
// sig, and returns the answer's status and body.
func Post(fullURL string, form url.Values, sig string) (int, string, error) {
	req, err := http.NewRequest("POST", fullURL, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, "", err
	}
	SetCallback(req, sig)
	res, err := callbackClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

// API is Twilio's REST API for the account AccountSID: a create-call
// request (POST /2010-04-01/Accounts/{sid}/Calls.json, Basic auth, a form)
// is recorded and answered as Twilio does; any other request is 401 and
// counted as bad.
type API struct {
	// Status is the create-call answer's status; 0 is 201 Created. A status
	// of 400 or more answers with Twilio's error body.
	Status int
	// Placed, when set, is run in its own goroutine with each created
	// call's form: Twilio's side of the call (see PlayCall).
	Placed func(created url.Values)

	mu      sync.Mutex
	created []url.Values
	bad     []string
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, pass, ok := r.BasicAuth()
	if r.Method != "POST" || r.URL.Path != "/2010-04-01/Accounts/"+AccountSID+"/Calls.json" || !ok || user != AccountSID || pass != AuthToken ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		a.mu.Lock()
		a.bad = append(a.bad, fmt.Sprintf("%s %s auth %q/%v type %q", r.Method, r.URL.Path, user, ok, r.Header.Get("Content-Type")))
		a.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	b, _ := io.ReadAll(r.Body)
	form, err := url.ParseQuery(string(b))
	if err != nil {
		a.mu.Lock()
		a.bad = append(a.bad, "form: "+err.Error())
		a.mu.Unlock()
	}
	a.mu.Lock()
	a.created = append(a.created, form)
	a.mu.Unlock()
	status := a.Status
	if status == 0 {
		status = http.StatusCreated
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status >= 400 {
		_, _ = io.WriteString(w, `{"code":21211,"message":"The 'To' number is not a valid phone number.","more_info":"https://www.twilio.com/docs/errors/21211","status":`+strconv.Itoa(status)+`}`)
		return
	}
	_, _ = io.WriteString(w, `{"sid":"`+CallSID+`","status":"queued","to":"`+form.Get("To")+`"}`)
	if a.Placed != nil {
		go a.Placed(form)
	}
}

// Created is the forms of the create-call requests so far, in order.
func (a *API) Created() []url.Values {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]url.Values(nil), a.created...)
}

// Bad describes the requests that were not a valid create-call request.
func (a *API) Bad() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.bad...)
}

// CallbackForm is the form Twilio posts about the call created: the call's
// identity and numbers, with k set to v.
func CallbackForm(created url.Values, k, v string) url.Values {
	return url.Values{"CallSid": {CallSID}, "AccountSid": {AccountSID}, "From": {created.Get("From")}, "To": {created.Get("To")}, k: {v}}
}

// Call is what the callbacks of PlayCall were answered.
type Call struct {
	Created                url.Values
	Answer, Turn           int    // statuses of the answer and the turn
	AnswerTwiML, TurnTwiML string // their bodies
}

var gatherAction = regexp.MustCompile(`action="([^"]+)"`)

// PlayCall is Twilio's side of an answered call whose create-call form was
// created: it posts, each signed, ringing to the status callback, the
// answer URL, one turn with speech to the answer's Gather action (when it
// has one), and completed. An error is a callback that was not delivered.
func PlayCall(created url.Values, speech string) (Call, error) {
	c := Call{Created: created}
	post := func(u string, form url.Values) (int, string, error) { return Post(u, form, Sign(AuthToken, u, form)) }
	status, answer := created.Get("StatusCallback"), created.Get("Url")
	if _, _, err := post(status, CallbackForm(created, "CallStatus", "ringing")); err != nil {
		return c, err
	}
	var err error
	if c.Answer, c.AnswerTwiML, err = post(answer, CallbackForm(created, "CallStatus", "in-progress")); err != nil {
		return c, err
	}
	if m := gatherAction.FindStringSubmatch(c.AnswerTwiML); m != nil {
		if c.Turn, c.TurnTwiML, err = post(m[1], CallbackForm(created, "SpeechResult", speech)); err != nil {
			return c, err
		}
	}
	_, _, err = post(status, CallbackForm(created, "CallStatus", "completed"))
	return c, err
}
