package main

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

const (
	fakeSID   = "AC0123456789abcdef0123456789abcdef"
	fakeToken = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
)

// twilioSign is Twilio's documented signature, computed here.
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

// TestOutboundThroughTwilio runs the dev server with -telephony twilio
// against a local fake of Twilio that, like Twilio, takes the create-call
// request and then calls the server back, signed: ringing, the answer URL
// (TwiML with a speech Gather), one speech turn, completed. A callback with
// a bad signature is 403 and changes nothing.
func TestOutboundThroughTwilio(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	public := "http://" + addr

	post := func(u string, form url.Values, sig string) (int, string) {
		req, _ := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Twilio-Signature", sig)
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
		created                url.Values
		forged, answer, turn   int
		answerTwiML, turnTwiML string
	}
	done := make(chan outcome, 1)
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(b))
		if user, pass, _ := r.BasicAuth(); r.URL.Path != "/2010-04-01/Accounts/"+fakeSID+"/Calls.json" || user != fakeSID || pass != fakeToken {
			t.Errorf("fake Twilio got %s %s as %s", r.Method, r.URL.Path, user)
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		_, _ = io.WriteString(w, `{"sid":"CAfeedfeedfeedfeedfeedfeedfeedfeed","status":"queued"}`)
		go func() { // Twilio's side of the call
			var o outcome
			o.created = form
			base := url.Values{"CallSid": {"CAfeedfeedfeedfeedfeedfeedfeedfeed"}, "AccountSid": {fakeSID}, "From": {form.Get("From")}, "To": {form.Get("To")}}
			with := func(k, v string) url.Values {
				f := url.Values{}
				for kk, vv := range base {
					f[kk] = vv
				}
				f.Set(k, v)
				return f
			}
			status := form.Get("StatusCallback")
			o.forged, _ = post(status, with("CallStatus", "busy"), twilioSign(status, with("CallStatus", "completed")))
			ringing := with("CallStatus", "ringing")
			post(status, ringing, twilioSign(status, ringing))
			answer := with("CallStatus", "in-progress")
			o.answer, o.answerTwiML = post(form.Get("Url"), answer, twilioSign(form.Get("Url"), answer))
			if m := gather.FindStringSubmatch(o.answerTwiML); m != nil {
				turn := with("SpeechResult", "balance")
				o.turn, o.turnTwiML = post(m[1], turn, twilioSign(m[1], turn))
			}
			completed := with("CallStatus", "completed")
			post(status, completed, twilioSign(status, completed))
			done <- o
		}()
	}))
	defer fake.Close()

	env := map[string]string{"TWILIO_ACCOUNT_SID": fakeSID, "TWILIO_AUTH_TOKEN": fakeToken, "TWILIO_FROM_NUMBER": "+15005550006"}
	creds, stop := startDevEnv(t, func(k string) string { return env[k] },
		"-addr", addr, "-telephony", "twilio", "-public-url", public, "-twilio-api-url", fake.URL)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	proj := creds.Accounts[0].Projects[0]
	req, _ := http.NewRequest("POST", creds.BaseURL+"/v1/outbound-calling/trigger", strings.NewReader(`{"to_number":"+14155550100","metadata":{"first_name":"Ada"}}`))
	req.Header.Set("X-Service-Auth-Token", proj.ServiceAuthToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var trig struct{ CallSid string }
	_ = json.NewDecoder(res.Body).Decode(&trig)
	res.Body.Close()

	var o outcome
	select {
	case o = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the fake Twilio was not asked to place the call within 20 s")
	}
	if o.created.Get("To") != "+14155550100" || o.created.Get("From") != "+15005550006" ||
		o.created.Get("Url") != public+"/v1/telephony/twilio/"+trig.CallSid+"/answer" ||
		o.created.Get("StatusCallback") != public+"/v1/telephony/twilio/"+trig.CallSid+"/status" {
		t.Errorf("create-call request %v", o.created)
	}
	if o.forged != 403 {
		t.Errorf("forged callback: %d, want 403", o.forged)
	}
	if o.answer != 200 || !strings.Contains(o.answerTwiML, "<Gather") || o.turn != 200 || !strings.Contains(o.turnTwiML, "<Say>") {
		t.Errorf("answer %d %s; turn %d %s", o.answer, o.answerTwiML, o.turn, o.turnTwiML)
	}
	req, _ = http.NewRequest("GET", creds.BaseURL+"/v1/outbound-calling/"+trig.CallSid+"/status", nil)
	req.Header.Set("X-Service-Auth-Token", proj.ServiceAuthToken)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	_ = json.NewDecoder(res.Body).Decode(&st)
	res.Body.Close()
	if st["status"] != "success" || st["reason"] != nil {
		t.Errorf("status after completed: %v (a forged busy must not have counted)", st)
	}
	req, _ = http.NewRequest("GET", creds.BaseURL+"/v3/"+creds.Accounts[0].AccountID+"/"+proj.ProjectID+"/conversations?limit=10", nil)
	req.Header.Set("x-api-key", proj.APIKey)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Conversations []map[string]any }
	_ = json.NewDecoder(res.Body).Decode(&list)
	res.Body.Close()
	if len(list.Conversations) != 1 || list.Conversations[0]["to_number"] != "+14155550100" || list.Conversations[0]["from_number"] != "+15005550006" ||
		list.Conversations[0]["num_turns"] != 2.0 || list.Conversations[0]["in_progress"] != false {
		t.Errorf("conversations %v", list.Conversations)
	}
}
