package calls_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/twilioapi/callbackstest"
	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/store/memory"
)

// The conversation engine is the service's Engine.
var _ calls.Engine = (*conversation.Engine)(nil)

func TestCallbacksOnMemory(t *testing.T) {
	callbackstest.Run(t, func(*testing.T) callbackstest.Env {
		mem := memory.New()
		return callbackstest.Env{Stores: mem.Stores(), Configs: mem.AgentConfigs(), Calls: memory.NewCalls()}
	})
}
