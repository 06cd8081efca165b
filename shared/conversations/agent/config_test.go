package agent_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/voiceops"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // 24 bytes

const fullConfig = `{
  "account_id": "acct_1",
  "project_id": "proj_1",
  "variants": [
    {"id": "main", "default": true, "agent": {"type": "scripted", "scripted": {
      "greeting": "Hi", "fallback": "Sorry?",
      "rules": [{"keywords": ["bye"], "response": "Bye", "end": true}]}}},
    {"id": "own", "name": "Own agent", "agent": {"type": "http", "http": {
      "url": "https://agent.example.com/turn?token=abc", "signing_secret": "` + testSecret + `",
      "headers": {"Authorization": "Bearer x"}}}}
  ],
  "functions": {
    "on_start": {"url": "https://fn.example.com/start", "signing_secret": "` + testSecret + `"},
    "on_turn": {"lambda_arn": "arn:aws:lambda:us-east-1:123456789012:function:on-turn", "timeout_ms": 500},
    "on_end": {"lambda_arn": "arn:aws:lambda:eu-west-2:123456789012:function:end:live"},
    "on_bridge_ended": {"lambda_arn": "arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:b:$LATEST"},
    "on_external_event": {"url": "https://fn.example.com/event", "signing_secret": "` + testSecret + `", "timeout_ms": 10000}
  }
}`

func TestParseConfig(t *testing.T) {
	c := mustConfig(t, fullConfig)
	if c.AccountID != "acct_1" || c.ProjectID != "proj_1" {
		t.Errorf("IDs: %q %q", c.AccountID, c.ProjectID)
	}
	if c.RetentionDays != agent.DefaultRetentionDays || c.Retention().Hours() != 90*24 {
		t.Errorf("retention: %d %v", c.RetentionDays, c.Retention())
	}
	if c.Variants[0].Name != "main" || c.Variants[1].Name != "Own agent" {
		t.Errorf("names default to the ID: %q %q", c.Variants[0].Name, c.Variants[1].Name)
	}
	if h := c.Variants[1].Agent.HTTP; h.TimeoutMS != agent.DefaultTimeoutMS || h.Timeout().Milliseconds() != 2000 {
		t.Errorf("http timeout default: %+v", h)
	}
	if len(c.Functions) != len(agent.Hooks) {
		t.Errorf("functions: %v", c.Functions)
	}
	for h, want := range map[agent.Hook]int{agent.HookOnStart: 2000, agent.HookOnTurn: 500, agent.HookOnExternalEvent: 10000} {
		if got := c.Functions[h].TimeoutMS; got != want {
			t.Errorf("functions.%s.timeout_ms = %d, want %d", h, got, want)
		}
	}

	// What a store keeps (JSON) parses back to the same configuration.
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	again := mustConfig(t, string(b))
	if !reflect.DeepEqual(again, c) {
		t.Errorf("round trip:\n%+v\n%+v", again, c)
	}
	if !reflect.DeepEqual(c.Clone(), c) {
		t.Errorf("Clone differs")
	}
}

func TestConfigVariant(t *testing.T) {
	c := mustConfig(t, fullConfig)
	for id, want := range map[string]string{"": "main", "main": "main", "own": "own"} {
		if v, ok := c.Variant(id); !ok || v.ID != want {
			t.Errorf("Variant(%q) = %q, %v; want %q", id, v.ID, ok, want)
		}
	}
	if _, ok := c.Variant("nope"); ok {
		t.Errorf("Variant(nope) found")
	}
	single := mustConfig(t, `{"variants": [{"id": "only", "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}}]}`)
	if v, ok := single.Variant(""); !ok || v.ID != "only" || !v.Default {
		t.Errorf("a single variant is the default: %+v %v", v, ok)
	}
}

