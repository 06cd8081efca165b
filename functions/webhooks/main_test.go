package main

import (
	"testing"

	"github.com/voiceops/opsapi/shared/testsupport/samples"
)

// TestReplayEvents sends every webhooks-*.json of events/ through the real
// Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	want := map[string]int{
		"webhooks-create-endpoint.json": 201,
		"webhooks-list-endpoints.json":  200,
		"webhooks-get-endpoint.json":    200,
		"webhooks-patch-endpoint.json":  200,
		"webhooks-rotate-secret.json":   200,
		"webhooks-delete-endpoint.json": 204,
	}
	samples.ReplayHTTP(t, "webhooks-", want, func(t *testing.T, m *samples.Memory) samples.Lambda {
		return handler(deps{HTTP: m.HTTP(), Endpoints: m.Stores.Endpoints, Deliveries: m.Stores.Deliveries, Events: m.Stores.Events, Outbox: m.Outbox})
	})
}
