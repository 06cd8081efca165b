package dynamo_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestAgentConfigsContract(t *testing.T) {
	c := client(t)
	db := awstest.Serial(c)
	storetest.RunAgentConfigs(t, func(t *testing.T) (voiceops.Stores, voiceops.AgentConfigStore) {
		names := newTables(t, c)
		return dynamo.NewStores(db, names), dynamo.NewConfig(db, names.Config, names.Deliveries).AgentConfigs()
	})
}
