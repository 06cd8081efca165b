package dynamo_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDestinationsContract(t *testing.T) {
	c := client(t)
	storetest.RunDestinations(t, func(t *testing.T) (voiceops.Stores, destination.Store) {
		names := newTables(t, c)
		return dynamo.NewStores(c, names), dynamo.Destinations(dynamo.NewConfig(c, names.Config, names.Deliveries))
	})
}
