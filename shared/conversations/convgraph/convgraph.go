// Package convgraph composes the conversation engine's graph: the engine
// over its stores, the runner of project functions, the agents' HTTP
// client and the metric recorder. The chat, calls, events and sweeper
// functions, the dev server and the HTTP tests all build their engine with
// New, so that what the tests run is what is deployed. It takes the stores
// and clients it is given and builds no AWS client: the functions pass
// DynamoDB stores and the Lambda client, the dev server and the tests
// memory (or DynamoDB) stores.
package convgraph

import (
	"log/slog"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/conversations/hooks"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Deps is what the engine runs on.
type Deps struct {
	Conversations voiceops.ConversationStore
	Configs       voiceops.AgentConfigStore
	// DNI holds the projects' DNI pools (a voice call to a reserved number
	// consumes its reservation); nil: no DNI (the sweeper starts no call).
	DNI voiceops.DNIStore
	// Metrics stores the conversations' metric events (minute buckets);
	// nil records none.
	Metrics buckets.Store
	// Lambda invokes project functions given as Lambda ARNs
	// (hooks/lambdainvoke deployed); nil refuses such targets.
	Lambda hooks.LambdaInvoker
	// AllowLoopback lets agents and project functions be called on
	// loopback addresses: the dev server's local receivers only. Deployed,
	// they reach public addresses only.
	AllowLoopback bool
	// ChatIdleTimeout is the idle timeout of the chats of projects that
	// configure none (0: voiceops.DefaultChatIdleTimeout).
	ChatIdleTimeout time.Duration
	// Telemetry receives the service's own metrics (idle ends); nil none.
	Telemetry telemetry.Recorder
	// Model answers Bedrock agents (bedrockconverse.New); nil: their
	// turns get the fallback (functions that answer no turns).
	Model agent.Model
	Now   func() time.Time
	Log   *slog.Logger
}

// New returns the engine of d.
func New(d Deps) *conversation.Engine {
	e := &conversation.Engine{
		Store: d.Conversations, Configs: d.Configs, DNI: d.DNI,
		Functions: hooks.NewRunner(hooks.Options{Lambda: d.Lambda, AllowLoopback: d.AllowLoopback}),
		AgentDeps: agent.Deps{
			HTTPClient: webhook.NewClient(webhook.Options{AllowLoopback: d.AllowLoopback}),
			Policy:     voiceops.URLPolicy{AllowLoopback: d.AllowLoopback},
			Model:      d.Model,
		},
		ChatIdleTimeout: d.ChatIdleTimeout, Telemetry: d.Telemetry, Now: d.Now, Log: d.Log,
	}
	if d.Metrics != nil {
		e.Metrics = &buckets.Recorder{Store: d.Metrics}
	}
	return e
}
