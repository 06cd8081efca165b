package main

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/testsupport/samples"
)

// TestReplayEvents sends every calls-*.json of events/ through the real
// Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	want := map[string]int{
		"calls-start.json":           200,
		"calls-turn.json":            200,
		"calls-end.json":             200,
		"calls-dni-reservation.json": 200,
	}
	samples.ReplayHTTP(t, "calls-", want, func(t *testing.T) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		m := samples.NewMemory(t)
		return handler(deps{Keys: m.Auth, InternalKeyDigest: m.InternalKeyDigest, Engine: m.Engine, Pools: m.Store.DNI(), Calls: m.Calls,
			CountError: m.CountError, Now: time.Now, Log: m.Log})
	})
}
