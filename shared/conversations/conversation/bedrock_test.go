package conversation

import (
	"context"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// scriptedModel answers Converse calls in order; an error step fails the
// call. It records each input.
type scriptedModel struct {
	mu     sync.Mutex
	steps  []modelStep
	inputs []agent.ModelInput
}

type modelStep struct {
	out agent.ModelOutput
	err error
	// hang: no answer until the turn's deadline, then the client's error
	// (bedrockconverse's for a cancelled call).
	hang bool
}

func (m *scriptedModel) Converse(ctx context.Context, in agent.ModelInput) (agent.ModelOutput, error) {
	m.mu.Lock()
	m.inputs = append(m.inputs, in)
	if len(m.steps) == 0 {
		m.mu.Unlock()
		return agent.ModelOutput{}, &agent.ModelError{Code: "NoScript"}
	}
	s := m.steps[0]
	m.steps = m.steps[1:]
	m.mu.Unlock()
	if s.hang {
		<-ctx.Done()
		return agent.ModelOutput{}, &agent.ModelError{Code: "DeadlineExceeded"}
	}
	return s.out, s.err
}

func say(text string) modelStep {
	return modelStep{out: agent.ModelOutput{StopReason: agent.StopEndTurn, InputTokens: 10, OutputTokens: 4, Latency: 300 * time.Millisecond,
		Message: agent.ModelMessage{Role: agent.RoleAssistant, Content: []agent.ModelBlock{{Text: text}}}}}
}

func useTool(name string, args map[string]any) modelStep {
	return modelStep{out: agent.ModelOutput{StopReason: agent.StopToolUse, InputTokens: 20, OutputTokens: 8, Latency: 200 * time.Millisecond,
		Message: agent.ModelMessage{Role: agent.RoleAssistant, Content: []agent.ModelBlock{{ToolUse: &agent.ModelToolUse{ID: "t1", Name: name, Input: args}}}}}}
}

// bedrockFixture is the engine with a Bedrock agent whose tool is the
// fixture's project function.
func bedrockFixture(t *testing.T, model *scriptedModel) *fixture {
	return bedrockFixtureOn(t, model, memoryBackend(t), 0)
}

// bedrockFixtureOn is bedrockFixture on the backend b, the agent's turn
// bounded by timeoutMS (the default when 0).
func bedrockFixtureOn(t *testing.T, model *scriptedModel, b backend, timeoutMS int) *fixture {
	f := newFixtureOn(t, nil, b)
	cfg := agent.Config{AccountID: "acct", ProjectID: "proj", Variants: []agent.Variant{{ID: "llm", Default: true, Agent: agent.AgentSpec{
		Type: agent.TypeBedrock, Bedrock: &agent.BedrockSpec{ModelID: "m1", SystemPrompt: "p", Fallback: "One moment.", TimeoutMS: timeoutMS,
			Tools: []string{"lookup"}, Handoff: &agent.Handoff{Destination: "support"}}}}},
		Tools: map[string]agent.ToolSpec{"lookup": {Description: "d", InputSchema: map[string]any{"type": "object"},
			Function: agent.FunctionSpec{URL: f.fnURL, SigningSecret: fnSecret, TimeoutMS: 300}}}}
	if err := agent.PutConfig(context.Background(), f.configs, cfg); err != nil {
		t.Fatal(err)
	}
	f.e.AgentDeps.Model = model
	f.e.AgentDeps.Sleep = func(context.Context, time.Duration) error { return nil }
	return f
}

// TestBedrockTurns: a tool call runs the project function (hook "tool"),
// the turn's model metadata is stored, the conversation sees the history,
// a failed model is an api_errors event and the fallback, a failed tool a
// function_errors event, and the handoff tool hands off as a rule does.
func TestBedrockTurns(t *testing.T) {
	model := &scriptedModel{steps: []modelStep{
		say("Hello, how can I help?"),
		useTool("lookup", map[string]any{"order": "A1"}), say("It ships today."),
		{err: &agent.ModelError{Code: "ValidationException"}},
		useTool("handoff", map[string]any{"reason": "wants a person"}), say("Transferring you."),
	}}
	f := bedrockFixture(t, model)
	f.fnReply = func(w http.ResponseWriter, hook string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"response": "ships today", "state": {"order_status": "shipped"}}`))
	}
	start := f.start()
	if start.Response != "Hello, how can I help?" {
		t.Fatalf("greeting %q", start.Response)
	}
	id := start.Conversation.ID
	ans := f.say(id, TurnInput{Message: "where is A1"})
	if ans.Response != "It ships today." || ans.Conversation.State["order_status"] != "shipped" {
		t.Errorf("tool turn: %q, state %v", ans.Response, ans.Conversation.State)
	}
	if got := f.fnCalls; !reflect.DeepEqual(got, []string{"tool"}) {
		t.Errorf("function calls %q", got)
	}
	// The second call of the turn carries the history and the tool's result.
	if in := model.inputs[2]; len(in.Messages) != 5 || in.Messages[4].Content[0].ToolResult == nil || in.Messages[4].Content[0].ToolResult.Content["response"] != "ships today" {
		t.Errorf("messages of the tool round: %+v", in.Messages)
	}
	failed := f.say(id, TurnInput{Message: "and B2?"})
	if failed.Response != "One moment." || !failed.Turn.IsOOD || failed.Conversation.InProgress != true {
		t.Errorf("failed model: %+v", failed)
	}
	handed := f.say(id, TurnInput{Message: "a person please"})
	if handed.Handoff == nil || handed.Handoff.Destination != "support" || handed.Handoff.Reason != "wants a person" ||
		handed.Conversation.HandoffDestination != "support" || handed.Conversation.EndReason != voiceops.EndHandoff {
		t.Errorf("handoff: %+v", handed)
	}
	turns, err := f.stores.Conversations.Turns(context.Background(), "acct", "proj", id)
	if err != nil {
		t.Fatal(err)
	}
	m := turns[1].Model
	if m == nil || m.ModelID != "m1" || m.InputTokens != 30 || m.OutputTokens != 12 || m.ModelLatency != 500*time.Millisecond ||
		m.StopReason != "end_turn" || len(m.ToolCalls) != 1 || m.ToolCalls[0].Name != "lookup" || m.ToolCalls[0].Outcome != "ok" || m.GuardrailAction != "none" {
		t.Errorf("stored model metadata %+v", m)
	}
	if turns[2].Model == nil || turns[2].Model.StopReason != "error" {
		t.Errorf("the failed turn's metadata %+v", turns[2].Model)
	}
	s := f.counts()
	if s.Counts.Of(metrics.APIErrors) != 1 || s.Counts.Of(metrics.FunctionErrors) != 0 {
		t.Errorf("api errors %d, function errors %d", s.Counts.Of(metrics.APIErrors), s.Counts.Of(metrics.FunctionErrors))
	}
}

func TestBedrockFailedTool(t *testing.T) {
	model := &scriptedModel{steps: []modelStep{say("Hi."), useTool("lookup", map[string]any{}), say("Sorry, I could not look.")}}
	f := bedrockFixture(t, model)
	f.fnReply = func(w http.ResponseWriter, _ string) { w.WriteHeader(http.StatusInternalServerError) }
	id := f.start().Conversation.ID
	ans := f.say(id, TurnInput{Message: "where is it"})
	if ans.Response != "Sorry, I could not look." || ans.Turn.FunctionErrors != 1 || ans.Turn.Model.ToolCalls[0].Outcome != "failed" {
		t.Errorf("turn %+v, model %+v", ans.Turn, ans.Turn.Model)
	}
	if s := f.counts(); s.Counts.Of(metrics.FunctionErrors) != 1 {
		t.Errorf("function errors %d", s.Counts.Of(metrics.FunctionErrors))
	}
}

// TestBedrockWithoutModel: an engine built without a model client still
// runs a Bedrock project: the caller hears the fallback, and the failed
// call is counted.
func TestBedrockWithoutModel(t *testing.T) {
	f := bedrockFixture(t, nil)
	f.e.AgentDeps.Model = nil
	ans := f.start()
	if ans.Response != "One moment." || ans.Turn.Model == nil || ans.Turn.Model.StopReason != "error" {
		t.Errorf("answer %+v", ans)
	}
	if s := f.counts(); s.Counts.Of(metrics.APIErrors) != 1 {
		t.Errorf("api errors %d", s.Counts.Of(metrics.APIErrors))
	}
}

// TestBedrockFailuresRecorded: each failure of the docs' list, through the
// engine on the memory store and on DynamoDB (moto): the caller gets the
// answer the docs give (a retried throttle's answer, else the fallback;
// a guardrail's text), the turn is written once with that answer and its
// model metadata (stop_reason error, or the guardrail's action), and each
// failed model call is one api_errors event, a retried throttle too.
func TestBedrockFailuresRecorded(t *testing.T) {
	throttled := modelStep{err: &agent.ModelError{Code: "ThrottlingException", Throttled: true}}
	guardrail := say("I can't discuss that.")
	guardrail.out.StopReason = agent.StopGuardrail
	cases := []struct {
		name      string
		steps     []modelStep
		response  string
		stop      string
		guardrail string
		apiErrors int64
	}{
		{"throttling retried", []modelStep{throttled, throttled, say("Here it is.")}, "Here it is.", "end_turn", "none", 2},
		{"throttling past the retries", []modelStep{throttled, throttled, throttled}, "One moment.", "error", "none", 3},
		{"validation error", []modelStep{{err: &agent.ModelError{Code: "ValidationException"}}}, "One moment.", "error", "none", 1},
		{"model timeout", []modelStep{{err: &agent.ModelError{Code: "ModelTimeoutException"}}}, "One moment.", "error", "none", 1},
		{"slow answer past the deadline", []modelStep{{hang: true}}, "One moment.", "error", "none", 1},
		{"guardrail intervention", []modelStep{guardrail}, "I can't discuss that.", "guardrail_intervened", "intervened", 0},
	}
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			model := &scriptedModel{}
			f := bedrockFixtureOn(t, model, b, 1000) // the shortest deadline: the slow answer waits for it
			ctx := context.Background()
			var apiErrors int64
			for _, tc := range cases {
				model.steps = append([]modelStep{say("Hello.")}, tc.steps...)
				id := f.start().Conversation.ID
				began := time.Now()
				ans := f.say(id, TurnInput{Message: "where is my order"})
				if tc.name == "slow answer past the deadline" && time.Since(began) > 3*time.Second {
					t.Errorf("%s: the turn took %v, past its 1 s deadline", tc.name, time.Since(began))
				}
				if ans.Response != tc.response || ans.End {
					t.Errorf("%s: answered %q (end %v), want %q", tc.name, ans.Response, ans.End, tc.response)
				}
				c, err := f.e.Store.GetConversation(ctx, "acct", "proj", id)
				if err != nil {
					t.Fatal(err)
				}
				turns, err := f.e.Store.Turns(ctx, "acct", "proj", id)
				if err != nil {
					t.Fatal(err)
				}
				if c.NumTurns != 2 || len(turns) != 2 || !c.InProgress {
					t.Fatalf("%s: %d turns stored (conversation says %d, in progress %v), want the greeting and the turn, once", tc.name, len(turns), c.NumTurns, c.InProgress)
				}
				m := turns[1].Model
				if turns[1].AgentResponse != tc.response || m == nil || m.StopReason != tc.stop || m.GuardrailAction != tc.guardrail || m.ModelID != "m1" {
					t.Errorf("%s: stored turn %q, model %+v; want %q, stop_reason %s, guardrail_action %s", tc.name, turns[1].AgentResponse, m, tc.response, tc.stop, tc.guardrail)
				}
				apiErrors += tc.apiErrors
				if got := f.counts().Counts.Of(metrics.APIErrors); got != apiErrors {
					t.Errorf("%s: api_errors %d in all, want %d", tc.name, got, apiErrors)
				}
				if len(model.steps) != 0 {
					t.Errorf("%s: %d scripted answers not asked for", tc.name, len(model.steps))
				}
			}
		})
	}
}
