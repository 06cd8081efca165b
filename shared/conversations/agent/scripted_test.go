package agent_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// mustConfig parses a configuration or fails the test.
func mustConfig(tb testing.TB, js string) agent.Config {
	tb.Helper()
	c, err := agent.ParseConfig([]byte(js), voiceops.URLPolicy{})
	if err != nil {
		tb.Fatalf("ParseConfig: %v", err)
	}
	return c
}

// mustScripted builds the scripted agent of a one-variant configuration
// whose "scripted" object is spec.
func mustScripted(tb testing.TB, spec string) agent.Agent {
	tb.Helper()
	c := mustConfig(tb, `{"variants": [{"id": "v", "agent": {"type": "scripted", "scripted": `+spec+`}}]}`)
	a, err := agent.New(c.Variants[0].Agent, agent.Deps{})
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return a
}

func mustRespond(tb testing.TB, a agent.Agent, req agent.Request) agent.Reply {
	tb.Helper()
	r, err := a.Respond(context.Background(), req)
	if err != nil {
		tb.Fatalf("Respond: %v", err)
	}
	return r
}

const rulesSpec = `{
  "greeting": "Hello{{state.name_suffix}}. How can I help?",
  "rules": [
    {"id": "menu2", "dtmf": "2", "if_state": {"menu": "billing"}, "response": "Billing option two."},
    {"id": "balance", "keywords": ["balance", "how much"], "dtmf": "1", "response": "Your balance is {{state.balance}}.", "intents": ["check_balance"]},
    {"id": "human", "keywords": ["agent", "Human"], "response": "Transferring.", "intents": ["talk_to_human"],
     "handoff": {"destination": "support-queue", "reason": "caller asked for a human"}},
    {"id": "sip", "keywords": ["sip"], "response": "Transferring by SIP.",
     "handoff": {"reason": "sip test", "sip": {"outbound_caller_id": "+15550100", "outbound_endpoint": "carrier-a"}}},
    {"id": "bye", "keywords": ["bye"], "response": "Goodbye {{ state.name }}!", "end": true},
    {"id": "billing", "keywords": ["billing"], "response": "Billing: press 2.", "set_state": {"menu": "billing", "visits": 1}},
    {"id": "order", "regex": "(?i)order (?P<order>[0-9]{4,})", "response": "Order {{state.last}} found.",
     "set_state": {"last": "noted"}, "entities": [{"type": "kind", "value": "order"}]},
    {"id": "zip", "regex": "^[0-9]{5}$", "response": "Zip code noted."},
    {"id": "quiet", "silence": true, "response": "Are you there?"},
    {"id": "later", "keywords": ["balance"], "response": "never: an earlier rule matches first"}
  ],
  "fallback": "Sorry, I did not get that."
}`

