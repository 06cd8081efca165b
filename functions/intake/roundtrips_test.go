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
	f := rt.Drive(t, "intake", env, h)
	key := rt.Header("x-internal-key", rt.InternalKey)
	// Warm: the internal key's one read from Secrets Manager.
	f.Do(rt.Req{Method: "POST", Path: "/internal/v1/metric-events", Header: key, Body: `{"events":[]}`, Status: rt.Accepted})
	f.Measure("POST /internal/v1/metric-events", rt.Req{Method: "POST", Path: "/internal/v1/metric-events", Header: key, Status: rt.Accepted,
		Body: `{"events":[{"account_id":"acct_a","project_id":"proj_a1","metric":"api_errors"},{"account_id":"acct_a","project_id":"proj_a1","metric":"activity"}]}`})
	f.Check()
}
