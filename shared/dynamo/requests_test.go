package dynamo_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/idempotency"
	"github.com/voiceops/opsapi/shared/ratelimit"
	"github.com/voiceops/opsapi/shared/storetest"
)

func TestIdempotencyContract(t *testing.T) {
	c := client(t)
	db := &serialDB{DB: c}
	storetest.RunIdempotency(t, func(t *testing.T) idempotency.Store {
		n := newTables(t, c)
		return dynamo.NewRequests(db, n.Requests, n.Config)
	})
}

func TestRateLimitContract(t *testing.T) {
	c := client(t)
	db := &serialDB{DB: c}
	storetest.RunRateLimit(t, func(t *testing.T) ratelimit.Store {
		n := newTables(t, c)
		return dynamo.NewRequests(db, n.Requests, n.Config)
	})
}