func TestScriptedRules(t *testing.T) {
	a := mustScripted(t, rulesSpec)
	type turn struct {
		input, dtmf string
		silence     bool
	}
	tests := []struct {
		name  string
		turn  turn
		state map[string]any
		want  agent.Reply
	}{
		{"keyword", turn{input: "What's my balance?"}, map[string]any{"balance": 12.5},
			agent.Reply{Response: "Your balance is 12.5.", Intents: []string{"check_balance"}}},
		{"keyword case-insensitive", turn{input: "BALANCE please"}, nil,
			agent.Reply{Response: "Your balance is .", Intents: []string{"check_balance"}}},
		{"keyword given in capitals matches", turn{input: "a human, now"}, nil,
			agent.Reply{Response: "Transferring.", Intents: []string{"talk_to_human"},
				Handoff: &agent.Handoff{Destination: "support-queue", Reason: "caller asked for a human"}}},
		{"keyword of several words", turn{input: "How much do I owe"}, nil,
			agent.Reply{Response: "Your balance is .", Intents: []string{"check_balance"}}},
		{"keyword words out of order do not match", turn{input: "much how"}, nil,
			agent.Reply{Response: "Sorry, I did not get that.", OOD: true}},
		{"keyword is a whole word", turn{input: "my balanced diet"}, nil,
			agent.Reply{Response: "Sorry, I did not get that.", OOD: true}},
		{"keyword with punctuation around", turn{input: "agent!!!"}, nil,
			agent.Reply{Response: "Transferring.", Intents: []string{"talk_to_human"},
				Handoff: &agent.Handoff{Destination: "support-queue", Reason: "caller asked for a human"}}},
		{"SIP handoff: destination from the endpoint", turn{input: "sip"}, nil,
			agent.Reply{Response: "Transferring by SIP.", Handoff: &agent.Handoff{Destination: "carrier-a", Reason: "sip test",
				SIP: &agent.SIPHandoff{OutboundCallerID: "+15550100", OutboundEndpoint: "carrier-a"}}}},
		{"end, with state substituted", turn{input: "ok bye"}, map[string]any{"name": "Ada"},
			agent.Reply{Response: "Goodbye Ada!", End: true}},
		{"sets state", turn{input: "billing"}, nil,
			agent.Reply{Response: "Billing: press 2.", State: map[string]any{"menu": "billing", "visits": float64(1)}}},
		{"DTMF", turn{dtmf: "1"}, map[string]any{"balance": "3 dollars"},
			agent.Reply{Response: "Your balance is 3 dollars.", Intents: []string{"check_balance"}}},
		{"DTMF must match exactly", turn{dtmf: "12"}, nil,
			agent.Reply{Response: "Sorry, I did not get that.", OOD: true}},
		{"if_state met: the earlier rule wins", turn{dtmf: "2"}, map[string]any{"menu": "billing"},
			agent.Reply{Response: "Billing option two."}},
		{"if_state not met", turn{dtmf: "2"}, map[string]any{"menu": "main"},
			agent.Reply{Response: "Sorry, I did not get that.", OOD: true}},
		{"regex with a named group: entity, and state set before substitution", turn{input: "where is ORDER 12345?"}, nil,
			agent.Reply{Response: "Order noted found.", State: map[string]any{"last": "noted"},
				Entities: []map[string]any{{"type": "kind", "value": "order"}, {"type": "order", "value": "12345"}}}},
		{"regex anchored", turn{input: "90210"}, nil, agent.Reply{Response: "Zip code noted."}},
		{"regex anchored, no match", turn{input: "zip 90210"}, nil,
			agent.Reply{Response: "Sorry, I did not get that.", OOD: true}},
		{"silence flag", turn{silence: true}, nil, agent.Reply{Response: "Are you there?"}},
		{"blank input is a silence", turn{input: "  "}, nil, agent.Reply{Response: "Are you there?"}},
		{"fallback is out-of-domain", turn{input: "tell me a joke"}, nil,
			agent.Reply{Response: "Sorry, I did not get that.", OOD: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustRespond(t, a, agent.Request{
				Conversation: voiceops.Conversation{ID: "c1", State: tt.state},
				Turn:         voiceops.Turn{UserInput: tt.turn.input, UserInputDTMF: tt.turn.dtmf, IsSilence: tt.turn.silence},
			})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("reply:\n got %s\nwant %s", show(got), show(tt.want))
			}
		})
	}
}

func show(r agent.Reply) string {
	b, _ := json.Marshal(r)
	return string(b)
}

func TestScriptedGreeting(t *testing.T) {
	a := mustScripted(t, rulesSpec)
	got := mustRespond(t, a, agent.Request{Start: true, Conversation: voiceops.Conversation{State: map[string]any{"name_suffix": ", Ada"}}})
	if want := (agent.Reply{Response: "Hello, Ada. How can I help?"}); !reflect.DeepEqual(got, want) {
		t.Errorf("greeting: got %s, want %s", show(got), show(want))
	}
	// A start request is the greeting whatever the turn says.
	got = mustRespond(t, a, agent.Request{Start: true, Turn: voiceops.Turn{UserInput: "bye"}})
	if got.Response != "Hello. How can I help?" || got.End {
		t.Errorf("greeting with input: %s", show(got))
	}
}

// TestScriptedSilenceWithoutRule: a silence no rule handles gets the
// fallback but is not out-of-domain (silences are counted as such).
func TestScriptedSilenceWithoutRule(t *testing.T) {
	a := mustScripted(t, `{"greeting": "hi", "rules": [{"keywords": ["x"], "response": "x"}], "fallback": "pardon?"}`)
	got := mustRespond(t, a, agent.Request{Turn: voiceops.Turn{IsSilence: true}})
	if want := (agent.Reply{Response: "pardon?"}); !reflect.DeepEqual(got, want) {
		t.Errorf("got %s, want %s", show(got), show(want))
	}
}

// TestScriptedNumericState: if_state numbers match however the state's
// numbers were decoded.
func TestScriptedNumericState(t *testing.T) {
	a := mustScripted(t, `{"greeting": "hi", "rules": [{"dtmf": "1", "if_state": {"step": 2, "vip": true, "gone": null}, "response": "step two"}], "fallback": "no"}`)
	for _, state := range []map[string]any{
		{"step": float64(2), "vip": true},
		{"step": 2, "vip": true},
		{"step": int64(2), "vip": true, "gone": nil},
		{"step": json.Number("2"), "vip": true},
	} {
		if got := mustRespond(t, a, agent.Request{Conversation: voiceops.Conversation{State: state}, Turn: voiceops.Turn{UserInputDTMF: "1"}}); got.Response != "step two" {
			t.Errorf("state %v: %q", state, got.Response)
		}
	}
	for _, state := range []map[string]any{
		nil, {"step": "2", "vip": true}, {"step": 2, "vip": false}, {"step": 2, "vip": true, "gone": "here"},
	} {
		if got := mustRespond(t, a, agent.Request{Conversation: voiceops.Conversation{State: state}, Turn: voiceops.Turn{UserInputDTMF: "1"}}); got.Response != "no" {
			t.Errorf("state %v matched: %q", state, got.Response)
		}
	}
}

