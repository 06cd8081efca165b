package main

import (
	"context"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/testsupport/samples"
)

// TestReplayEvents sends every events-*.json of events/ through the real
// Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	want := map[string]int{
		"events-external.json":     201,
		"events-bridge-ended.json": 200,
	}
	samples.ReplayHTTP(t, "events-", want, func(t *testing.T, m *samples.Memory) samples.Lambda {
		if err := samples.SeedHandedOff(context.Background(), m.Stores, time.Now()); err != nil {
			t.Fatal(err)
		}
		return handler(deps{HTTP: m.HTTP(), Engine: m.Engine})
	})
}
