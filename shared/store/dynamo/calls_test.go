package dynamo_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/calls/twilioapi/callbackstest"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestCallsContract(t *testing.T) {
	c := client(t)
	db := awstest.Serial(c)
	storetest.RunCalls(t, func(t *testing.T) voiceops.CallStore {
		return dynamo.NewCalls(db, newTables(t, c).Calls)
	})
}

func TestPacerContract(t *testing.T) {
	c := client(t)
	db := awstest.Serial(c)
	storetest.RunPacer(t, func(t *testing.T) storetest.PacerStore {
		return dynamo.NewPacer(db, newTables(t, c).Calls)
	})
}

// TestCallbacksOnDynamo runs the calls service's callback suite on the
// DynamoDB stores (calls, conversations, configuration).
func TestCallbacksOnDynamo(t *testing.T) {
	c := client(t)
	db := awstest.Serial(c)
	callbackstest.Run(t, func(t *testing.T) callbackstest.Env {
		names := newTables(t, c)
		return callbackstest.Env{Stores: dynamo.NewStores(db, names), Configs: dynamo.NewConfig(db, names.Config, names.Deliveries).AgentConfigs(),
			Calls: dynamo.NewCalls(db, names.Calls)}
	})
}
