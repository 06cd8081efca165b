package agent_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// bedrockConfig is a valid configuration with a Bedrock agent and one tool.
const bedrockConfig = `{
  "variants": [{"id": "llm", "agent": {"type": "bedrock", "bedrock": {
    "model_id": "anthropic.claude-3-haiku-20240307-v1:0",
    "system_prompt": "You answer for Acme.", "temperature": 0.2,
    "tools": ["lookup_order"], "guardrail": {"id": "gr1abc", "version": "1"},
    "handoff": {"destination": "support", "reason": "asked for a person"},
    "fallback": "Sorry, one moment."}}}],
  "tools": {"lookup_order": {"description": "Finds an order by its number.",
    "input_schema": {"type": "object", "properties": {"order": {"type": "string", "maxLength": 20}}, "required": ["order"], "additionalProperties": false},
    "function": {"url": "https://fn.example.com/order", "signing_secret": "` + testSecret + `"}}}
}`

func TestParseConfigBedrock(t *testing.T) {
	c, err := agent.ParseConfig([]byte(bedrockConfig), voiceops.URLPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	b := c.Variants[0].Agent.Bedrock
	temp := 0.2
	want := &agent.BedrockSpec{
		ModelID: "anthropic.claude-3-haiku-20240307-v1:0", SystemPrompt: "You answer for Acme.", Temperature: &temp,
		MaxTokens: agent.DefaultMaxTokens, Tools: []string{"lookup_order"}, Guardrail: &agent.BedrockGuardrail{ID: "gr1abc", Version: "1"},
		Handoff: &agent.Handoff{Destination: "support", Reason: "asked for a person"}, Fallback: "Sorry, one moment.",
		OnFailure: agent.FailureContinue, TimeoutMS: agent.DefaultBedrockTimeoutMS, HistoryTurns: agent.DefaultHistoryTurns,
	}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("bedrock spec:\n got %+v\nwant %+v", b, want)
	}
	if got := c.Tools["lookup_order"].Function.TimeoutMS; got != agent.DefaultTimeoutMS {
		t.Errorf("tool timeout %d, want the default", got)
	}
	clone := c.Clone()
	*clone.Variants[0].Agent.Bedrock.Temperature = 0.9
	clone.Tools["lookup_order"].InputSchema["type"] = "string"
	if *c.Variants[0].Agent.Bedrock.Temperature != 0.2 || c.Tools["lookup_order"].InputSchema["type"] != "object" {
		t.Errorf("Clone shares the bedrock spec or a tool's schema")
	}
}

func TestParseConfigBedrockRefused(t *testing.T) {
	const b = "variants[0].agent.bedrock"
	variant := func(fields string) string {
		return `{"variants": [{"id": "v", "agent": {"type": "bedrock", "bedrock": {` + fields + `}}}]}`
	}
	ok := `"model_id": "m1", "system_prompt": "p", "fallback": "f"`
	tool := func(spec string) string {
		return `{"variants": [{"id": "v", "agent": {"type": "bedrock", "bedrock": {` + ok + `, "tools": ["t"]}}}], "tools": {"t": ` + spec + `}}`
	}
	fn := `"function": {"lambda_arn": "arn:aws:lambda:us-east-1:123456789012:function:t"}`
	tests := []struct{ name, json, path, msg string }{
		{"no spec", `{"variants": [{"id": "v", "agent": {"type": "bedrock"}}]}`, b, "is required"},
		{"other spec", `{"variants": [{"id": "v", "agent": {"type": "bedrock", "http": {}, "bedrock": {` + ok + `}}}]}`, "variants[0].agent.http", "must be absent"},
		{"no model", variant(`"system_prompt": "p", "fallback": "f"`), b + ".model_id", "is required"},
		{"model with a slash", variant(`"model_id": "a/b", "system_prompt": "p", "fallback": "f"`), b + ".model_id", "model ID"},
		{"no prompt", variant(`"model_id": "m", "fallback": "f"`), b + ".system_prompt", "must not be empty"},
		{"no fallback", variant(`"model_id": "m", "system_prompt": "p"`), b + ".fallback", "must not be empty"},
		{"temperature", variant(ok + `, "temperature": 1.5`), b + ".temperature", "between 0 and 1"},
		{"temperature type", variant(ok + `, "temperature": "hot"`), b + ".temperature", "must be a number"},
		{"max tokens", variant(ok + `, "max_tokens": 100000`), b + ".max_tokens", "between 1 and 4096"},
		{"timeout past Twilio", variant(ok + `, "timeout_ms": 14000`), b + ".timeout_ms", "Twilio"},
		{"history", variant(ok + `, "history_turns": 500`), b + ".history_turns", "between 1 and 50"},
		{"unknown tool", variant(ok + `, "tools": ["nope"]`), b + ".tools[0]", `no tool "nope"`},
		{"handoff as a tool", variant(ok + `, "tools": ["handoff"]`), b + ".tools[0]", "built in"},
		{"guardrail id", variant(ok + `, "guardrail": {"id": "BAD ID", "version": "1"}`), b + ".guardrail.id", "guardrail ID"},
		{"guardrail version", variant(ok + `, "guardrail": {"id": "g1", "version": "latest"}`), b + ".guardrail.version", "DRAFT"},
		{"failure mode", variant(ok + `, "on_failure": "panic"`), b + ".on_failure", `"continue" or "handoff"`},
		{"handoff on failure without a destination", variant(ok + `, "on_failure": "handoff"`), b + ".on_failure", `needs "handoff"`},
		{"handoff without destination", variant(ok + `, "handoff": {"reason": "r"}`), b + ".handoff.destination", "must not be empty"},
		{"tool name", `{"variants": [{"id": "v", "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}}], "tools": {"9 bad": {}}}`, "tools.9 bad", "tool name"},
		{"tool named handoff", `{"variants": [{"id": "v", "agent": {"type": "scripted", "scripted": {"greeting": "g", "fallback": "f"}}}], "tools": {"handoff": {}}}`, "tools.handoff", "built-in"},
		{"tool without description", tool(`{"input_schema": {"type": "object"}, ` + fn + `}`), "tools.t.description", "must not be empty"},
		{"tool without schema", tool(`{"description": "d", ` + fn + `}`), "tools.t.input_schema", "is required"},
		{"schema not an object", tool(`{"description": "d", "input_schema": {"type": "string"}, ` + fn + `}`), "tools.t.input_schema.type", `must be "object"`},
		{"schema keyword", tool(`{"description": "d", "input_schema": {"type": "object", "oneOf": []}, ` + fn + `}`), "tools.t.input_schema.oneOf", "not supported"},
		{"schema property type", tool(`{"description": "d", "input_schema": {"type": "object", "properties": {"a": {"type": "date"}}}, ` + fn + `}`), "tools.t.input_schema.properties.a.type", "must be one of"},
		{"schema required", tool(`{"description": "d", "input_schema": {"type": "object", "required": ["x"]}, ` + fn + `}`), "tools.t.input_schema.required", "names of"},
		{"tool function", tool(`{"description": "d", "input_schema": {"type": "object"}, "function": {}}`), "tools.t.function", "exactly one of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := agent.ParseConfig([]byte(tt.json), voiceops.URLPolicy{})
			var ce *agent.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("want a *ConfigError, got %v", err)
			}
			for _, f := range ce.Fields {
				if f.Field == tt.path && strings.Contains(f.Message, tt.msg) {
					return
				}
			}
			t.Errorf("want %q at %q; got: %v", tt.msg, tt.path, err)
		})
	}
}
