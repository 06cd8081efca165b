package memory_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestAgentConfigsContract(t *testing.T) {
	storetest.RunAgentConfigs(t, func(*testing.T) (voiceops.Stores, voiceops.AgentConfigStore) {
		s := memory.New()
		return s.Stores(), s.AgentConfigs()
	})
}
