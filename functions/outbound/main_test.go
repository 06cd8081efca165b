package main

import (
	"context"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/testsupport/samples"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestReplayEvents sends every outbound-*.json of events/ through the real
// Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	var jobs dialJobs
	want := map[string]int{
		"outbound-trigger.json": 200,
		// A premium rate number: refused by the default destination policy.
		"outbound-trigger-premium.json": 400,
		"outbound-status.json":          200,
		"outbound-move.json":            200,
	}
	samples.ReplayHTTP(t, "outbound-", want, func(t *testing.T, m *samples.Memory) samples.Lambda {
		platform := m.HTTP()
		platform.InternalKey = httpapi.FixedDigest(m.InternalKeyDigest)
		return handler(deps{HTTP: platform, Calls: m.Calls, Dial: &jobs,
			Destinations: m.Store.Destinations(), Region: voiceops.RegionUS})
	})
	if len(jobs) != 1 {
		t.Errorf("the trigger sample queued %d dial jobs, want 1", len(jobs))
	}
}

// dialJobs keeps the dial jobs it is sent.
type dialJobs []voiceops.DialJob

func (q *dialJobs) SendDial(_ context.Context, j voiceops.DialJob, _ time.Duration) error {
	*q = append(*q, j)
	return nil
}

func TestRunNeedsItsEnvironment(t *testing.T) {
	if _, err := build(func(string) string { return "" }); err == nil {
		t.Error("run started without its environment")
	}
}
