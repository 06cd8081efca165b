package twilio

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/voiceops"
)

const (
	testSID   = twiliofake.AccountSID
	testToken = twiliofake.AuthToken
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

// fakeTwilio is a local Twilio REST API answering create-call requests
// with status; at the test's end, a request it took for no valid
// create-call request fails the test.
func fakeTwilio(t *testing.T, status int) (*twiliofake.API, string) {
	t.Helper()
	api := &twiliofake.API{Status: status}
	srv := httptest.NewServer(api)
	t.Cleanup(func() {
		srv.Close()
		if bad := api.Bad(); len(bad) != 0 {
			t.Errorf("bad requests: %v", bad)
		}
	})
	return api, srv.URL
}

func TestPlaceCreatesTheCall(t *testing.T) {
	api, apiURL := fakeTwilio(t, http.StatusCreated)
	p := &Provider{Creds: Static{"acct_a": {AccountSID: testSID, AuthToken: testToken, FromNumber: "+15005550006"}},
		APIBaseURL: apiURL, CallbackBaseURL: "https://base.example.com/"}
	sid := voiceops.NewCallSID()
	if err := p.Place(context.Background(), telephony.CallRequest{SID: sid, AccountID: "acct_a", ProjectID: "proj_a", To: "+14155550100"}); err != nil {
		t.Fatal(err)
	}
	created := api.Created()
	if len(created) != 1 {
		t.Fatalf("%d create-call requests, want 1", len(created))
	}
	form := created[0]
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
	// Twilio refuses the number: rejected, do not retry.
	_, url400 := fakeTwilio(t, http.StatusBadRequest)
	p := &Provider{Creds: creds, APIBaseURL: url400, CallbackBaseURL: "https://b"}
	if err := p.Place(ctx, req); !errors.Is(err, telephony.ErrRejected) {
		t.Errorf("400: %v", err)
	}
	// Twilio is down: worth a retry.
	_, p.APIBaseURL = fakeTwilio(t, http.StatusServiceUnavailable)
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

func TestValid(t *testing.T) {
	u := "https://base.example.com/v1/telephony/twilio/CA0/status"
	form := url.Values{"CallSid": {"CAfeed"}, "CallStatus": {"completed"}, "From": {"+15005550006"}}
	sig := twiliofake.Sign(testToken, u, form)
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
