package memory_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestEventsContract(t *testing.T) {
	storetest.RunEvents(t, func(*testing.T) voiceops.Stores { return memory.New().Stores() })
}
