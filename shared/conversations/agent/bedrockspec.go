package agent

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// BedrockSpec is an agent answered by a model on Amazon Bedrock, through
// the Converse API (bedrock.go describes the turn).
type BedrockSpec struct {
	// ModelID is the Bedrock model (or inference profile) ID; the stack
	// must allow it (the context's bedrockModels).
	ModelID      string `json:"model_id"`
	SystemPrompt string `json:"system_prompt"`
	// Temperature is the model's; the model's default when absent.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens bounds each answer of the model (DefaultMaxTokens when 0).
	MaxTokens int `json:"max_tokens,omitempty"`
	// Tools name the project's tools (Config.Tools) the model may call.
	// The built-in "handoff" tool is offered when Handoff is set.
	Tools     []string           `json:"tools,omitempty"`
	Guardrail *BedrockGuardrail  `json:"guardrail,omitempty"`
	Handoff   *Handoff           `json:"handoff,omitempty"`
	Fallback  string             `json:"fallback"`
	OnFailure BedrockFailureMode `json:"on_failure,omitempty"`
	// TimeoutMS bounds the whole turn of the agent: every model call,
	// retry and tool call (DefaultBedrockTimeoutMS when 0).
	TimeoutMS int `json:"timeout_ms,omitempty"`
	// HistoryTurns is how many of the conversation's previous turns are
	// sent to the model (DefaultHistoryTurns when 0).
	HistoryTurns int `json:"history_turns,omitempty"`
}

// BedrockGuardrail is a Bedrock guardrail applied to every model call.
type BedrockGuardrail struct {
	ID      string `json:"id"`
	Version string `json:"version"`
}

// BedrockFailureMode says what a conversation does when the model fails.
type BedrockFailureMode string

const (
	// FailureContinue: the caller hears the fallback and the conversation
	// goes on.
	FailureContinue BedrockFailureMode = "continue"
	// FailureHandoff: the caller hears the fallback and the conversation is
	// handed off (to BedrockSpec.Handoff).
	FailureHandoff BedrockFailureMode = "handoff"
)

// BedrockFailureModes lists every failure mode.
var BedrockFailureModes = []BedrockFailureMode{FailureContinue, FailureHandoff}

// ToolSpec is a project tool: a project function the model may call, with
// what the model is told about it.
type ToolSpec struct {
	Description string `json:"description"`
	// InputSchema is the JSON schema of the tool's arguments (the subset
	// that checkSchema accepts); the arguments are validated against it
	// before the function runs.
	InputSchema map[string]any `json:"input_schema"`
	Function    FunctionSpec   `json:"function"`
}

// Limits of a Bedrock agent.
const (
	DefaultMaxTokens = 512
	MaxMaxTokens     = 4096
	// DefaultBedrockTimeoutMS bounds a turn well inside the calls
	// function's 12 s callback deadline (Twilio hangs up at 15 s).
	DefaultBedrockTimeoutMS = 8000
	MaxBedrockTimeoutMS     = 10000
	DefaultHistoryTurns     = 10
	MaxHistoryTurns         = 50
	MaxSystemPrompt         = 8192
	MaxTools                = 20
	MaxToolDescription      = 1024
	// HandoffTool is the built-in tool that hands the conversation off.
	HandoffTool = "handoff"
)

// validToolName is Bedrock's own rule for a tool's name,
// ^[a-zA-Z][a-zA-Z0-9_-]{0,63}$, without a regexp: compiled at package
// init, its 63 repetitions cost every function that answers turns about
// 0.2 ms of start-up.
func validToolName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '_' || c == '-')) {
			return false
		}
	}
	return true
}

// Timeout bounds the agent's turn.
func (s BedrockSpec) Timeout() time.Duration {
	ms := s.TimeoutMS
	if ms == 0 {
		ms = DefaultBedrockTimeoutMS
	}
	return time.Duration(ms) * time.Millisecond
}

func (s *BedrockSpec) fillDefaults() {
	if s.MaxTokens == 0 {
		s.MaxTokens = DefaultMaxTokens
	}
	if s.TimeoutMS == 0 {
		s.TimeoutMS = DefaultBedrockTimeoutMS
	}
	if s.HistoryTurns == 0 {
		s.HistoryTurns = DefaultHistoryTurns
	}
	if s.OnFailure == "" {
		s.OnFailure = FailureContinue
	}
}

func (s BedrockSpec) clone() *BedrockSpec {
	out := s
	if s.Temperature != nil {
		t := *s.Temperature
		out.Temperature = &t
	}
	out.Tools = slices.Clone(s.Tools)
	if s.Guardrail != nil {
		g := *s.Guardrail
		out.Guardrail = &g
	}
	out.Handoff = s.Handoff.clone()
	return &out
}