// TestConfigClone: a clone shares nothing with the original.
func TestConfigClone(t *testing.T) {
	c := mustConfig(t, `{"variants": [{"id": "v", "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f",
	  "rules": [{"keywords": ["a"], "response": "r", "set_state": {"k": [1]}, "if_state": {"s": "x"}, "intents": ["i"],
	    "entities": [{"e": {"x": 1}}], "handoff": {"destination": "d", "sip": {"outbound_endpoint": "e"}}}]}}},
	  {"id": "h", "default": true, "agent": {"type": "http", "http": {"url": "https://a.example.com", "signing_secret": "`+testSecret+`", "headers": {"X-A": "1"}}}}],
	  "functions": {"on_end": {"url": "https://f.example.com", "signing_secret": "`+testSecret+`"}}}`)
	orig, _ := json.Marshal(c)
	d := c.Clone()
	r := &d.Variants[0].Agent.Scripted.Rules[0]
	r.Keywords[0] = "z"
	r.SetState["k"].([]any)[0] = "z"
	r.IfState["s"] = "z"
	r.Intents[0] = "z"
	r.Entities[0]["e"].(map[string]any)["x"] = "z"
	r.Handoff.SIP.OutboundEndpoint = "z"
	d.Variants[0].Agent.Scripted.Greeting = "z"
	d.Variants[1].Agent.HTTP.Headers["X-A"] = "z"
	d.Variants[1].ID = "z"
	d.Functions[agent.HookOnEnd] = agent.FunctionSpec{}
	if now, _ := json.Marshal(c); string(now) != string(orig) {
		t.Errorf("changing the clone changed the original:\n%s\n%s", orig, now)
	}
}

