package dynamo_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestWholeRecords(t *testing.T) {
	c := client(t)
	storetest.RunWholeRecords(t, func(t *testing.T) voiceops.Stores {
		return dynamo.NewStores(awstest.Serial(c), newTables(t, c))
	})
}
