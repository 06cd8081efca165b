package bedrockconverse_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/agent/bedrockconverse"
	"github.com/voiceops/opsapi/shared/conversations/agent/bedrockstandin"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/voiceops"
)

const (
	akid   = "AKIDSTANDIN"
	secret = "standin-secret"
)

// standin starts the stand-in, checking signatures with the test's key,
// and returns it with a model whose SDK client reaches it through the
// SDK's own endpoint variable.
func standin(t *testing.T, secretKey string) (*bedrockstandin.Server, *bedrockconverse.Model) {
	t.Helper()
	s := bedrockstandin.New()
	s.Credentials = map[string]string{akid: secret}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", akid)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secretKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", "eu-west-2")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s, bedrockconverse.New(bedrockconverse.NewClient(cfg))
}

func TestConverseWire(t *testing.T) {
	s, m := standin(t, secret)
	s.Script(bedrockstandin.Step{ToolUses: []bedrockstandin.ToolUse{{ID: "tu1", Name: "lookup", Input: map[string]any{"order": "A-1"}}}, InputTokens: 30, OutputTokens: 7, LatencyMS: 317})
	temp := 0.5
	out, err := m.Converse(context.Background(), agent.ModelInput{
		ModelID: "anthropic.claude-3-haiku-20240307-v1:0", System: "be brief", Temperature: &temp, MaxTokens: 100,
		Messages:  []agent.ModelMessage{{Role: agent.RoleUser, Content: []agent.ModelBlock{{Text: "where is A-1"}}}},
		Tools:     []agent.ModelTool{{Name: "lookup", Description: "d", InputSchema: map[string]any{"type": "object"}}},
		Guardrail: &agent.BedrockGuardrail{ID: "g1", Version: "2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := agent.ModelOutput{StopReason: agent.StopToolUse, InputTokens: 30, OutputTokens: 7, Latency: 317 * time.Millisecond,
		Message: agent.ModelMessage{Role: agent.RoleAssistant, Content: []agent.ModelBlock{{ToolUse: &agent.ModelToolUse{ID: "tu1", Name: "lookup", Input: map[string]any{"order": "A-1"}}}}}}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("output:\n got %+v\nwant %+v", out, want)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.ModelID != "anthropic.claude-3-haiku-20240307-v1:0" || r.Region != "eu-west-2" || r.LastUserText() != "where is A-1" ||
		!reflect.DeepEqual(r.ToolNames(), []string{"lookup"}) || r.GuardrailConfig["guardrailIdentifier"] != "g1" ||
		r.InferenceConfig["maxTokens"] != float64(100) || r.System[0]["text"] != "be brief" {
		t.Errorf("request as received: %+v", r)
	}
}

func TestConverseErrors(t *testing.T) {
	for _, tt := range []struct {
		step      bedrockstandin.Step
		code      string
		throttled bool
	}{
		{bedrockstandin.Step{Error: bedrockstandin.Throttling}, "ThrottlingException", true},
		{bedrockstandin.Step{Error: bedrockstandin.Validation}, "ValidationException", false},
		{bedrockstandin.Step{Error: bedrockstandin.ModelTimeout}, "ModelTimeoutException", false},
	} {
		s, m := standin(t, secret)
		s.Script(tt.step)
		_, err := m.Converse(context.Background(), agent.ModelInput{ModelID: "m", Messages: []agent.ModelMessage{{Role: agent.RoleUser, Content: []agent.ModelBlock{{Text: "secret words"}}}}})
		var me *agent.ModelError
		if !errors.As(err, &me) || me.Code != tt.code || me.Throttled != tt.throttled {
			t.Errorf("%s: got %#v", tt.code, err)
		}
	}
}

// TestConverseSignature: the stand-in refuses a request signed with the
// wrong secret, so the accepted ones above were checked.
func TestConverseSignature(t *testing.T) {
	_, m := standin(t, "wrong-secret")
	_, err := m.Converse(context.Background(), agent.ModelInput{ModelID: "m", Messages: []agent.ModelMessage{{Role: agent.RoleUser, Content: []agent.ModelBlock{{Text: "hi"}}}}})
	var me *agent.ModelError
	if !errors.As(err, &me) || me.Code != "InvalidSignatureException" {
		t.Errorf("got %#v", err)
	}
}

// tools is a ToolRunner recording its calls.
type tools struct {
	calls []map[string]any
	fail  bool
}

func (f *tools) RunTool(_ context.Context, name string, _ agent.FunctionSpec, _ voiceops.Conversation, _ voiceops.Turn, args map[string]any) (agent.ToolResult, error) {
	f.calls = append(f.calls, args)
	if f.fail {
		return agent.ToolResult{}, errors.New("boom")
	}
	r := "order " + args["order"].(string) + " ships today"
	return agent.ToolResult{Response: &r, State: map[string]any{"order": args["order"]}}, nil
}

func newAgent(t *testing.T, m agent.Model, tr *tools, mut func(*agent.BedrockSpec)) agent.Agent {
	t.Helper()
	spec := agent.BedrockSpec{ModelID: "m1", SystemPrompt: "p", Fallback: "Sorry, one moment.", Tools: []string{"lookup"},
		Handoff: &agent.Handoff{Destination: "support"}, TimeoutMS: 2000}
	if mut != nil {
		mut(&spec)
	}
	a, err := agent.New(agent.AgentSpec{Type: agent.TypeBedrock, Bedrock: &spec}, agent.Deps{Model: m, Tools: tr,
		ToolSpecs: map[string]agent.ToolSpec{"lookup": {Description: "d", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"order": map[string]any{"type": "string", "maxLength": 5}}, "required": []any{"order"}}}},
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func turn(text string) agent.Request {
	return agent.Request{Conversation: voiceops.Conversation{ID: "c1", State: map[string]any{}}, Turn: voiceops.Turn{Index: 1, UserInput: text},
		History: []voiceops.Turn{{Index: 0, AgentResponse: "Hello!"}}}
}

// TestBedrockAgentTurns runs the agent's turns against the stand-in
// through the SDK: every scripted case of the issue.
func TestBedrockAgentTurns(t *testing.T) {
	lookup := func(order string) bedrockstandin.Step {
		return bedrockstandin.Step{ToolUses: []bedrockstandin.ToolUse{{Name: "lookup", Input: map[string]any{"order": order}}}}
	}
	tests := []struct {
		name       string
		steps      []bedrockstandin.Step
		mut        func(*agent.BedrockSpec)
		failTool   bool
		response   string
		stop       string
		outcomes   []string
		apiErrors  int
		funcErrors int
		handoff    string
		guardrail  string
	}{
		{name: "plain reply", steps: []bedrockstandin.Step{{Text: "Hi there."}}, response: "Hi there.", stop: "end_turn"},
		{name: "tool with arguments", steps: []bedrockstandin.Step{lookup("A-1"), {Text: "It ships today."}}, response: "It ships today.", stop: "end_turn", outcomes: []string{"ok"}},
		{name: "several tool rounds", steps: []bedrockstandin.Step{lookup("A-1"), lookup("B-2"), {Text: "Both ship."}}, response: "Both ship.", stop: "end_turn", outcomes: []string{"ok", "ok"}},
		{name: "invalid arguments are not run", steps: []bedrockstandin.Step{lookup("TOO-LONG-ID"), {Text: "Which order?"}}, response: "Which order?", stop: "end_turn", outcomes: []string{"invalid_arguments"}},
		{name: "a tool not offered", steps: []bedrockstandin.Step{{ToolUses: []bedrockstandin.ToolUse{{Name: "delete_everything"}}}, {Text: "I cannot."}}, response: "I cannot.", stop: "end_turn", outcomes: []string{"not_offered"}},
		{name: "failed tool", steps: []bedrockstandin.Step{lookup("A-1"), {Text: "Lookup is down."}}, failTool: true, response: "Lookup is down.", stop: "end_turn", outcomes: []string{"failed"}, funcErrors: 1},
		{name: "handoff tool", steps: []bedrockstandin.Step{{ToolUses: []bedrockstandin.ToolUse{{Name: "handoff", Input: map[string]any{"reason": "wants a person"}}}}, {Text: "Transferring you."}}, response: "Transferring you.", stop: "end_turn", outcomes: []string{"ok"}, handoff: "support"},
		{name: "throttled then answered", steps: []bedrockstandin.Step{{Error: bedrockstandin.Throttling}, {Error: bedrockstandin.Throttling}, {Text: "Hi."}}, response: "Hi.", stop: "end_turn", apiErrors: 2},
		{name: "throttled past the retries", steps: []bedrockstandin.Step{{Error: bedrockstandin.Throttling}, {Error: bedrockstandin.Throttling}, {Error: bedrockstandin.Throttling}}, response: "Sorry, one moment.", stop: "error", apiErrors: 3},
		{name: "validation error", steps: []bedrockstandin.Step{{Error: bedrockstandin.Validation}}, response: "Sorry, one moment.", stop: "error", apiErrors: 1},
		{name: "model timeout hands off as configured", steps: []bedrockstandin.Step{{Error: bedrockstandin.ModelTimeout}}, mut: func(s *agent.BedrockSpec) { s.OnFailure = agent.FailureHandoff }, response: "Sorry, one moment.", stop: "error", apiErrors: 1, handoff: "support"},
		{name: "slow answer past the deadline", steps: []bedrockstandin.Step{{Text: "late", Delay: 3 * time.Second}}, mut: func(s *agent.BedrockSpec) { s.TimeoutMS = 1000 }, response: "Sorry, one moment.", stop: "error", apiErrors: 1},
		{name: "max tokens keeps the text", steps: []bedrockstandin.Step{{Text: "A long answ", StopReason: "max_tokens"}}, response: "A long answ", stop: "max_tokens"},
		{name: "max tokens without text", steps: []bedrockstandin.Step{{StopReason: "max_tokens"}}, response: "Sorry, one moment.", stop: "max_tokens"},
		{name: "guardrail intervention", steps: []bedrockstandin.Step{{Text: "I can't discuss that.", StopReason: "guardrail_intervened"}}, response: "I can't discuss that.", stop: "guardrail_intervened", guardrail: "intervened"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m := standin(t, secret)
			s.Script(tt.steps...)
			tr := &tools{fail: tt.failTool}
			reply, err := newAgent(t, m, tr, tt.mut).Respond(context.Background(), turn("where is my order"))
			if err != nil {
				t.Fatal(err)
			}
			var outcomes []string
			for _, c := range reply.Model.ToolCalls {
				outcomes = append(outcomes, c.Outcome)
			}
			handoff := ""
			if reply.Handoff != nil {
				handoff = reply.Handoff.Destination
			}
			guardrail := tt.guardrail
			if guardrail == "" {
				guardrail = "none"
			}
			if reply.Response != tt.response || reply.Model.StopReason != tt.stop || !reflect.DeepEqual(outcomes, tt.outcomes) ||
				reply.APIErrors != tt.apiErrors || reply.FunctionErrors != tt.funcErrors || handoff != tt.handoff ||
				reply.Model.GuardrailAction != guardrail || reply.Model.ModelID != "m1" {
				t.Errorf("reply %+v, model %+v", reply, reply.Model)
			}
			if s.Pending() != 0 && tt.stop != "error" {
				t.Errorf("%d scripted answers left", s.Pending())
			}
		})
	}
}

// TestBedrockAgentHistory: the previous turns go to the model in
// alternating roles from a user message, bounded by history_turns.
func TestBedrockAgentHistory(t *testing.T) {
	s, m := standin(t, secret)
	s.Script(bedrockstandin.Step{Text: "ok"})
	req := turn("third")
	req.History = []voiceops.Turn{{Index: 0, AgentResponse: "Hello!"}, {Index: 1, UserInput: "first", AgentResponse: "r1"}, {Index: 2, UserInputDTMF: "1", AgentResponse: "r2"}}
	if _, err := newAgent(t, m, &tools{}, func(s *agent.BedrockSpec) { s.HistoryTurns = 2 }).Respond(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, msg := range s.Requests()[0].Messages {
		for _, b := range msg.Content {
			got = append(got, msg.Role+":"+b["text"].(string))
		}
	}
	want := []string{"user:first", "assistant:r1", "user:[keypad: 1]", "assistant:r2", "user:third"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages\n got %q\nwant %q", got, want)
	}
}

// TestConverseThroughTheFunctionsConfig: the functions build their SDK
// configuration with lambdamain.AWSConfig, not the SDK's loader; the
// Bedrock Runtime client still goes to AWS_ENDPOINT_URL_BEDROCK_RUNTIME
// rather than AWS_ENDPOINT_URL (the other services' emulator).
func TestConverseThroughTheFunctionsConfig(t *testing.T) {
	s := bedrockstandin.New()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the Bedrock call went to AWS_ENDPOINT_URL: %s %s", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(elsewhere.Close)
	env := map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": akid, "AWS_SECRET_ACCESS_KEY": secret,
		"AWS_ENDPOINT_URL": elsewhere.URL, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": srv.URL}
	for k, v := range env {
		t.Setenv(k, v) // the client's own lookup reads the process environment
	}
	cfg, err := lambdamain.AWSConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	s.Script(bedrockstandin.Step{Text: "reached"})
	out, err := bedrockconverse.New(bedrockconverse.NewClient(cfg)).Converse(context.Background(), agent.ModelInput{ModelID: "m1",
		Messages: []agent.ModelMessage{{Role: agent.RoleUser, Content: []agent.ModelBlock{{Text: "hi"}}}}})
	if err != nil || len(out.Message.Content) != 1 || out.Message.Content[0].Text != "reached" || len(s.Requests()) != 1 {
		t.Fatalf("Converse: %+v, %v; the stand-in got %d requests", out, err, len(s.Requests()))
	}
}