func TestParseConfigRefused(t *testing.T) {
	// variant wraps an agent spec into a valid configuration.
	variant := func(agentJSON string) string {
		return `{"variants": [{"id": "v", "agent": ` + agentJSON + `}]}`
	}
	scripted := func(rules string) string {
		return variant(`{"type": "scripted", "scripted": {"greeting": "hi", "fallback": "sorry", "rules": [` + rules + `]}}`)
	}
	httpAgent := func(fields string) string {
		return variant(`{"type": "http", "http": {` + fields + `}}`)
	}
	okHTTP := `"url": "https://a.example.com/x", "signing_secret": "` + testSecret + `"`
	function := func(hook, spec string) string {
		return `{"variants": [{"id": "v", "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}}], "functions": {"` + hook + `": ` + spec + `}}`
	}
	const sc = "variants[0].agent.scripted"
	const rule0 = sc + ".rules[0]"
	const h = "variants[0].agent.http"
	tests := []struct {
		name, json, path, msg string
	}{
		// Decoding.
		{"empty document", ``, "", "invalid JSON"},
		{"syntax error", "{\n  \"variants\": [}", "", "invalid JSON near line 2"},
		{"not an object", `[]`, "", "must be an object"},
		{"trailing data", `{"variants": []} {}`, "", "unexpected data after"},
		{"unknown field", `{"variants": [], "extra": 1}`, "extra", "unknown field"},
		{"field in other case", `{"Variants": []}`, "Variants", "unknown field"},
		{"unknown nested field", scripted(`{"keyword": ["x"], "response": "r"}`), rule0 + ".keyword", "unknown field"},
		{"duplicate key", `{"retention_days": 5, "retention_days": 6, "variants": []}`, "retention_days", "more than once"},
		{"string for integer", `{"retention_days": "90", "variants": []}`, "retention_days", "must be an integer"},
		{"fraction for integer", `{"retention_days": 1.5, "variants": []}`, "retention_days", "must be an integer"},
		{"exponent for integer", `{"retention_days": 1e2, "variants": []}`, "retention_days", "must be an integer"},
		{"null for string", variant(`{"type": "scripted", "scripted": {"greeting": null, "fallback": "f"}}`), sc + ".greeting", "must not be null"},
		{"number for string", scripted(`{"keywords": [1], "response": "r"}`), rule0 + ".keywords[0]", "must be a string"},
		{"object for list", scripted(`{"intents": {"a": 1}, "keywords": ["a"], "response": "r"}`), rule0 + ".intents", "must be an array"},
		{"too deep", strings.Repeat(`{"a": `, 100) + `1` + strings.Repeat(`}`, 100), "", "nested more than"},
		{"too large", `{"variants": [], "x": "` + strings.Repeat("a", agent.MaxConfigBytes) + `"}`, "", "larger than"},

		// The configuration.
		{"account ID", `{"account_id": "a b", "variants": []}`, "account_id", "letters, digits"},
		{"retention out of range", `{"retention_days": 4000, "variants": []}`, "retention_days", "between 1 and 3650"},
		{"idle timeout negative", `{"chat_idle_timeout_seconds": -1, "variants": []}`, "chat_idle_timeout_seconds", "between 1 and 604800"},
		{"idle timeout over a week", `{"chat_idle_timeout_seconds": 604801, "variants": []}`, "chat_idle_timeout_seconds", "between 1 and 604800"},
		{"no variants", `{"variants": []}`, "variants", "at least 1"},
		{"variants missing", `{}`, "variants", "at least 1"},
		{"variant ID", variant(`{"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}`)[:0] +
			`{"variants": [{"id": "a/b", "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}}]}`, "variants[0].id", "letters, digits"},
		{"duplicate variant IDs", `{"variants": [
			{"id": "a", "default": true, "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}},
			{"id": "a", "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}}]}`, "variants[1].id", `duplicate variant ID "a"`},
		{"two defaults", `{"variants": [
			{"id": "a", "default": true, "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}},
			{"id": "b", "default": true, "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}}]}`, "variants[1].default", "only one variant"},
		{"no default", `{"variants": [
			{"id": "a", "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}},
			{"id": "b", "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}}]}`, "variants", `"default": true`},
		{"variant name", `{"variants": [{"id": "a", "name": "a` + "\\u0001" + `", "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}}]}`, "variants[0].name", "control characters"},
		{"agent type missing", variant(`{"scripted": {"greeting": "g", "fallback": "f"}}`), "variants[0].agent.type", "is required"},
		{"agent type unknown", variant(`{"type": "llm"}`), "variants[0].agent.type", "must be one of: scripted, http"},
		{"scripted spec missing", variant(`{"type": "scripted"}`), sc, "is required"},
		{"both specs", variant(`{"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}, "http": {}}`), h, "must be absent"},

		// Scripted agents.
		{"greeting missing", variant(`{"type": "scripted", "scripted": {"fallback": "f"}}`), sc + ".greeting", "must not be empty"},
		{"fallback blank", variant(`{"type": "scripted", "scripted": {"greeting": "g", "fallback": "  "}}`), sc + ".fallback", "must not be empty"},
		{"response missing", scripted(`{"keywords": ["a"]}`), rule0 + ".response", "must not be empty"},
		{"response empty", scripted(`{"keywords": ["a"], "response": ""}`), rule0 + ".response", "must not be empty"},
		{"response too long", scripted(`{"keywords": ["a"], "response": "` + strings.Repeat("é", agent.MaxResponseLength+1) + `"}`), rule0 + ".response", "at most 4096"},
		{"response with a control character", scripted(`{"keywords": ["a"], "response": "a\u0007"}`), rule0 + ".response", "control characters"},
		{"bad regex", scripted(`{"regex": "(unclosed", "response": "r"}`), rule0 + ".regex", "missing closing )"},
		{"regex too long", scripted(`{"regex": "` + strings.Repeat("a", agent.MaxRegexLength+1) + `", "response": "r"}`), rule0 + ".regex", "at most"},
		{"rule matches nothing", scripted(`{"response": "r"}`), rule0, "matches nothing"},
		{"rule with only if_state", scripted(`{"if_state": {"a": 1}, "response": "r"}`), rule0, "matches nothing"},
		{"bad DTMF", scripted(`{"dtmf": "1x", "response": "r"}`), rule0 + ".dtmf", "keypad keys"},
		{"keyword without a word", scripted(`{"keywords": ["a", "?!"], "response": "r"}`), rule0 + ".keywords[1]", "letter or a digit"},
		{"keyword empty", scripted(`{"keywords": [""], "response": "r"}`), rule0 + ".keywords[0]", "must not be empty"},
		{"placeholder not state", scripted(`{"keywords": ["a"], "response": "hi {{name}}"}`), rule0 + ".response", "is not {{state.KEY}}"},
		{"placeholder unclosed", scripted(`{"keywords": ["a"], "response": "hi {{state.name"}`), rule0 + ".response", "without a closing"},
		{"placeholder unopened", scripted(`{"keywords": ["a"], "response": "hi state.name}}"}`), rule0 + ".response", "without a \"{{\""},
		{"placeholder in greeting", variant(`{"type": "scripted", "scripted": {"greeting": "{{ }}", "fallback": "f"}}`), sc + ".greeting", "is not {{state.KEY}}"},
		{"handoff without destination", scripted(`{"keywords": ["a"], "response": "r", "handoff": {"reason": "x"}}`), rule0 + ".handoff.destination", "must not be empty"},
		{"SIP handoff without endpoint", scripted(`{"keywords": ["a"], "response": "r", "handoff": {"sip": {"outbound_caller_id": "+1"}}}`), rule0 + ".handoff.sip.outbound_endpoint", "must not be empty"},
		{"if_state with an object", scripted(`{"keywords": ["a"], "response": "r", "if_state": {"k": {}}}`), rule0 + ".if_state.k", "must be a string"},
		{"empty state key", scripted(`{"keywords": ["a"], "response": "r", "set_state": {"": 1}}`), rule0 + ".set_state.", "state keys"},
		{"empty intent", scripted(`{"keywords": ["a"], "response": "r", "intents": [" "]}`), rule0 + ".intents[0]", "must not be empty"},
		{"null entity", scripted(`{"keywords": ["a"], "response": "r", "entities": [null]}`), rule0 + ".entities[0]", "must be an object"},
		{"duplicate rule IDs", scripted(`{"id": "x", "keywords": ["a"], "response": "r"}, {"id": "x", "keywords": ["b"], "response": "r"}`), sc + ".rules[1].id", "duplicate rule ID"},

		// HTTP agents.
		{"http spec missing", variant(`{"type": "http"}`), h, "is required"},
		{"url missing", httpAgent(`"signing_secret": "` + testSecret + `"`), h + ".url", "is required"},
		{"url http", httpAgent(`"url": "http://a.example.com/", "signing_secret": "` + testSecret + `"`), h + ".url", "^https://"},
		{"url private address", httpAgent(`"url": "https://10.1.2.3/x", "signing_secret": "` + testSecret + `"`), h + ".url", "non-public"},
		{"url metadata address", httpAgent(`"url": "https://169.254.169.254/latest", "signing_secret": "` + testSecret + `"`), h + ".url", "non-public"},
		{"url loopback", httpAgent(`"url": "https://127.0.0.1:8443/x", "signing_secret": "` + testSecret + `"`), h + ".url", "non-public"},
		{"url localhost", httpAgent(`"url": "https://localhost/x", "signing_secret": "` + testSecret + `"`), h + ".url", "non-public"},
		{"url with credentials", httpAgent(`"url": "https://u:p@a.example.com/", "signing_secret": "` + testSecret + `"`), h + ".url", "credentials"},
		{"url relative", httpAgent(`"url": "/turn", "signing_secret": "` + testSecret + `"`), h + ".url", "absolute"},
		{"secret missing", httpAgent(`"url": "https://a.example.com/"`), h + ".signing_secret", "is required"},
		{"secret without prefix", httpAgent(`"url": "https://a.example.com/", "signing_secret": "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"`), h + ".signing_secret", "whsec_"},
		{"secret too short", httpAgent(`"url": "https://a.example.com/", "signing_secret": "whsec_c2hvcnQ="`), h + ".signing_secret", "24 to 64"},
		{"secret not base64", httpAgent(`"url": "https://a.example.com/", "signing_secret": "whsec_!!!!"`), h + ".signing_secret", "base64"},
		{"timeout too short", httpAgent(okHTTP + `, "timeout_ms": 99`), h + ".timeout_ms", "between 100 and 22000"},
		{"timeout too long", httpAgent(okHTTP + `, "timeout_ms": 22001`), h + ".timeout_ms", "between 100 and 22000"},
		{"timeout negative", httpAgent(okHTTP + `, "timeout_ms": -1`), h + ".timeout_ms", "between 100 and 22000"},
		{"reserved header", httpAgent(okHTTP + `, "headers": {"Content-Type": "text/plain"}`), h + ".headers.Content-Type", "reserved"},
		{"signature header", httpAgent(okHTTP + `, "headers": {"webhook-signature": "x"}`), h + ".headers.webhook-signature", "reserved"},

		// Functions.
		{"unknown hook", function("on_hangup", `{"lambda_arn": "arn:aws:lambda:us-east-1:123456789012:function:f"}`), "functions.on_hangup", "unknown hook"},
		{"function with neither", function("on_start", `{}`), "functions.on_start", "neither"},
		{"function with both", function("on_start", `{"url": "https://f.example.com", "signing_secret": "`+testSecret+`", "lambda_arn": "arn:aws:lambda:us-east-1:123456789012:function:f"}`), "functions.on_start", "both"},
		{"function bad ARN", function("on_end", `{"lambda_arn": "arn:aws:s3:::bucket"}`), "functions.on_end.lambda_arn", "Lambda function ARN"},
		{"function ARN of another service", function("on_end", `{"lambda_arn": "arn:aws:lambda:us-east-1:1234:function:f"}`), "functions.on_end.lambda_arn", "Lambda function ARN"},
		{"function URL not public", function("on_turn", `{"url": "https://192.168.1.1/f", "signing_secret": "`+testSecret+`"}`), "functions.on_turn.url", "non-public"},
		{"function URL without secret", function("on_turn", `{"url": "https://f.example.com/f"}`), "functions.on_turn.signing_secret", "is required"},
		{"function ARN with secret", function("on_turn", `{"lambda_arn": "arn:aws:lambda:us-east-1:123456789012:function:f", "signing_secret": "`+testSecret+`"}`), "functions.on_turn.signing_secret", "must be absent"},
		{"function timeout", function("on_turn", `{"lambda_arn": "arn:aws:lambda:us-east-1:123456789012:function:f", "timeout_ms": 20000}`), "functions.on_turn.timeout_ms", "between 100 and 10000"},
		{"function with unknown field", function("on_turn", `{"lambda": "x"}`), "functions.on_turn.lambda", "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := agent.ParseConfig([]byte(tt.json), voiceops.URLPolicy{})
			var ce *agent.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("want a *ConfigError, got %v (config %+v)", err, c)
			}
			if !reflect.DeepEqual(c, agent.Config{}) {
				t.Errorf("a refused configuration is returned: %+v", c)
			}
			for _, f := range ce.Fields {
				if f.Field == tt.path && strings.Contains(f.Message, tt.msg) {
					if !strings.Contains(err.Error(), tt.path) {
						t.Errorf("the message %q does not name the path", err)
					}
					return
				}
			}
			t.Errorf("want %q at %q; got: %v", tt.msg, tt.path, err)
		})
	}
}

