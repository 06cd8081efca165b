package memory_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDNIContract(t *testing.T) {
	storetest.RunDNI(t, func(*testing.T) (voiceops.Stores, voiceops.DNIStore) {
		s := memory.New()
		return s.Stores(), s.DNI()
	})
}
