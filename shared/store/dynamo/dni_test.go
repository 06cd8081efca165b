package dynamo_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDNIContract(t *testing.T) {
	c := client(t)
	db := awstest.Serial(c)
	storetest.RunDNI(t, func(t *testing.T) (voiceops.Stores, voiceops.DNIStore) {
		names := newTables(t, c)
		return dynamo.NewStores(db, names), dynamo.NewConfig(db, names.Config, names.Deliveries).DNI()
	})
}