// TestParseConfigAllErrors: every problem is reported at once (unknown
// fields too; a value of the wrong type stops the checks of values), and
// the error is a voiceops error of kind invalid.
func TestParseConfigAllErrors(t *testing.T) {
	_, err := agent.ParseConfig([]byte(`{"retention_days": 0, "variants": [{"id": "v", "agent": {"type": "scripted", "scripted": {
	  "greeting": "", "fallback": "f", "rules": [{"regex": "(", "response": "", "keyword": ["x"]}, {"dtmf": "x", "response": "r"}]}}}],
	  "extra": true}`), voiceops.URLPolicy{})
	var ce *agent.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v", err)
	}
	var paths []string
	for _, f := range ce.Fields {
		paths = append(paths, f.Field)
	}
	want := []string{
		// Unknown fields, then the checks of the values.
		"extra",
		"variants[0].agent.scripted.rules[0].keyword",
		"variants[0].agent.scripted.greeting",
		"variants[0].agent.scripted.rules[0].regex",
		"variants[0].agent.scripted.rules[0].response",
		"variants[0].agent.scripted.rules[1].dtmf",
	}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("paths:\n got %q\nwant %q", paths, want)
	}
	if voiceops.KindOf(err) != voiceops.KindInvalid {
		t.Errorf("kind %v, want invalid", voiceops.KindOf(err))
	}
	var ve *voiceops.Error
	if !errors.As(err, &ve) || !reflect.DeepEqual(ve.Fields, ce.Fields) {
		t.Errorf("voiceops error: %+v", ve)
	}
}

