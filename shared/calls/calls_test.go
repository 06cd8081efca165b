package calls_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/callstest"
	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/store/memory"
)

// The conversation engine is the service's Engine.
var _ calls.Engine = (*conversation.Engine)(nil)

func TestCallbacksOnMemory(t *testing.T) {
	callstest.Run(t, func(*testing.T) callstest.Env {
		mem := memory.New()
		return callstest.Env{Stores: mem.Stores(), Configs: mem.AgentConfigs(), Calls: memory.NewCalls()}
	})
}
