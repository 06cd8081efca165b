package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// A Bedrock agent's turn: the conversation's last HistoryTurns turns and
// the user's input go to the model as messages, with the system prompt and
// the offered tools. While the model asks for tools (at most MaxToolRounds
// rounds), each call is checked (an offered tool, arguments valid against
// its schema), run, and its result sent back. The turn ends on the model's
// end_turn (its text), max_tokens (its text so far, or the fallback),
// a guardrail's intervention (the guardrail's text, or the fallback), or a
// failure (the fallback, and a handoff when on_failure says so). The whole
// turn is bounded by BedrockSpec.Timeout; throttling is retried within it.

// Model is the one call a Bedrock agent makes: Converse. The package
// bedrockconverse makes it with the SDK's client; this package links no
// AWS client, so a function without Bedrock agents does not either.
type Model interface {
	Converse(ctx context.Context, in ModelInput) (ModelOutput, error)
}

// ModelInput is a Converse request.
type ModelInput struct {
	ModelID     string
	System      string
	Messages    []ModelMessage
	Temperature *float64
	MaxTokens   int
	Tools       []ModelTool
	Guardrail   *BedrockGuardrail
}

// ModelTool is a tool offered to the model.
type ModelTool struct {
	Name, Description string
	InputSchema       map[string]any
}

// Roles of messages.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// ModelMessage is one message: text, tool calls (assistant) or tool results
// (user).
type ModelMessage struct {
	Role    string
	Content []ModelBlock
}

// ModelBlock is one block of a message: exactly one field is set.
type ModelBlock struct {
	Text       string
	ToolUse    *ModelToolUse
	ToolResult *ModelToolResult
}

// ModelToolUse is the model's call of a tool.
type ModelToolUse struct {
	ID, Name string
	Input    any // decoded JSON
}

// ModelToolResult answers a tool call.
type ModelToolResult struct {
	ID      string
	Content map[string]any
	Failed  bool
}

// ModelOutput is a Converse answer.
type ModelOutput struct {
	Message                   ModelMessage
	StopReason                string
	InputTokens, OutputTokens int
	Latency                   time.Duration
}

// Stop reasons the agent distinguishes.
const (
	StopEndTurn     = "end_turn"
	StopToolUse     = "tool_use"
	StopMaxTokens   = "max_tokens"
	StopGuardrail   = "guardrail_intervened"
	StopFiltered    = "content_filtered"
	StopSequence    = "stop_sequence"
	GuardrailNone   = "none"
	GuardrailActed  = "intervened"
	MaxToolRounds   = 4
	maxRetries      = 2
	firstRetryDelay = 200 * time.Millisecond
)

// ModelError is a failed model call. Its text holds the error's code
// only: the service's message may quote the prompt.
type ModelError struct {
	Code      string // ThrottlingException, ValidationException, ...
	Throttled bool   // retrying later may succeed
}

func (e *ModelError) Error() string { return "bedrock: " + e.Code }

// ToolRunner runs a project tool's function with its arguments (the
// engine runs it through the project functions' runner).
type ToolRunner interface {
	RunTool(ctx context.Context, name string, fn FunctionSpec, conv voiceops.Conversation, turn voiceops.Turn, args map[string]any) (ToolResult, error)
}

// ToolResult is what a tool's function answered.
type ToolResult struct {
	Response *string
	State    map[string]any
}

type bedrockAgent struct {
	spec    BedrockSpec
	tools   map[string]ToolSpec // the offered ones
	model   Model
	runner  ToolRunner
	now     func() time.Time
	sleep   func(context.Context, time.Duration) error
	offered []ModelTool
}

func newBedrockAgent(spec BedrockSpec, deps Deps) (*bedrockAgent, error) {
	if deps.Model == nil {
		// A function that answers no turns (the sweeper ending idle
		// conversations) still builds the project's agents; one that
		// answers turns without a model says the fallback.
		deps.Model = noModel{}
	}
	spec = *spec.clone()
	spec.fillDefaults()
	a := &bedrockAgent{spec: spec, tools: map[string]ToolSpec{}, model: deps.Model, runner: deps.Tools, now: deps.Now, sleep: deps.Sleep}
	if a.now == nil {
		a.now = time.Now
	}
	if a.sleep == nil {
		a.sleep = sleepCtx
	}
	for _, name := range spec.Tools {
		t, ok := deps.ToolSpecs[name]
		if !ok {
			return nil, fmt.Errorf("agent: the bedrock agent offers tool %q, which the configuration does not define", name)
		}
		if deps.Tools == nil {
			return nil, errors.New("agent: a bedrock agent with tools needs Deps.Tools")
		}
		a.tools[name] = t
		a.offered = append(a.offered, ModelTool{Name: name, Description: t.Description, InputSchema: t.InputSchema})
	}
	if spec.Handoff != nil {
		a.offered = append(a.offered, ModelTool{Name: HandoffTool,
			Description: "Hands the conversation to a person. Call it when the user asks for a person or when you cannot help.",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{
				"reason": map[string]any{"type": "string", "description": "Why, in a few words.", "maxLength": MaxReasonLength}}}})
	}
	return a, nil
}