// TestParseConfigLoopbackPolicy: the dev server's policy admits loopback
// endpoints (and http:// on them); deployed stacks never do.
func TestParseConfigLoopbackPolicy(t *testing.T) {
	for _, u := range []string{"https://127.0.0.1:8443/turn", "http://localhost:9000/turn", "http://[::1]:9000/turn"} {
		js := `{"variants": [{"id": "v", "agent": {"type": "http", "http": {"url": "` + u + `", "signing_secret": "` + testSecret + `"}}}],
		  "functions": {"on_turn": {"url": "` + u + `", "signing_secret": "` + testSecret + `"}}}`
		if _, err := agent.ParseConfig([]byte(js), voiceops.URLPolicy{}); err == nil {
			t.Errorf("%s accepted without AllowLoopback", u)
		}
		if _, err := agent.ParseConfig([]byte(js), voiceops.URLPolicy{AllowLoopback: true}); err != nil {
			t.Errorf("%s refused with AllowLoopback: %v", u, err)
		}
	}
	js := `{"variants": [{"id": "v", "agent": {"type": "http", "http": {"url": "https://10.0.0.1/", "signing_secret": "` + testSecret + `"}}}]}`
	if _, err := agent.ParseConfig([]byte(js), voiceops.URLPolicy{AllowLoopback: true}); err == nil {
		t.Errorf("a private address is accepted with AllowLoopback")
	}
}

