package memory_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/platform/idempotency"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/store/storetest"
)

func TestIdempotencyContract(t *testing.T) {
	storetest.RunIdempotency(t, func(*testing.T) idempotency.Store { return memory.NewRequests() })
}

func TestRateLimitContract(t *testing.T) {
	storetest.RunRateLimit(t, func(*testing.T) ratelimit.Store { return memory.NewRequests() })
}
