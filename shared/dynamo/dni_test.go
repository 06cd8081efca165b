package dynamo_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDNIContract(t *testing.T) {
	c := client(t)
	db := &serialDB{DB: c}
	storetest.RunDNI(t, func(t *testing.T) (voiceops.Stores, voiceops.DNIStore) {
		s := dynamo.New(db, newTables(t, c))
		return s.Stores(), s.DNI()
	})
}
