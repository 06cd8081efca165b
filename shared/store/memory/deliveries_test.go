package memory_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDeliveriesContract(t *testing.T) {
	storetest.RunDeliveries(t, func(*testing.T) voiceops.Stores { return memory.New().Stores() })
}
