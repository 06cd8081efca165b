package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
)

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

	type outcome struct {
		twiliofake.Call
		forged int
		err    error
	}
	done := make(chan outcome, 1)
	api := &twiliofake.API{Placed: func(created url.Values) { // Twilio's side of the call
		var o outcome
		status := created.Get("StatusCallback")
		o.forged, _, o.err = twiliofake.Post(status, twiliofake.CallbackForm(created, "CallStatus", "busy"),
			twiliofake.Sign(twiliofake.AuthToken, status, twiliofake.CallbackForm(created, "CallStatus", "completed")))
		if o.err == nil {
			o.Call, o.err = twiliofake.PlayCall(created, "balance")
		}
		done <- o
	}}
	fake := httptest.NewServer(api)
	defer fake.Close()

	env := map[string]string{"TWILIO_ACCOUNT_SID": twiliofake.AccountSID, "TWILIO_AUTH_TOKEN": twiliofake.AuthToken, "TWILIO_FROM_NUMBER": twiliofake.FromNumber}
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
	if bad := api.Bad(); len(bad) != 0 {
		t.Errorf("fake Twilio got bad requests: %v", bad)
	}
	if o.err != nil {
		t.Errorf("a callback was not delivered: %v", o.err)
	}
	if o.Created.Get("To") != "+14155550100" || o.Created.Get("From") != "+15005550006" ||
		o.Created.Get("Url") != public+"/v1/telephony/twilio/"+trig.CallSid+"/answer" ||
		o.Created.Get("StatusCallback") != public+"/v1/telephony/twilio/"+trig.CallSid+"/status" {
		t.Errorf("create-call request %v", o.Created)
	}
	if o.forged != 403 {
		t.Errorf("forged callback: %d, want 403", o.forged)
	}
	if o.Answer != 200 || !strings.Contains(o.AnswerTwiML, "<Gather") || o.Turn != 200 || !strings.Contains(o.TurnTwiML, "<Say>") {
		t.Errorf("answer %d %s; turn %d %s", o.Answer, o.AnswerTwiML, o.Turn, o.TurnTwiML)
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
