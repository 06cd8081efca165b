package dynamo_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestAgentConfigsContract(t *testing.T) {
	c := client(t)
	db := &serialDB{DB: c}
	storetest.RunAgentConfigs(t, func(t *testing.T) (voiceops.Stores, voiceops.AgentConfigStore) {
		s := dynamo.New(db, newTables(t, c))
		return s.Stores(), s.AgentConfigs()
	})
}
