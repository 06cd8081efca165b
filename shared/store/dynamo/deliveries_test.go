package dynamo_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDeliveriesContract(t *testing.T) {
	c := client(t)
	db := awstest.Serial(c)
	storetest.RunDeliveries(t, func(t *testing.T) voiceops.Stores {
		return dynamo.NewStores(db, newTables(t, c))
	})
}
