package main

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/testsupport/samples"
)

// TestReplayEvents sends every outbound-*.json of events/ through the real
// Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	want := map[string]int{
		"outbound-trigger.json": 200,
		"outbound-status.json":  200,
		"outbound-move.json":    200,
	}
	samples.ReplayHTTP(t, "outbound-", want, func(t *testing.T) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		m := samples.NewMemory(t)
		return handler(deps{Keys: m.Auth, InternalKeyDigest: m.InternalKeyDigest, Calls: m.Calls, CountError: m.CountError, Now: time.Now, Log: m.Log})
	})
}

func TestRunNeedsItsEnvironment(t *testing.T) {
	if err := run(context.Background(), func(string) string { return "" }); err == nil {
		t.Error("run started without its environment")
	}
}
