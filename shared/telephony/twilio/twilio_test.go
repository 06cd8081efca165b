package twilio

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/telephony"
	"github.com/voiceops/opsapi/shared/voiceops"
)

const (
	testSID   = "AC0123456789abcdef0123456789abcdef"
	testToken = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
)

// Static is a fixed set of accounts.
type Static map[string]Account

func (s Static) Twilio(_ context.Context, id string) (Account, error) {
	a, ok := s[id]
	if !ok {
		return Account{}, voiceops.ErrNotFound
	}
	return a, nil
}

// fakeTwilio is a local Twilio REST API: it checks the create-call request
// it receives and answers as Twilio does.
func fakeTwilio(t *testing.T, status int, got *url.Values) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if r.Method != "POST" || r.URL.Path != "/2010-04-01/Accounts/"+testSID+"/Calls.json" || !ok || user != testSID || pass != testToken ||
			!strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			t.Errorf("request %s %s auth %q/%v type %q", r.Method, r.URL.Path, user, ok, r.Header.Get("Content-Type"))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		form, err := url.ParseQuery(string(b))
		if err != nil {
			t.Errorf("form: %v", err)
		}
		*got = form
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status >= 400 {
			_, _ = io.WriteString(w, `{"code":21211,"message":"The 'To' number is not a valid phone number.","more_info":"https://www.twilio.com/docs/errors/21211","status":`+strconv.Itoa(status)+`}`)
			return
		}
		_, _ = io.WriteString(w, `{"sid":"CAfeedfeedfeedfeedfeedfeedfeedfeed","status":"queued","to":"`+form.Get("To")+`"}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPlaceCreatesTheCall(t *testing.T) {
	var form url.Values
	srv := fakeTwilio(t, http.StatusCreated, &form)
	p := &Provider{Creds: Static{"acct_a": {AccountSID: testSID, AuthToken: testToken, FromNumber: "+15005550006"}},
		APIBaseURL: srv.URL, CallbackBaseURL: "https://base.example.com/"}
	sid := voiceops.NewCallSID()
	if err := p.Place(context.Background(), telephony.CallRequest{SID: sid, AccountID: "acct_a", ProjectID: "proj_a", To: "+14155550100"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"To": "+14155550100", "From": "+15005550006", "Method": "POST",
		"Url":                  "https://base.example.com/v1/telephony/twilio/" + sid + "/answer",
		"StatusCallback":       "https://base.example.com/v1/telephony/twilio/" + sid + "/status",
		"StatusCallbackMethod": "POST", "Timeout": "60", "TimeLimit": "3600",
	}
	for k, v := range want {
		if form.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, form.Get(k), v)
		}
	}
	events := form["StatusCallbackEvent"]
	sort.Strings(events)
	if !slices.Equal(events, []string{"answered", "completed", "initiated", "ringing"}) {
		t.Errorf("StatusCallbackEvent %v", events)
	}
}

func TestPlaceErrors(t *testing.T) {
	ctx := context.Background()
	req := telephony.CallRequest{SID: voiceops.NewCallSID(), AccountID: "acct_a", To: "+14155550100"}
	creds := Static{"acct_a": {AccountSID: testSID, AuthToken: testToken, FromNumber: "+15005550006"}}
	var form url.Values
	// Twilio refuses the number: rejected, do not retry.
	p := &Provider{Creds: creds, APIBaseURL: fakeTwilio(t, http.StatusBadRequest, &form).URL, CallbackBaseURL: "https://b"}
	if err := p.Place(ctx, req); !errors.Is(err, telephony.ErrRejected) {
		t.Errorf("400: %v", err)
	}
	// Twilio is down: worth a retry.
	p.APIBaseURL = fakeTwilio(t, http.StatusServiceUnavailable, &form).URL
	if err := p.Place(ctx, req); err == nil || errors.Is(err, telephony.ErrRejected) {
		t.Errorf("503: %v", err)
	}
	// No credentials for the account: rejected, and no request made.
	p.Creds = Static{}
	if err := p.Place(ctx, req); !errors.Is(err, telephony.ErrRejected) {
		t.Errorf("no credentials: %v", err)
	}
	if s := (Account{AccountSID: testSID, AuthToken: testToken}).String(); strings.Contains(s, testToken) {
		t.Errorf("String shows the token: %s", s)
	}
}

// sign computes X-Twilio-Signature as Twilio documents it: base64 of
// HMAC-SHA1 over the URL followed by each POST parameter's name and value,
// sorted by name; independent of the library under test.
func sign(token, fullURL string, form url.Values) string {
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

func TestValid(t *testing.T) {
	u := "https://base.example.com/v1/telephony/twilio/CA0/status"
	form := url.Values{"CallSid": {"CAfeed"}, "CallStatus": {"completed"}, "From": {"+15005550006"}}
	sig := sign(testToken, u, form)
	if !Valid(testToken, u, form, sig) {
		t.Fatal("a valid signature is refused")
	}
	tampered := url.Values{"CallSid": {"CAfeed"}, "CallStatus": {"busy"}, "From": {"+15005550006"}}
	for name, ok := range map[string]bool{
		"other token":  Valid("ffffffffffffffffffffffffffffffff", u, form, sig),
		"other URL":    Valid(testToken, strings.Replace(u, "CA0", "CA1", 1), form, sig),
		"other params": Valid(testToken, u, tampered, sig),
		"no signature": Valid(testToken, u, form, ""),
	} {
		if ok {
			t.Errorf("%s: accepted", name)
		}
	}
}
