// Package agent answers the turns of a conversation. A project configures,
// per variant, either the built-in scripted agent (ordered rules over
// keywords, regular expressions, DTMF and silence) or an HTTP agent (the
// project's own HTTPS endpoint, called with a signed request). The operator
// loads the configuration from a JSON file (ParseConfig); a
// voiceops.AgentConfigStore keeps it per project (PutConfig, GetConfig).
//
// The package decides what the agent says; the conversation engine decides
// what happens to the conversation (it stores turns, applies state, counts
// errors and calls the project functions).
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Request is what an agent answers: the conversation as it is before the
// turn, and the turn's input.
type Request struct {
	Conversation voiceops.Conversation
	Turn         voiceops.Turn
	// Start asks for the greeting: the conversation has just begun and there
	// is no user input yet.
	Start bool
	// History holds the conversation's previous turns, in order, when the
	// agent answers from them (HistoryTurns); nil otherwise.
	History []voiceops.Turn
}

// Reply is an agent's answer to one turn.
type Reply struct {
	Response string
	// State holds the keys to set in the conversation's state (the others
	// are kept). The agent hands over its own copy.
	State    map[string]any
	Intents  []string
	Entities []map[string]any
	// OOD marks the turn out-of-domain: the agent did not understand it.
	OOD bool
	// End ends the conversation after this answer.
	End bool
	// Handoff, when set, transfers the conversation.
	Handoff *Handoff
	// Model is the turn's model metadata (Bedrock agents); nil otherwise.
	Model *voiceops.TurnModel
	// APIErrors counts the failed model calls of the turn (throttled ones
	// too, even when a retry answered); FunctionErrors the failed tool
	// calls.
	APIErrors, FunctionErrors int
	// ModelFailed says the answer is the fallback: the model gave none.
	ModelFailed bool
}

// Handoff transfers a conversation to a person or another system. The same
// shape is a rule's `handoff` in the configuration and the `handoff` of an
// HTTP agent's answer.
type Handoff struct {
	// Destination names where the conversation goes (a queue, a number, an
	// endpoint): the conversation's handoff_destination. With SIP and no
	// destination, it is SIP.OutboundEndpoint.
	Destination string `json:"destination,omitempty"`
	// Reason is the conversation's handoff_reason.
	Reason string      `json:"reason,omitempty"`
	SIP    *SIPHandoff `json:"sip,omitempty"`
}

// SIPHandoff is the custom SIP handoff of the vendor's interface: a transfer through one of
// the project's configured outbound endpoints.
type SIPHandoff struct {
	OutboundCallerID string `json:"outbound_caller_id,omitempty"`
	// OutboundEndpoint is the name of the configured outbound endpoint.
	OutboundEndpoint string `json:"outbound_endpoint"`
}

// Agent answers turns. Implementations are immutable once built and safe for
// concurrent use, so callers may build one per project variant and keep it
// for as long as the configuration does not change.
type Agent interface {
	// Respond answers one turn. An error means there is no answer (the
	// endpoint failed, timed out or answered garbage); the caller decides
	// what the conversation does then, and counts it.
	Respond(ctx context.Context, req Request) (Reply, error)
}

// PutConfig stores c (validated by ParseConfig) as the configuration of
// c.ProjectID in s, replacing any previous one. The project must exist,
// else voiceops.ErrNotFound and nothing is stored.
func PutConfig(ctx context.Context, s voiceops.AgentConfigStore, c Config) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("agent: encoding the configuration: %w", err)
	}
	return s.PutAgentConfig(ctx, c.AccountID, c.ProjectID, b)
}

// GetConfig returns a project's configuration from s, voiceops.ErrNotFound
// when it has none.
func GetConfig(ctx context.Context, s voiceops.AgentConfigStore, accountID, projectID string) (Config, error) {
	b, err := s.GetAgentConfig(ctx, accountID, projectID)
	if err != nil {
		return Config{}, err
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, fmt.Errorf("agent: the stored configuration of %s/%s: %w", accountID, projectID, err)
	}
	return c, nil
}

// Deps are what agents need from outside.
type Deps struct {
	// HTTPClient makes the calls of HTTP agents. It must carry the SSRF
	// guard: webhook.NewClient (with AllowLoopback only on the dev server).
	// Needed only for HTTP agents.
	HTTPClient *http.Client
	// Policy checks the agent's URL again when it is built
	// (URLPolicy.CheckStoredURL); the dev server allows loopback URLs.
	Policy voiceops.URLPolicy
	// Now is the clock of request signatures; time.Now when nil.
	Now func() time.Time
	// UserAgent is the User-Agent of HTTP agents' requests;
	// DefaultUserAgent when empty.
	UserAgent string
	// Model answers Bedrock agents (bedrockconverse.New); needed only for
	// them.
	Model Model
	// Tools runs the tools of Bedrock agents, ToolSpecs are the
	// configuration's tools (Config.Tools).
	Tools     ToolRunner
	ToolSpecs map[string]ToolSpec
	// Sleep waits between retries of a throttled model call; a timer
	// bounded by ctx when nil.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultUserAgent identifies the service's calls to HTTP agents.
const DefaultUserAgent = "VoiceOps-Agent/1.0"

// New builds the agent a variant's spec describes. The spec is validated
// again (a *ConfigError when it is invalid), so a spec built in code gets
// the same checks as one loaded from a file.
func New(spec AgentSpec, deps Deps) (Agent, error) {
	var errs fieldErrors
	compiled := spec.check("agent", deps.Policy.CheckStoredURL, nil, &errs)
	if err := errs.err(); err != nil {
		return nil, err
	}
	switch spec.Type {
	case TypeScripted:
		return compiled, nil
	case TypeBedrock:
		return newBedrockAgent(*spec.Bedrock, deps)
	}
	if deps.HTTPClient == nil {
		return nil, errors.New("agent: an http agent needs Deps.HTTPClient (webhook.NewClient)")
	}
	return newHTTPAgent(*spec.HTTP, deps), nil
}
