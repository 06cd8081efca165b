package voiceops

import (
	"context"
	"slices"
	"time"
)

// Environment is a project's deployment environment (the vendor interface's `client_env`).
type Environment string

const (
	EnvSandbox    Environment = "sandbox"
	EnvPreRelease Environment = "pre-release"
	EnvLive       Environment = "live"
)

// Environments lists every environment.
var Environments = []Environment{EnvSandbox, EnvPreRelease, EnvLive}

// Channel is how a conversation happens.
type Channel string

const (
	ChannelVoice    Channel = "voice"
	ChannelWebchat  Channel = "webchat"
	ChannelWhatsApp Channel = "whatsapp"
	ChannelSMS      Channel = "sms"
	ChannelAPI      Channel = "api"
)

// Channels lists every channel.
var Channels = []Channel{ChannelVoice, ChannelWebchat, ChannelWhatsApp, ChannelSMS, ChannelAPI}

// ChatChannels are the channels a chat conversation may declare (the base host).
var ChatChannels = []Channel{ChannelWebchat, ChannelWhatsApp, ChannelSMS, ChannelAPI}

// EndReason says how a conversation ended.
type EndReason string

const (
	EndCompleted EndReason = "completed" // the caller hung up, or the agent ended it
	EndClosed    EndReason = "closed"    // a chat closed by the client
	EndHandoff   EndReason = "handoff"   // handed off to a human or another system
	EndCrashed   EndReason = "crashed"   // the call crashed (counts as call_crashes)
	EndTimeout   EndReason = "timeout"   // a chat idle past the project's timeout, ended by the service
)

// Idle ends: a conversation in progress with no activity (a turn, an
// external event, a bridge notification) until its IdleDue is ended by the
// service: a chat with EndTimeout, after the project's chat idle timeout
// (DefaultChatIdleTimeout unless configured); a voice call with
// EndCrashed (its end was never reported), after VoiceIdleBound.
const (
	DefaultChatIdleTimeout = 30 * time.Minute
	// VoiceIdleBound is long enough for any silence of a live call: the
	// voice intake reports every turn, silences included, within seconds.
	VoiceIdleBound = 15 * time.Minute
)

// Conversation is one voice call or chat with a project's agent. Field names
// follow the vendor interface's conversation record.
type Conversation struct {
	ID          string
	AccountID   string
	ProjectID   string
	Environment Environment
	Channel     Channel
	VariantID   string
	VariantName string
	FromNumber  string
	ToNumber    string
	ASRLang     string // language code with region, e.g. en-GB
	TTSLang     string
	// IntegrationAttributes are set at creation (chat create, or a DNI
	// reservation) and given to project functions.
	IntegrationAttributes map[string]any
	// State is the agent's and the functions' memory of the conversation.
	State map[string]any

	StartedAt  time.Time
	EndedAt    *time.Time
	EndReason  EndReason
	InProgress bool
	// IdleDue is when the conversation, in progress, ends for want of
	// activity (zero: never). Stores index the conversations in progress
	// by it (OpenConversations).
	IdleDue time.Time

	NumTurns    int
	NumSilences int
	NumOOD      int
	// ServiceTime is the time the agent (and functions) spent answering,
	// summed over turns: service_duration.
	ServiceTime time.Duration

	Handoff            bool
	HandoffReason      string
	HandoffDestination string
	// SharedID is an identifier the conversation shares with the system it
	// is handed to (handoff_state?shared_id=).
	SharedID string
	// Metrics are the values project functions logged, in order.
	Metrics []CustomMetric

	// ExpiresAt is when the record is deleted (the project's retention).
	ExpiresAt time.Time
	// Version increases on every write; writes are conditional on it.
	Version int64
}

// AsOf is the conversation as it stands at now: one in progress whose
// IdleDue has passed has ended then (a chat with EndTimeout, a call with
// EndCrashed), whether or not the idle sweep has written it yet. Lists and
// series read conversations through it, so they agree with respond (410)
// from the instant of the due.
func (c Conversation) AsOf(now time.Time) Conversation {
	if !c.InProgress || c.IdleDue.IsZero() || now.Before(c.IdleDue) {
		return c
	}
	end := c.IdleDue
	c.InProgress, c.EndedAt, c.EndReason = false, &end, EndTimeout
	if c.Channel == ChannelVoice {
		c.EndReason = EndCrashed
	}
	return c
}

// TotalDuration is the conversation's length so far (or in all, once ended).
func (c Conversation) TotalDuration(now time.Time) time.Duration {
	end := now
	if c.EndedAt != nil {
		end = *c.EndedAt
	}
	if end.Before(c.StartedAt) {
		return 0
	}
	return end.Sub(c.StartedAt)
}

