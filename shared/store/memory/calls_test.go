package memory_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestCallsContract(t *testing.T) {
	storetest.RunCalls(t, func(*testing.T) voiceops.CallStore { return memory.NewCalls() })
}

func TestPacerContract(t *testing.T) {
	storetest.RunPacer(t, func(*testing.T) storetest.PacerStore { return memory.NewPacer() })
}
