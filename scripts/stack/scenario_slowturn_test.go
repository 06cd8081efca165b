//go:build stack

package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/calls/twilioapi"
	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// slowAgentTurn is how long the stand-in agent takes to answer a turn.
const slowAgentTurn = 20 * time.Second

var (
	gatherActionURL = regexp.MustCompile(`<Gather[^>]*action="([^"]+)"`)
	redirectURL     = regexp.MustCompile(`<Redirect[^>]*>([^<]+)</Redirect>`)
)

// An outbound call whose project's agent (an HTTP agent, here a local
// stand-in) takes 20 s to answer a turn, played as Twilio would: every
// callback answers within twilio.CallbackDeadline, the callee hears the
// filler while the agent works (the turn's run outlives its callback in
// an asynchronous invocation of the calls function), a <Redirect> fetch
// returns the agent's answer, and the turn is asked of the agent and
// committed once.
func TestSlowTurnOnAVoiceCall(t *testing.T) {
	acct := st.Credentials.Accounts[1]
	proj := acct.Projects[1]
	var turns, greetings atomic.Int32
	standIn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Start bool `json:"start"`
			Turn  struct {
				UserInput string `json:"user_input"`
			} `json:"turn"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer := "Hello, how can I help?"
		if req.Start {
			greetings.Add(1)
		} else {
			turns.Add(1)
			select {
			case <-time.After(slowAgentTurn):
			case <-r.Context().Done():
				return
			}
			answer = "Your balance is 42 pounds."
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"response": answer})
	}))
	defer standIn.Close()

	db := dynamodb.NewFromConfig(st.AWS)
	names := st.Topology.TableNames()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	cfg := agent.DemoConfig(acct.AccountID, proj.ProjectID)
	cfg.Variants = []agent.Variant{{ID: "slow", Agent: agent.AgentSpec{Type: agent.TypeHTTP, HTTP: &agent.HTTPSpec{
		URL: standIn.URL + "/agent", SigningSecret: "whsec_" + base64.StdEncoding.EncodeToString(secret), TimeoutMS: agent.MaxAgentTimeoutMS}}}}
	if _, err := agent.ParseConfig(mustJSON(t, cfg), voiceops.URLPolicy{AllowLoopback: true}); err != nil {
		t.Fatalf("the slow agent's configuration: %v", err)
	}
	if err := agent.PutConfig(context.Background(), dynamo.NewConfig(db, names.Config, names.Deliveries).AgentConfigs(), cfg); err != nil {
		t.Fatal(err)
	}
	var secretID string
	for _, f := range st.Topology.Functions {
		if id := f.Env[lambdamain.TwilioSecretEnv]; id != "" {
			secretID = id
		}
	}
	if err := twilio.SetAccount(context.Background(), secretsmanager.NewFromConfig(st.AWS), secretID, acct.AccountID,
		twilio.Account{AccountSID: twiliofake.AccountSID, AuthToken: twiliofake.AuthToken, FromNumber: twiliofake.FromNumber}); err != nil {
		t.Fatal(err)
	}

	type callback struct {
		url  string
		code int
		took time.Duration
		body string
	}
	type played struct {
		callbacks []callback
		err       error
	}
	done := make(chan played, 1)
	api := &twiliofake.API{Placed: func(created url.Values) {
		var p played
		post := func(u string, form url.Values) callback {
			start := time.Now()
			code, body, err := twiliofake.Post(u, form, twiliofake.Sign(twiliofake.AuthToken, u, form))
			if err != nil && p.err == nil {
				p.err = err
			}
			cb := callback{url: u, code: code, took: time.Since(start), body: body}
			p.callbacks = append(p.callbacks, cb)
			return cb
		}
		defer func() { // the first call's; a later one never holds the stand-in
			select {
			case done <- p:
			default:
			}
		}()
		status, answer := created.Get("StatusCallback"), created.Get("Url")
		post(status, twiliofake.CallbackForm(created, "CallStatus", "ringing"))
		cb := post(answer, twiliofake.CallbackForm(created, "CallStatus", "in-progress"))
		for i := 0; i < 10 && redirectURL.MatchString(cb.body); i++ { // a slow greeting: fetch it
			time.Sleep(time.Second) // the filler being said
			cb = post(html.UnescapeString(redirectURL.FindStringSubmatch(cb.body)[1]), twiliofake.CallbackForm(created, "CallStatus", "in-progress"))
		}
		m := gatherActionURL.FindStringSubmatch(cb.body)
		if m == nil {
			return
		}
		cb = post(html.UnescapeString(m[1]), twiliofake.CallbackForm(created, "SpeechResult", "what is my balance?"))
		for i := 0; i < 10 && redirectURL.MatchString(cb.body); i++ {
			time.Sleep(time.Second)
			cb = post(html.UnescapeString(redirectURL.FindStringSubmatch(cb.body)[1]), twiliofake.CallbackForm(created, "CallStatus", "in-progress"))
		}
		post(status, twiliofake.CallbackForm(created, "CallStatus", "completed"))
	}}
	twilioStandIn.set(api.ServeHTTP)
	h := map[string]string{"X-Service-Auth-Token": proj.ServiceAuthToken}
	var trig struct{ CallSid string }
	if code, _, b := call(t, "POST", st.Credentials.BaseURL+"/v1/outbound-calling/trigger", h, map[string]any{"to_number": "+14155550100"}, &trig); code/100 != 2 {
		t.Fatalf("trigger: %d %s", code, b)
	}
	var p played
	select {
	case p = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the call was not placed and played within 3 minutes")
	}
	if p.err != nil {
		t.Fatalf("a callback was not delivered: %v", p.err)
	}
	heardFiller, answered := false, false
	for i, cb := range p.callbacks {
		_, twiml, _ := strings.Cut(cb.body, "?>")
		t.Logf("callback %d: %d in %v: %s %.160s", i, cb.code, cb.took.Round(time.Millisecond), strings.TrimPrefix(cb.url, st.Credentials.BaseURL), twiml)
		if cb.took >= twilio.CallbackDeadline {
			t.Errorf("callback %d (%s) answered in %v, past %v", i, cb.url, cb.took, twilio.CallbackDeadline)
		}
		if cb.code/100 != 2 {
			t.Errorf("callback %d (%s): %d %s", i, cb.url, cb.code, cb.body)
		}
		heardFiller = heardFiller || strings.Contains(cb.body, twilioapi.Filler)
		if strings.Contains(cb.body, "42 pounds") {
			answered = true
			if !strings.Contains(cb.url, "result=1") {
				t.Errorf("the agent's answer came from %s, not a fetch of the turn's result", cb.url)
			}
		}
	}
	if !heardFiller || !answered {
		t.Errorf("filler heard %v, the agent's answer returned %v; want both", heardFiller, answered)
	}
	if n := turns.Load(); n != 1 {
		t.Errorf("the agent was asked the turn %d times, want 1", n)
	}
	var status map[string]any
	if code, _, b := call(t, "GET", st.Credentials.BaseURL+"/v1/outbound-calling/"+trig.CallSid+"/status", h, nil, &status); code != 200 || status["status"] != "success" {
		t.Fatalf("status: %d %s, want success", code, b)
	}
	c, err := dynamo.NewCalls(db, names.Calls).GetCall(context.Background(), trig.CallSid, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c.StepStarted == nil {
		t.Errorf("the turn was not run by its own invocation (no StepStarted)")
	}
	conv, err := dynamo.NewStores(db, names).Conversations.GetConversation(context.Background(), acct.AccountID, proj.ProjectID, c.ConversationID)
	if err != nil || conv.NumTurns != 2 {
		t.Errorf("conversation of %d turns (%v), want 2: the greeting and the turn, committed once", conv.NumTurns, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
