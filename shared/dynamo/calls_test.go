package dynamo_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestCallsContract(t *testing.T) {
	c := client(t)
	db := &serialDB{DB: c}
	storetest.RunCalls(t, func(t *testing.T) voiceops.CallStore {
		return dynamo.NewCalls(db, newTables(t, c).Calls)
	})
}

func TestPacerContract(t *testing.T) {
	c := client(t)
	db := &serialDB{DB: c}
	storetest.RunPacer(t, func(t *testing.T) storetest.PacerStore {
		return dynamo.NewPacer(db, newTables(t, c).Calls)
	})
}