// TestScriptedRepliesAreCopies: what a caller does to a reply, or to the
// spec it built the agent from, never changes the agent.
func TestScriptedRepliesAreCopies(t *testing.T) {
	c := mustConfig(t, `{"variants": [{"id": "v", "agent": {"type": "scripted", "scripted": {"greeting": "hi", "fallback": "no", "rules": [
	  {"keywords": ["x"], "response": "x", "set_state": {"k": {"nested": [1]}}, "intents": ["i"], "entities": [{"e": 1}],
	   "handoff": {"destination": "d", "sip": {"outbound_endpoint": "e"}}}]}}}]}`)
	spec := c.Variants[0].Agent
	a, err := agent.New(spec, agent.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	req := agent.Request{Turn: voiceops.Turn{UserInput: "x"}}
	first := mustRespond(t, a, req)
	first.State["k"].(map[string]any)["nested"] = "changed"
	first.Intents[0] = "changed"
	first.Entities[0]["e"] = "changed"
	first.Handoff.Destination = "changed"
	first.Handoff.SIP.OutboundEndpoint = "changed"
	r := &spec.Scripted.Rules[0]
	r.Response = "changed"
	r.SetState["k"] = "changed"
	r.Intents[0] = "changed"
	r.Handoff.SIP.OutboundEndpoint = "changed"

	second := mustRespond(t, a, req)
	want := agent.Reply{Response: "x", State: map[string]any{"k": map[string]any{"nested": []any{float64(1)}}}, Intents: []string{"i"},
		Entities: []map[string]any{{"e": float64(1)}}, Handoff: &agent.Handoff{Destination: "d", SIP: &agent.SIPHandoff{OutboundEndpoint: "e"}}}
	if !reflect.DeepEqual(second, want) {
		t.Errorf("second reply changed:\n got %s\nwant %s", show(second), show(want))
	}
}

func TestDemoConfig(t *testing.T) {
	c := agent.DemoConfig("acct_a", "proj_b")
	if c.AccountID != "acct_a" || c.ProjectID != "proj_b" || c.RetentionDays != agent.DefaultRetentionDays {
		t.Fatalf("DemoConfig: %+v", c)
	}
	v, ok := c.Variant("")
	if !ok || v.ID != "main" || v.Name != "Demo IVR" {
		t.Fatalf("default variant: %+v %v", v, ok)
	}
	if v, ok := c.Variant("express"); !ok || v.Default || v.Name != "Express IVR" {
		t.Errorf("express variant: %+v %v", v, ok)
	}
	a, err := agent.New(v.Agent, agent.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	turn := func(input, dtmf string) agent.Reply {
		return mustRespond(t, a, agent.Request{Turn: voiceops.Turn{UserInput: input, UserInputDTMF: dtmf}})
	}
	if g := mustRespond(t, a, agent.Request{Start: true}); !strings.HasPrefix(g.Response, "Welcome to Acme.") {
		t.Errorf("greeting %q", g.Response)
	}
	if r := turn("what's my balance", ""); !reflect.DeepEqual(r.Intents, []string{"check_balance"}) || r.OOD || !strings.Contains(r.Response, "balance") {
		t.Errorf("balance: %s", show(r))
	}
	if r := turn("", "1"); !reflect.DeepEqual(r.Intents, []string{"check_balance"}) {
		t.Errorf("DTMF 1: %s", show(r))
	}
	for _, in := range [][2]string{{"I want a human", ""}, {"agent please", ""}, {"", "2"}} {
		r := turn(in[0], in[1])
		if r.Handoff == nil || r.Handoff.Destination != "support-queue" || r.Handoff.Reason != "caller asked for a human" {
			t.Errorf("%q: %s", in, show(r))
		}
	}
	if r := turn("bye", ""); !r.End {
		t.Errorf("bye: %s", show(r))
	}
	if r := turn("order 123456", ""); len(r.Entities) != 1 || r.Entities[0]["value"] != "123456" {
		t.Errorf("order: %s", show(r))
	}
	if r := turn("what's the weather", ""); !r.OOD || r.Handoff != nil || r.End {
		t.Errorf("fallback: %s", show(r))
	}
	// The file itself loads the same way, and its copy is the caller's.
	b := agent.DemoJSON()
	b[0] = 'x'
	if again := agent.DemoConfig("acct_a", "proj_b"); !reflect.DeepEqual(again, c) {
		t.Errorf("DemoJSON shares the embedded bytes")
	}
}
