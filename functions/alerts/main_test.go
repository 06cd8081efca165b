package main

import (
	"testing"

	"github.com/voiceops/opsapi/shared/testsupport/samples"
)

// TestReplayEvents sends every alerts-*.json of events/ through the real
// Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	want := map[string]int{
		"alerts-create-rule.json": 201,
		"alerts-list-rules.json":  200,
		"alerts-get-rule.json":    200,
		"alerts-patch-rule.json":  200,
		"alerts-delete-rule.json": 204,
		"alerts-list-active.json": 200,
	}
	samples.ReplayHTTP(t, "alerts-", want, func(t *testing.T, m *samples.Memory) samples.Lambda {
		return handler(deps{HTTP: m.HTTP(), Rules: m.Stores.Rules, Fanout: m.Outbox.Fanout})
	})
}
