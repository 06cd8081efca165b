package dynamohttp

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/voiceops"
)

type noKeys struct{}

func (noKeys) KeyByDigest(context.Context, string) (voiceops.Key, error) {
	return voiceops.Key{}, voiceops.ErrNotFound
}

// TestConfigFillsThePlatform: every keyed function gets keys, both guards,
// its 5xx count, a clock, its log and its metrics from the one constructor;
// a part left out here would be missing from every function at once.
func TestConfigFillsThePlatform(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := emf.New(io.Discard, time.Now)
	c := Config(nil, noKeys{}, voiceops.RegionUS, Tables{Config: "config", Requests: "requests", Metrics: "metrics"}, log, metrics)
	if c.Keys == nil || c.CountError == nil || c.Now == nil {
		t.Errorf("keys %v, count error set %v, clock set %v: want all", c.Keys, c.CountError != nil, c.Now != nil)
	}
	if c.Guards.Limiter == nil || c.Guards.Idempotency == nil {
		t.Errorf("guards %+v: want the rate limiter and the Idempotency-Key store", c.Guards)
	}
	if c.Log != log || c.Metrics != metrics {
		t.Error("the function's log and metrics are not the platform's")
	}
}
