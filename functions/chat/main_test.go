package main

import (
	"testing"

	"github.com/voiceops/opsapi/shared/testsupport/samples"
)

// TestReplayEvents sends every chat-*.json of events/ through the real
// Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	want := map[string]int{
		"chat-create.json":  200,
		"chat-respond.json": 200,
		"chat-close.json":   200,
	}
	samples.ReplayHTTP(t, "chat-", want, func(t *testing.T, m *samples.Memory) samples.Lambda {
		platform := m.HTTP()
		platform.Projects = m.Stores.Accounts
		return handler(deps{HTTP: platform, Engine: m.Engine})
	})
}
