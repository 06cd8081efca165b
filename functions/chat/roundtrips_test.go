package main

import (
	"testing"

	rt "github.com/voiceops/opsapi/shared/testsupport/roundtrips"
)

// TestRoundTrips holds each route's AWS calls on a warm function to
// roundtrips.Want (docs/performance.md, "AWS round trips per request").
func TestRoundTrips(t *testing.T) {
	env := rt.NewEnv(t)
	h, err := build(env.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	f := rt.Drive(t, "chat", env, h)
	keys := rt.Header("x-api-key", env.Keys.A, "x-token", env.Keys.Agent)
	base := "/v1/acct_a/proj_a1/chat/"
	// Warm: the keys' first reads and the project's agent configuration.
	warm := f.Do(rt.Req{Method: "POST", Path: base + "create", Header: keys, Body: `{}`, Status: rt.OK}).JSON(t)["conversation_id"].(string)
	f.Do(rt.Req{Method: "PUT", Path: base + "close", Header: keys, Body: `{"conversation_id":"` + warm + `"}`, Status: rt.OK})

	id := f.Measure("POST /{version}/{account_id}/{project_id}/chat/create", rt.Req{Method: "POST", Path: base + "create", Header: keys, Status: rt.OK,
		Body: `{"channel":"webchat"}`}).JSON(t)["conversation_id"].(string)
	f.Measure("POST /{version}/{account_id}/{project_id}/chat/respond", rt.Req{Method: "POST", Path: base + "respond", Header: keys, Status: rt.OK,
		Body: `{"conversation_id":"` + id + `","message":"balance"}`})
	f.Measure("PUT /{version}/{account_id}/{project_id}/chat/close", rt.Req{Method: "PUT", Path: base + "close", Header: keys, Status: rt.OK,
		Body: `{"conversation_id":"` + id + `"}`})
	f.Check()
}