// noModel is the model of a program built without a Bedrock client.
type noModel struct{}

func (noModel) Converse(context.Context, ModelInput) (ModelOutput, error) {
	return ModelOutput{}, &ModelError{Code: "NoModelClient"}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HistoryTurns is how many previous turns agent a answers from
// (Request.History); 0 when it needs none.
func HistoryTurns(a Agent) int {
	if b, ok := a.(*bedrockAgent); ok {
		return b.spec.HistoryTurns
	}
	return 0
}

// startMarker stands for the user's part of the greeting turn: Converse
// requires the first message to be the user's.
const startMarker = "[The conversation has just started. Greet the user.]"

// userText is what a turn's input says to the model.
func userText(t voiceops.Turn) string {
	switch {
	case strings.TrimSpace(t.UserInput) != "":
		return t.UserInput
	case t.UserInputDTMF != "":
		return "[keypad: " + t.UserInputDTMF + "]"
	default:
		return "[silence]"
	}
}

// messages builds the conversation for the model: the last HistoryTurns
// previous turns, then this one, alternating roles from a user message.
func (a *bedrockAgent) messages(req Request) []ModelMessage {
	var msgs []ModelMessage
	add := func(role, text string) {
		if text == "" {
			return
		}
		if n := len(msgs); n > 0 && msgs[n-1].Role == role {
			msgs[n-1].Content = append(msgs[n-1].Content, ModelBlock{Text: text})
			return
		}
		msgs = append(msgs, ModelMessage{Role: role, Content: []ModelBlock{{Text: text}}})
	}
	hist := req.History
	if len(hist) > a.spec.HistoryTurns {
		hist = hist[len(hist)-a.spec.HistoryTurns:]
	}
	for _, t := range hist {
		if t.Index == 0 {
			add(RoleUser, startMarker)
		} else {
			add(RoleUser, userText(t))
		}
		add(RoleAssistant, t.AgentResponse)
	}
	if req.Start {
		add(RoleUser, startMarker)
	} else {
		add(RoleUser, userText(req.Turn))
	}
	if msgs[0].Role != RoleUser {
		msgs = append([]ModelMessage{{Role: RoleUser, Content: []ModelBlock{{Text: startMarker}}}}, msgs...)
	}
	return msgs
}

// Respond answers the turn with the model; it never returns an error: a
// failure is answered with the fallback and counted in the reply.
func (a *bedrockAgent) Respond(ctx context.Context, req Request) (Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, a.spec.Timeout())
	defer cancel()
	meta := &voiceops.TurnModel{ModelID: a.spec.ModelID, GuardrailAction: GuardrailNone}
	reply := Reply{Model: meta}
	in := ModelInput{ModelID: a.spec.ModelID, System: a.spec.SystemPrompt, Messages: a.messages(req),
		Temperature: a.spec.Temperature, MaxTokens: a.spec.MaxTokens, Tools: a.offered, Guardrail: a.spec.Guardrail}
	conv := req.Conversation
	for round := 0; ; round++ {
		if round > MaxToolRounds {
			meta.StopReason = "tool_rounds_exceeded"
			return a.failed(reply, req), nil
		}
		out, err := a.converse(ctx, in, &reply)
		if err != nil {
			meta.StopReason = "error"
			return a.failed(reply, req), nil
		}
		meta.InputTokens += out.InputTokens
		meta.OutputTokens += out.OutputTokens
		meta.ModelLatency += out.Latency
		meta.StopReason = out.StopReason
		text := textOf(out.Message)
		switch out.StopReason {
		case StopToolUse:
			in.Messages = append(in.Messages, out.Message)
			results := ModelMessage{Role: RoleUser}
			for _, b := range out.Message.Content {
				if b.ToolUse != nil {
					res := a.runTool(ctx, *b.ToolUse, &conv, req.Turn, &reply)
					results.Content = append(results.Content, ModelBlock{ToolResult: &res})
				}
			}
			if len(results.Content) == 0 {
				return a.failed(reply, req), nil
			}
			in.Messages = append(in.Messages, results)
			continue
		case StopGuardrail, StopFiltered:
			meta.GuardrailAction = GuardrailActed
		case StopEndTurn, StopSequence, StopMaxTokens:
		default:
			return a.failed(reply, req), nil
		}
		if strings.TrimSpace(text) == "" {
			text = a.spec.Fallback
		}
		reply.Response = truncateRunes(text, MaxResponseLength)
		return reply, nil
	}
}