// check validates the spec; tools are the project's (nil when the spec is
// checked on its own, by New: the tools are checked with the
// configuration).
func (s BedrockSpec) check(path string, tools map[string]ToolSpec, errs *fieldErrors) {
	if s.ModelID == "" {
		errs.add(key(path, "model_id"), "is required: a Bedrock model ID such as anthropic.claude-3-haiku-20240307-v1:0")
	} else if len(s.ModelID) > MaxShortText || strings.ContainsAny(s.ModelID, " /?#\t\n") {
		errs.add(key(path, "model_id"), "must be a Bedrock model ID (at most %d characters, no spaces or '/')", MaxShortText)
	}
	checkText(s.SystemPrompt, key(path, "system_prompt"), MaxSystemPrompt, true, true, errs)
	if t := s.Temperature; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 1) {
		errs.add(key(path, "temperature"), "must be a number between 0 and 1")
	}
	if s.MaxTokens != 0 && (s.MaxTokens < 1 || s.MaxTokens > MaxMaxTokens) {
		errs.add(key(path, "max_tokens"), "must be an integer between 1 and %d (default %d)", MaxMaxTokens, DefaultMaxTokens)
	}
	if s.TimeoutMS != 0 && (s.TimeoutMS < 1000 || s.TimeoutMS > MaxBedrockTimeoutMS) {
		errs.add(key(path, "timeout_ms"), "must be an integer between 1000 and %d (default %d): a voice turn must answer within Twilio's 15 s", MaxBedrockTimeoutMS, DefaultBedrockTimeoutMS)
	}
	if s.HistoryTurns < 0 || s.HistoryTurns > MaxHistoryTurns {
		errs.add(key(path, "history_turns"), "must be an integer between 1 and %d (default %d)", MaxHistoryTurns, DefaultHistoryTurns)
	}
	if len(s.Tools) > MaxTools {
		errs.add(key(path, "tools"), "must name at most %d tools", MaxTools)
	}
	seen := map[string]bool{}
	for i, name := range s.Tools {
		p := index(key(path, "tools"), i)
		switch {
		case name == HandoffTool:
			errs.add(p, `"handoff" is built in: set "handoff" to offer it`)
		case seen[name]:
			errs.add(p, "duplicate tool %q", name)
		case tools != nil:
			if _, ok := tools[name]; !ok {
				errs.add(p, "no tool %q in the configuration's \"tools\"", name)
			}
		}
		seen[name] = true
	}
	if g := s.Guardrail; g != nil {
		if !regexp.MustCompile(`^[a-z0-9]{1,64}$`).MatchString(g.ID) {
			errs.add(key(path, "guardrail.id"), "must be a guardrail ID (1 to 64 lowercase letters and digits)")
		}
		if g.Version != "DRAFT" && !regexp.MustCompile(`^[1-9][0-9]{0,7}$`).MatchString(g.Version) {
			errs.add(key(path, "guardrail.version"), `must be a version number or "DRAFT"`)
		}
	}
	if s.Handoff != nil {
		checkHandoff(s.Handoff, key(path, "handoff"), errs)
	}
	checkText(s.Fallback, key(path, "fallback"), MaxResponseLength, true, true, errs)
	switch s.OnFailure {
	case "", FailureContinue:
	case FailureHandoff:
		if s.Handoff == nil {
			errs.add(key(path, "on_failure"), `"handoff" needs "handoff" (where the conversation goes)`)
		}
	default:
		errs.add(key(path, "on_failure"), `must be "continue" or "handoff"`)
	}
}

func (t ToolSpec) check(path string, policy urlCheck, errs *fieldErrors) {
	checkText(t.Description, key(path, "description"), MaxToolDescription, true, false, errs)
	if t.InputSchema == nil {
		errs.add(key(path, "input_schema"), `is required: a JSON schema of "type": "object"`)
	} else {
		if t.InputSchema["type"] != "object" {
			errs.add(key(path, "input_schema.type"), `must be "object"`)
		}
		checkSchema(t.InputSchema, key(path, "input_schema"), 0, errs)
	}
	t.Function.check(key(path, "function"), policy, errs)
}

func checkToolName(name, path string, errs *fieldErrors) bool {
	switch {
	case name == HandoffTool:
		errs.add(path, `"handoff" is the built-in tool's name`)
	case !validToolName(name):
		errs.add(path, "must be a tool name: a letter, then up to 63 letters, digits, '_' or '-'")
	default:
		return true
	}
	return false
}
