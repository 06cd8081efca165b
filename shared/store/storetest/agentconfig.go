package storetest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// RunAgentConfigs runs the contract of voiceops.AgentConfigStore. newStores returns
// empty stores and the agent configuration store over the same data (its
// projects are the ones the configurations belong to).
func RunAgentConfigs(t *testing.T, newStores func(t *testing.T) (voiceops.Stores, voiceops.AgentConfigStore)) {
	t.Helper()
	t.Run("PutGet", func(t *testing.T) { testAgentConfigPutGet(t, newStores) })
	t.Run("NoProject", func(t *testing.T) { testAgentConfigNoProject(t, newStores) })
	t.Run("Isolation", func(t *testing.T) { testAgentConfigIsolation(t, newStores) })
	t.Run("Copies", func(t *testing.T) { testAgentConfigCopies(t, newStores) })
	t.Run("DocumentCopies", func(t *testing.T) { testAgentConfigDocumentCopies(t, newStores) })
}

// fullAgentConfig uses every part of the format: every agent type, every
// hook, nested state values, text that JSON escapes.
const fullAgentConfig = `{
  "retention_days": 30,
  "chat_idle_timeout_seconds": 900,
  "variants": [
    {"id": "main", "name": "Main <IVR> & co", "default": true, "agent": {"type": "scripted", "scripted": {
      "greeting": "Grüß dich {{state.name}} \u2028 \"hi\"",
      "fallback": "Sorry?\nAgain?",
      "rules": [
        {"id": "r1", "keywords": ["balance", "how much"], "regex": "(?i)(?P<n>[0-9]+)", "dtmf": "1#", "if_state": {"menu": "main", "n": 2, "ok": true, "gone": null},
         "response": "Balance", "set_state": {"told": true, "deep": {"list": [1, "two", null, {"x": 1.5}]}},
         "intents": ["check_balance"], "entities": [{"type": "account", "value": "1234"}], "end": true},
        {"silence": true, "response": "Hello?", "handoff": {"reason": "sip", "sip": {"outbound_caller_id": "+15550100", "outbound_endpoint": "pbx"}}},
        {"keywords": ["human"], "response": "Transferring", "handoff": {"destination": "support-queue", "reason": "caller asked for a human"}}
      ]}}},
    {"id": "own", "agent": {"type": "http", "http": {"url": "https://agent.example.com/turn?x=1&y=2",
      "signing_secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "timeout_ms": 1500, "headers": {"Authorization": "Bearer t"}}}},
    {"id": "llm", "agent": {"type": "bedrock", "bedrock": {"model_id": "anthropic.claude-3-haiku-20240307-v1:0",
      "system_prompt": "You answer for Acme.\nBe brief.", "temperature": 0.3, "max_tokens": 300, "tools": ["lookup_order"],
      "guardrail": {"id": "gr1", "version": "DRAFT"}, "handoff": {"destination": "support-queue", "reason": "asked", "sip": {"outbound_caller_id": "+15550100", "outbound_endpoint": "pbx"}},
      "fallback": "One moment.", "on_failure": "handoff", "timeout_ms": 6000, "history_turns": 6}}}
  ],
  "tools": {"lookup_order": {"description": "Finds an order.", "input_schema": {"type": "object",
      "properties": {"order": {"type": "string", "maxLength": 20}}, "required": ["order"], "additionalProperties": false},
    "function": {"lambda_arn": "arn:aws:lambda:us-east-1:123456789012:function:order", "timeout_ms": 800}}},
  "functions": {
    "on_start": {"url": "https://fn.example.com/start", "signing_secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
    "on_turn": {"lambda_arn": "arn:aws:lambda:us-east-1:123456789012:function:turn", "timeout_ms": 100},
    "on_end": {"lambda_arn": "arn:aws:lambda:us-east-1:123456789012:function:end:live"},
    "on_bridge_ended": {"lambda_arn": "arn:aws:lambda:us-east-1:123456789012:function:bridge"},
    "on_external_event": {"url": "https://fn.example.com/event", "signing_secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "timeout_ms": 10000}
  }
}`

func mustAgentConfig(t *testing.T, js, accountID, projectID string) agent.Config {
	t.Helper()
	c, err := agent.ParseConfig([]byte(js), voiceops.URLPolicy{})
	mustNil(t, "ParseConfig", err)
	c.AccountID, c.ProjectID = accountID, projectID
	return c
}

func checkAgentConfig(t *testing.T, what string, want, got agent.Config) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		t.Errorf("%s: configuration differs:\nwant %s\n got %s", what, w, g)
	}
}

func testAgentConfigPutGet(t *testing.T, newStores func(*testing.T) (voiceops.Stores, voiceops.AgentConfigStore)) {
	s, cs := newStores(t)
	a := mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	_, err := agent.GetConfig(ctx(t), cs, a.ID, p.ID)
	wantErr(t, "GetConfig before any PutConfig", err, voiceops.ErrNotFound)

	full := mustAgentConfig(t, fullAgentConfig, a.ID, p.ID)
	checkEveryFieldSet(t, "agent configuration", full)
	mustNil(t, "PutConfig", agent.PutConfig(ctx(t), cs, full))
	got, err := agent.GetConfig(ctx(t), cs, a.ID, p.ID)
	mustNil(t, "GetConfig", err)
	checkAgentConfig(t, "GetConfig", full, got)

	// The variants of the stored configuration still build.
	for _, v := range got.Variants {
		if v.Agent.Type == agent.TypeScripted {
			if _, err := agent.New(v.Agent, agent.Deps{}); err != nil {
				t.Errorf("New(%s) from the stored configuration: %v", v.ID, err)
			}
		}
	}

	// A second PutConfig replaces the first.
	demo := agent.DemoConfig(a.ID, p.ID)
	mustNil(t, "PutConfig again", agent.PutConfig(ctx(t), cs, demo))
	got, err = agent.GetConfig(ctx(t), cs, a.ID, p.ID)
	mustNil(t, "GetConfig after the replacement", err)
	checkAgentConfig(t, "GetConfig after the replacement", demo, got)
}

