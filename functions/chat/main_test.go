package main

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

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
	samples.ReplayHTTP(t, "chat-", want, func(t *testing.T) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		m := samples.NewMemory(t)
		platform := m.HTTP()
		platform.Projects = m.Stores.Accounts
		return handler(deps{HTTP: platform, Engine: m.Engine})
	})
}
