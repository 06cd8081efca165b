package main

import (
	"context"
	"net/url"
	"testing"

	"github.com/voiceops/opsapi/shared/conversations/conversation"
	rt "github.com/voiceops/opsapi/shared/testsupport/roundtrips"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestRoundTrips holds each route's AWS calls on a warm function to
// roundtrips.Want (docs/performance.md, "AWS round trips per request").
// The project's agent configures no project functions: calling one is not
// an AWS call (an HTTPS function), or one Lambda Invoke more.
func TestRoundTrips(t *testing.T) {
	env := rt.NewEnv(t)
	h, err := build(env.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	chat := func(message string) string {
		t.Helper()
		a, err := env.Engine.Start(ctx, conversation.StartInput{AccountID: "acct_a", ProjectID: "proj_a1", Channel: voiceops.ChannelWebchat})
		if err != nil {
			t.Fatal(err)
		}
		if message != "" {
			if _, err := env.Engine.Respond(ctx, "acct_a", "proj_a1", a.Conversation.ID, conversation.TurnInput{Message: message}); err != nil {
				t.Fatal(err)
			}
		}
		return a.Conversation.ID
	}
	warm, live, handedOff := chat(""), chat(""), chat("I want a human")
	f := rt.Drive(t, "events", env, h)
	key := rt.Header("x-api-key", env.Events)
	// The event names its conversation in the payload's "ref".
	webhook := "/v1/external-events/webhook?" + url.Values{"event_id_location": {"payload"}, "event_id_path": {"ref"},
		"account_id": {"acct_a"}, "project_id": {"proj_a1"}}.Encode()
	// Warm: the key's first read and the project's agent configuration.
	f.Do(rt.Req{Method: "POST", Path: webhook, Header: key, Body: `{"ref":"` + warm + `","status":"paid"}`, Status: rt.Created})

	f.Measure("POST /v1/external-events/webhook", rt.Req{Method: "POST", Path: webhook, Header: key, Status: rt.Created,
		Body: `{"ref":"` + live + `","status":"paid"}`})
	f.Measure("POST /internal/v1/agentic-dial/bridge-ended", rt.Req{Method: "POST", Path: "/internal/v1/agentic-dial/bridge-ended", Header: key, Status: rt.OK,
		Body: `{"conversation_id":"` + handedOff + `","bridge_duration_seconds":0,"call_duration_seconds":0}`})
	f.Check()
}
