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
	f := rt.Drive(t, "outbound", env, h)
	service := rt.Header("X-Service-Auth-Token", env.Keys.Service)
	internal := rt.Header("X-Internal-Key", rt.InternalKey)
	// Warm: the key's first read, the account's destination policy and
	// the internal key's one read from Secrets Manager.
	warm := f.Do(rt.Req{Method: "POST", Path: "/v1/outbound-calling/trigger", Header: service, Body: `{"to_number":"+14155552671"}`, Status: rt.OK}).JSON(t)["callSid"].(string)
	f.Do(rt.Req{Method: "POST", Path: "/internal/v1/outbound-calling/" + warm + "/status", Header: internal, Body: `{"status":"calling"}`, Status: rt.OK})

	sid := f.Measure("POST /v1/outbound-calling/trigger", rt.Req{Method: "POST", Path: "/v1/outbound-calling/trigger", Header: service, Status: rt.OK,
		Body: `{"to_number":"+14155552671","metadata":{"first_name":"Ada"}}`}).JSON(t)["callSid"].(string)
	f.Measure("GET /v1/outbound-calling/{callSid}/status", rt.Req{Method: "GET", Path: "/v1/outbound-calling/" + sid + "/status", Header: service, Status: rt.OK})
	f.Measure("POST /internal/v1/outbound-calling/{callSid}/status", rt.Req{Method: "POST", Path: "/internal/v1/outbound-calling/" + sid + "/status", Header: internal,
		Body: `{"status":"calling"}`, Status: rt.OK})
	f.Check()
}
