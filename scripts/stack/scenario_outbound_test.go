//go:build stack

package main

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
)

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
		twilio.Account{AccountSID: twiliofake.AccountSID, AuthToken: twiliofake.AuthToken, FromNumber: twiliofake.FromNumber}); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		twiliofake.Call
		err error
	}
	done := make(chan outcome, 1)
	api := &twiliofake.API{Placed: func(created url.Values) {
		var o outcome
		o.Call, o.err = twiliofake.PlayCall(created, "balance")
		select { // the first call's outcome; a later one never holds the stand-in
		case done <- o:
		default:
		}
	}}
	twilioStandIn.set(api.ServeHTTP)
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
	if bad := api.Bad(); len(bad) != 0 {
		t.Errorf("the Twilio stand-in got bad requests: %v", bad)
	}
	if o.err != nil {
		t.Errorf("a callback was not delivered: %v", o.err)
	}
	if o.Created.Get("To") != "+14155550100" || o.Created.Get("Url") != st.Credentials.BaseURL+"/v1/telephony/twilio/"+trig.CallSid+"/answer" {
		t.Errorf("create-call request %v", o.Created)
	}
	if o.Answer != 200 || !strings.Contains(o.AnswerTwiML, "<Gather") || o.Turn != 200 || !strings.Contains(o.TurnTwiML, "<Say>") {
		t.Errorf("answer %d %s; turn %d %s", o.Answer, o.AnswerTwiML, o.Turn, o.TurnTwiML)
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
