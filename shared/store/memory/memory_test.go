package memory_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) voiceops.Stores { return memory.New().Stores() })
}

func TestWakesContract(t *testing.T) {
	storetest.RunWakes(t, func(*testing.T) (voiceops.Stores, storetest.Woken) {
		s := memory.New()
		var mu sync.Mutex
		var woken []string
		s.WakeWith(func(_ context.Context, accountID, projectID string, _ time.Time) error {
			mu.Lock()
			defer mu.Unlock()
			woken = append(woken, accountID+"/"+projectID)
			return nil
		})
		return s.Stores(), func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(woken)
		}
	})
}
