package memory_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDestinationsContract(t *testing.T) {
	storetest.RunDestinations(t, func(*testing.T) (voiceops.Stores, destination.Store) {
		s := memory.New()
		return s.Stores(), s.Destinations()
	})
}
