package main

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/conversation"
	rt "github.com/voiceops/opsapi/shared/testsupport/roundtrips"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestRoundTrips holds each route's AWS calls on a warm function to
// roundtrips.Want (docs/performance.md, "AWS round trips per request").
func TestRoundTrips(t *testing.T) {
	env := rt.NewEnv(t)
	h, err := build(env.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	// A chat that handed off, to read back.
	ctx := context.Background()
	started, err := env.Engine.Start(ctx, conversation.StartInput{AccountID: "acct_a", ProjectID: "proj_a2", Channel: voiceops.ChannelWebchat})
	if err != nil {
		t.Fatal(err)
	}
	conv := started.Conversation.ID
	if ans, err := env.Engine.Respond(ctx, "acct_a", "proj_a2", conv, conversation.TurnInput{Message: "agent please"}); err != nil || ans.Handoff == nil {
		t.Fatalf("no handoff: %+v %v", ans, err)
	}
	f := rt.Drive(t, "conversations", env, h)
	key := rt.Header("x-api-key", env.Keys.A)
	// Warm: the key's first read.
	f.Do(rt.Req{Method: "GET", Path: "/v3/acct_a/proj_a2/conversations", Header: key, Status: rt.OK})

	f.Measure("GET /v3/{account_id}/{project_id}/conversations", rt.Req{Method: "GET", Path: "/v3/acct_a/proj_a2/conversations", Header: key, Status: rt.OK})
	f.Measure("GET /v1/{account_id}/{project_id}/conversations", rt.Req{Method: "GET", Path: "/v1/acct_a/proj_a2/conversations", Header: key, Status: rt.OK})
	f.Measure("GET /v1/{account_id}/{project_id}/conversations/concurrency", rt.Req{Method: "GET", Path: "/v1/acct_a/proj_a2/conversations/concurrency?" + url.Values{
		"start_time": {time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}, "end_time": {time.Now().UTC().Format(time.RFC3339)}}.Encode(), Header: key, Status: rt.OK})
	f.Measure("GET /v1/{account_id}/{project_id}/handoff_state", rt.Req{Method: "GET", Path: "/v1/acct_a/proj_a2/handoff_state?id=" + conv, Header: key, Status: rt.OK})
	f.Measure("GET /openapi.json", rt.Req{Method: "GET", Path: "/openapi.json", Status: rt.OK})
	f.Measure("GET /docs", rt.Req{Method: "GET", Path: "/docs", Status: rt.OK})
	f.Check()
}