// TestNewValidates: a spec built in code gets the checks of a file.
func TestNewValidates(t *testing.T) {
	for name, spec := range map[string]agent.AgentSpec{
		"no type":      {},
		"bad regex":    {Type: agent.TypeScripted, Scripted: &agent.ScriptedSpec{Greeting: "g", Fallback: "f", Rules: []agent.Rule{{Regex: "(", Response: "r"}}}},
		"private http": {Type: agent.TypeHTTP, HTTP: &agent.HTTPSpec{URL: "https://10.0.0.1/", SigningSecret: testSecret}},
	} {
		if _, err := agent.New(spec, agent.Deps{}); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	if _, err := agent.New(agent.AgentSpec{Type: agent.TypeHTTP, HTTP: &agent.HTTPSpec{URL: "https://a.example.com/", SigningSecret: testSecret}}, agent.Deps{}); err == nil ||
		!strings.Contains(err.Error(), "HTTPClient") {
		t.Errorf("an http agent without a client: %v", err)
	}
}

// FuzzParseConfig: no input panics, and an accepted configuration is
// stored (as JSON) and read back unchanged.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(fullConfig))
	f.Add(agent.DemoJSON())
	f.Add([]byte(bedrockConfig))
	f.Add([]byte(`{"variants": [{"id": "v", "agent": {"type": "scripted", "scripted": {"greeting": "{{state.a}}", "fallback": "f", "rules": [{"regex": "(?P<x>a)", "response": "r"}]}}}]}`))
	f.Add([]byte(`{"variants": [], "variants": [1, {"a": null}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := agent.ParseConfig(b, voiceops.URLPolicy{})
		if err != nil {
			return
		}
		stored, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := agent.ParseConfig(stored, voiceops.URLPolicy{})
		if err != nil {
			t.Fatalf("the stored form is refused: %v\n%s", err, stored)
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("round trip changed the configuration:\n%+v\n%+v", c, again)
		}
		for _, v := range c.Variants {
			if _, err := agent.New(v.Agent, agent.Deps{HTTPClient: nil}); err != nil && v.Agent.Type == agent.TypeScripted {
				t.Fatalf("New refused a valid scripted spec: %v", err)
			}
		}
	})
}
