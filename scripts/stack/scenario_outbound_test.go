//go:build stack

package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/lambdamain"
	"github.com/voiceops/opsapi/shared/telephony/twilio"
)

const (
	fakeSID   = "AC0123456789abcdef0123456789abcdef"
	fakeToken = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	fakeCall  = "CAfeedfeedfeedfeedfeedfeedfeedfeed"
)

// twilioSign is Twilio's documented signature (as scripts/dev's test).
func twilioSign(fullURL string, form url.Values) string {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := fullURL
	for _, k := range keys {
		s += k + form.Get(k)
	}
	m := hmac.New(sha1.New, []byte(fakeToken))
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// An outbound call through the dialer's queue and the Twilio adapter: the
// Twilio stand-in takes the create-call request and calls back the calls
// routes, signed (ringing, the answer URL, a speech turn, completed); the
// call ends in success with its conversation linked.
func TestOutboundCallThroughTwilio(t *testing.T) {
	acct := st.Credentials.Accounts[0]
	proj := acct.Projects[1]
	var secretID string
	for _, f := range st.Topology.Functions {
		if id := f.Env[lambdamain.TwilioSecretEnv]; id != "" {
			secretID = id
		}
	}
	if secretID == "" {
		t.Fatal("no function reads the Twilio secret")
	}
	if err := twilio.SetAccount(context.Background(), secretsmanager.NewFromConfig(st.AWS), secretID, acct.AccountID,
		twilio.Account{AccountSID: fakeSID, AuthToken: fakeToken, FromNumber: "+15005550006"}); err != nil {
		t.Fatal(err)
	}
	post := func(u string, form url.Values) (int, string) {
		req, _ := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Twilio-Signature", twilioSign(u, form))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("POST %s: %v", u, err)
			return 0, ""
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	gather := regexp.MustCompile(`action="([^"]+)"`)
	type outcome struct {
		created          url.Values
		answer, turn     int
		answerTw, turnTw string
	}
	done := make(chan outcome, 1)
	twilioStandIn.set(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(b))
		if user, pass, _ := r.BasicAuth(); r.URL.Path != "/2010-04-01/Accounts/"+fakeSID+"/Calls.json" || user != fakeSID || pass != fakeToken {
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		_, _ = io.WriteString(w, `{"sid":"`+fakeCall+`","status":"queued"}`)
		go func() {
			o := outcome{created: form}
			with := func(k, v string) url.Values {
				return url.Values{"CallSid": {fakeCall}, "AccountSid": {fakeSID}, "From": {form.Get("From")}, "To": {form.Get("To")}, k: {v}}
			}
			status := form.Get("StatusCallback")
			post(status, with("CallStatus", "ringing"))
			o.answer, o.answerTw = post(form.Get("Url"), with("CallStatus", "in-progress"))
			if m := gather.FindStringSubmatch(o.answerTw); m != nil {
				o.turn, o.turnTw = post(m[1], with("SpeechResult", "balance"))
			}
			post(status, with("CallStatus", "completed"))
			done <- o
		}()
	})
	h := map[string]string{"X-Service-Auth-Token": proj.ServiceAuthToken}
	var trig struct{ CallSid string }
	if code, _, b := call(t, "POST", st.Credentials.BaseURL+"/v1/outbound-calling/trigger", h, map[string]any{"to_number": "+14155550100"}, &trig); code/100 != 2 {
		t.Fatalf("trigger: %d %s", code, b)
	}
	var o outcome
	select {
	case o = <-done:
	case <-time.After(45 * time.Second):
		t.Fatal("the Twilio stand-in was not asked to place the call within 45 s")
	}
	if o.created.Get("To") != "+14155550100" || o.created.Get("Url") != st.Credentials.BaseURL+"/v1/telephony/twilio/"+trig.CallSid+"/answer" {
		t.Errorf("create-call request %v", o.created)
	}
	if o.answer != 200 || !strings.Contains(o.answerTw, "<Gather") || o.turn != 200 || !strings.Contains(o.turnTw, "<Say>") {
		t.Errorf("answer %d %s; turn %d %s", o.answer, o.answerTw, o.turn, o.turnTw)
	}
	var status map[string]any
	if code, _, b := call(t, "GET", st.Credentials.BaseURL+"/v1/outbound-calling/"+trig.CallSid+"/status", h, nil, &status); code != 200 || status["status"] != "success" {
		t.Fatalf("status: %d %s, want success", code, b)
	}
	var list struct{ Conversations []map[string]any }
	u := st.Credentials.BaseURL + "/v3/" + acct.AccountID + "/" + proj.ProjectID + "/conversations?limit=10"
	if code, _, b := call(t, "GET", u, map[string]string{"x-api-key": proj.APIKey}, nil, &list); code != 200 || len(list.Conversations) != 1 ||
		list.Conversations[0]["to_number"] != "+14155550100" || list.Conversations[0]["in_progress"] != false {
		t.Fatalf("conversations: %d %s, want the call's one conversation, ended", code, b)
	}
}