func testAgentConfigNoProject(t *testing.T, newStores func(*testing.T) (voiceops.Stores, voiceops.AgentConfigStore)) {
	s, cs := newStores(t)
	a := mustAccount(t, s)
	for _, ids := range [][2]string{
		{a.ID, "proj_missing"},
		{"acct_missing", "proj_missing"},
		{a.ID, ""},
		{"", ""},
	} {
		err := agent.PutConfig(ctx(t), cs, agent.DemoConfig(ids[0], ids[1]))
		wantErr(t, "PutConfig for "+ids[0]+"/"+ids[1], err, voiceops.ErrNotFound)
		_, err = agent.GetConfig(ctx(t), cs, ids[0], ids[1])
		wantErr(t, "GetConfig after a refused PutConfig", err, voiceops.ErrNotFound)
	}
}

func testAgentConfigIsolation(t *testing.T, newStores func(*testing.T) (voiceops.Stores, voiceops.AgentConfigStore)) {
	s, cs := newStores(t)
	a, b := mustAccount(t, s), mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	other := mustProject(t, s, a.ID)
	// A project of account b with the same ID as p.
	mustNil(t, "CreateProject", s.Accounts.CreateProject(ctx(t), voiceops.Project{ID: p.ID, AccountID: b.ID, Name: "same ID", CreatedAt: at(2)}))

	mustNil(t, "PutConfig", agent.PutConfig(ctx(t), cs, agent.DemoConfig(a.ID, p.ID)))
	_, err := agent.GetConfig(ctx(t), cs, a.ID, other.ID)
	wantErr(t, "GetConfig of another project", err, voiceops.ErrNotFound)
	_, err = agent.GetConfig(ctx(t), cs, b.ID, p.ID)
	wantErr(t, "GetConfig of the same project ID in another account", err, voiceops.ErrNotFound)

	onB := mustAgentConfig(t, fullAgentConfig, b.ID, p.ID)
	mustNil(t, "PutConfig on b", agent.PutConfig(ctx(t), cs, onB))
	got, err := agent.GetConfig(ctx(t), cs, a.ID, p.ID)
	mustNil(t, "GetConfig on a", err)
	checkAgentConfig(t, "account a's configuration after b's PutConfig", agent.DemoConfig(a.ID, p.ID), got)
	got, err = agent.GetConfig(ctx(t), cs, b.ID, p.ID)
	mustNil(t, "GetConfig on b", err)
	checkAgentConfig(t, "account b's configuration", onB, got)
}

// testAgentConfigCopies: neither the configuration passed to PutConfig nor
// one returned by GetConfig shares anything with what the store holds.
func testAgentConfigCopies(t *testing.T, newStores func(*testing.T) (voiceops.Stores, voiceops.AgentConfigStore)) {
	s, cs := newStores(t)
	a := mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	put := mustAgentConfig(t, fullAgentConfig, a.ID, p.ID)
	want := put.Clone()
	mustNil(t, "PutConfig", agent.PutConfig(ctx(t), cs, put))
	spoil := func(c agent.Config) {
		c.Variants[0].Name = "spoiled"
		r := &c.Variants[0].Agent.Scripted.Rules[0]
		r.Keywords[0] = "spoiled"
		r.SetState["deep"].(map[string]any)["list"].([]any)[0] = "spoiled"
		r.Handoff = &agent.Handoff{Destination: "spoiled"}
		c.Variants[1].Agent.HTTP.Headers["Authorization"] = "spoiled"
		c.Functions[agent.HookOnEnd] = agent.FunctionSpec{URL: "spoiled"}
	}
	spoil(put)
	got, err := agent.GetConfig(ctx(t), cs, a.ID, p.ID)
	mustNil(t, "GetConfig", err)
	checkAgentConfig(t, "GetConfig after changing the config given to PutConfig", want, got)
	spoil(got)
	got, err = agent.GetConfig(ctx(t), cs, a.ID, p.ID)
	mustNil(t, "GetConfig", err)
	checkAgentConfig(t, "GetConfig after changing a config it returned", want, got)
}

// testAgentConfigDocumentCopies: the store keeps the document byte for
// byte, and shares no bytes with its callers.
func testAgentConfigDocumentCopies(t *testing.T, newStores func(*testing.T) (voiceops.Stores, voiceops.AgentConfigStore)) {
	s, cs := newStores(t)
	a := mustAccount(t, s)
	p := mustProject(t, s, a.ID)
	doc := []byte(`{"variants":[{"id":"main"}]}`)
	want := string(doc)
	mustNil(t, "PutAgentConfig", cs.PutAgentConfig(ctx(t), a.ID, p.ID, doc))
	doc[2] = 'X'
	got, err := cs.GetAgentConfig(ctx(t), a.ID, p.ID)
	mustNil(t, "GetAgentConfig", err)
	if string(got) != want {
		t.Errorf("GetAgentConfig after changing the document given to PutAgentConfig = %s, want %s", got, want)
	}
	got[2] = 'X'
	got, err = cs.GetAgentConfig(ctx(t), a.ID, p.ID)
	mustNil(t, "GetAgentConfig", err)
	if string(got) != want {
		t.Errorf("GetAgentConfig after changing a document it returned = %s, want %s", got, want)
	}
}