// Turn is one exchange: what the user said (or pressed, or nothing) and what
// the agent answered. Field names follow the vendor interface's turn table.
type Turn struct {
	Index                int // 0-based
	UserInput            string
	UserInputDTMF        string
	UserInputAt          time.Time
	AgentResponse        string
	AgentResponseAt      time.Time
	Latency              time.Duration // agent time for this turn
	TranslatedUserInput  string
	EnglishAgentResponse string
	Intents              []string
	Entities             []map[string]any
	IsOOD                bool
	IsSilence            bool
	Metadata             map[string]any // per-turn metadata sent with the message
	FunctionErrors       int            // project functions that failed during the turn
	// Model is what a model-backed agent's turn cost and did; nil for other
	// agents.
	Model *TurnModel
}

// TurnModel is a turn's model metadata (include_turn_metadata).
type TurnModel struct {
	ModelID      string
	InputTokens  int
	OutputTokens int
	// StopReason is the model's last (end_turn, max_tokens,
	// guardrail_intervened, ...), or "error" when the model failed.
	StopReason   string
	ModelLatency time.Duration // the model's own time, summed over calls
	ToolCalls    []ToolCall
	// GuardrailAction is "intervened" or "none".
	GuardrailAction string
}

// ToolCall is one tool call of a turn.
type ToolCall struct {
	Name string
	// Outcome is ok, failed, invalid_arguments or not_offered.
	Outcome  string
	Duration time.Duration
}

// ConversationStore holds conversations and their turns. Every method is
// scoped by account and project.
type ConversationStore interface {
	// CreateConversation stores a new conversation (with its first turn, the
	// greeting, when turn is not nil), atomically.
	CreateConversation(ctx context.Context, c Conversation, first *Turn) error
	GetConversation(ctx context.Context, accountID, projectID, conversationID string) (Conversation, error)
	// AddTurn stores a turn and the conversation as it is after it, if the
	// stored conversation's version is expectVersion (else
	// ErrConflictingWrite): one atomic write. Turns only go forward: a
	// turn whose index is not above every stored turn's is refused
	// (ErrAlreadyExists); a gap below it stays one.
	AddTurn(ctx context.Context, c Conversation, t Turn, expectVersion int64) error
	// UpdateConversation replaces the conversation (end, handoff, state) if
	// its version is expectVersion.
	UpdateConversation(ctx context.Context, c Conversation, expectVersion int64) error
	// Turns returns a conversation's turns in order.
	Turns(ctx context.Context, accountID, projectID, conversationID string) ([]Turn, error)
	// ListConversations returns up to limit conversations of a project that
	// started in [from, to), in ascending order of start (then ID), after
	// the conversation ID `after` ("" from the start); without turns.
	ListConversations(ctx context.Context, accountID, projectID string, from, to time.Time, after string, limit int) ([]Conversation, error)
	// ListConversationIntervals is ListConversations reading only what a
	// concurrency sweep needs (ID, times, variant, language, numbers,
	// environment, channel, progress and IdleDue).
	ListConversationIntervals(ctx context.Context, accountID, projectID string, from, to time.Time, after string, limit int) ([]Conversation, error)
	// DueConversations returns up to limit conversations in progress, of
	// every tenant, whose IdleDue is at or before `before`, earliest first
	// (ID, AccountID, ProjectID, IdleDue and InProgress set at least): the
	// idle sweep's read, over an index of open conversations only. It may
	// lag the conversations by a moment (DynamoDB's index is eventually
	// consistent): the sweep reads each one again before ending it.
	DueConversations(ctx context.Context, before time.Time, limit int) ([]Conversation, error)
	// ConversationBySharedID returns the conversation of a project whose
	// SharedID is sharedID (ErrNotFound if none): the handoff state's
	// lookup. Shared IDs are unique in a project (the engine draws them at
	// random); which conversation is returned for one given to two is
	// unspecified.
	ConversationBySharedID(ctx context.Context, accountID, projectID, sharedID string) (Conversation, error)
}

// CustomMetric is one value a project function logged in a conversation's
// `metrics` (a hook answer's "metrics"). A name logged more than once is
// listed as an array of its values, in the order they were logged.
type CustomMetric struct {
	Name  string
	Value string
}

// Bounds of custom metrics: they live in the conversation's record, whose
// size DynamoDB bounds (400 KB).
const (
	MaxCustomMetricName       = 64
	MaxCustomMetricValue      = 256
	MaxCustomMetricsPerAnswer = 32
	// MaxCustomMetrics bounds the values one conversation keeps; later
	// values are dropped (and logged by the engine).
	MaxCustomMetrics = 200
)

// BuiltinMetrics are the keys of `metrics` the service writes itself: a
// function cannot log them.
var BuiltinMetrics = []string{"CALL_DURATION", "CALL_TURN", "CALL_START", "CALL_END", "END_REASON", "FUNCTION_ERRORS", "ASR_LANG", "TTS_LANG",
	"MODEL_INPUT_TOKENS", "MODEL_OUTPUT_TOKENS"}

// ValidCustomMetricName reports whether name may be logged: 1 to 64 of
// A-Z a-z 0-9 _ . -, not a built-in key.
func ValidCustomMetricName(name string) bool {
	if name == "" || len(name) > MaxCustomMetricName || slices.Contains(BuiltinMetrics, name) {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