// failed is the defined answer of a turn the model could not give.
func (a *bedrockAgent) failed(reply Reply, req Request) Reply {
	reply.Response = a.spec.Fallback
	reply.OOD = !req.Start
	reply.ModelFailed = true
	if a.spec.OnFailure == FailureHandoff && reply.Handoff == nil {
		reply.Handoff = a.spec.Handoff.resolved()
	}
	return reply
}

// converse calls the model, retrying throttling with backoff while the
// turn's deadline leaves room. Each failed call is an API error.
func (a *bedrockAgent) converse(ctx context.Context, in ModelInput, reply *Reply) (ModelOutput, error) {
	delay := firstRetryDelay
	for attempt := 0; ; attempt++ {
		out, err := a.model.Converse(ctx, in)
		if err == nil {
			return out, nil
		}
		reply.APIErrors++
		var me *ModelError
		if !errors.As(err, &me) || !me.Throttled || attempt >= maxRetries {
			return ModelOutput{}, err
		}
		if dl, ok := ctx.Deadline(); ok && dl.Sub(a.now()) < 2*delay {
			return ModelOutput{}, err // no time left for a retry to answer
		}
		if err := a.sleep(ctx, delay); err != nil {
			return ModelOutput{}, err
		}
		delay *= 2
	}
}

// runTool runs one tool call the model made and returns its result for the
// model. Only the offered tools run, and only with arguments valid against
// their schema; the built-in handoff tool sets the reply's handoff.
func (a *bedrockAgent) runTool(ctx context.Context, use ModelToolUse, conv *voiceops.Conversation, turn voiceops.Turn, reply *Reply) ModelToolResult {
	start := a.now()
	call := voiceops.ToolCall{Name: truncateRunes(use.Name, MaxShortText)}
	res := ModelToolResult{ID: use.ID}
	fail := func(outcome, msg string) ModelToolResult {
		call.Outcome, call.Duration = outcome, a.now().Sub(start)
		reply.Model.ToolCalls = append(reply.Model.ToolCalls, call)
		res.Failed, res.Content = true, map[string]any{"error": msg}
		return res
	}
	args, _ := use.Input.(map[string]any)
	if use.Name == HandoffTool && a.spec.Handoff != nil {
		h := a.spec.Handoff.resolved()
		if r, ok := args["reason"].(string); ok && strings.TrimSpace(r) != "" {
			h.Reason = truncateRunes(r, MaxReasonLength)
		}
		reply.Handoff = h
		reply.End = true
		call.Outcome, call.Duration = "ok", a.now().Sub(start)
		reply.Model.ToolCalls = append(reply.Model.ToolCalls, call)
		res.Content = map[string]any{"ok": true, "note": "The conversation is being handed off; say a short goodbye."}
		return res
	}
	t, offered := a.tools[use.Name]
	if !offered {
		return fail("not_offered", "there is no such tool")
	}
	if args == nil {
		args = map[string]any{}
	}
	if err := validateArgs(t.InputSchema, args, ""); err != nil {
		return fail("invalid_arguments", err.Error())
	}
	out, err := a.runner.RunTool(ctx, use.Name, t.Function, *conv, turn, args)
	if err != nil {
		reply.FunctionErrors++
		return fail("failed", "the tool failed")
	}
	if len(out.State) > 0 {
		if reply.State == nil {
			reply.State = map[string]any{}
		}
		for k, v := range out.State {
			reply.State[k] = v
		}
		conv.State = mergedState(conv.State, out.State)
	}
	res.Content = map[string]any{}
	if out.Response != nil {
		res.Content["response"] = *out.Response
	}
	if out.State != nil {
		res.Content["state"] = out.State
	}
	call.Outcome, call.Duration = "ok", a.now().Sub(start)
	reply.Model.ToolCalls = append(reply.Model.ToolCalls, call)
	return res
}

func mergedState(st, set map[string]any) map[string]any {
	out := make(map[string]any, len(st)+len(set))
	for k, v := range st {
		out[k] = v
	}
	for k, v := range set {
		out[k] = v
	}
	return out
}

func textOf(m ModelMessage) string {
	var parts []string
	for _, b := range m.Content {
		if b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
