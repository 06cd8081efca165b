package main

import (
	"fmt"
	"net/url"
	"testing"
	"time"

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
	f := rt.Drive(t, "alerts", env, h)
	key := rt.Header("x-api-key", env.Keys.A)
	// Warm: the key's first read.
	f.Do(rt.Req{Method: "GET", Path: "/v1/alerts", Header: key, Status: rt.OK})

	rule := `{"name":"p95 too slow","project_id":"proj_a1","metric":"turn_latency_p95","operator":">","threshold_value":1500,"window_duration":"5m"}`
	id := f.Measure("POST /v1/alert-rules", rt.Req{Method: "POST", Path: "/v1/alert-rules", Header: key, Body: rule, Status: rt.Created}).JSON(t)["id"].(string)
	f.Measure("GET /v1/alert-rules", rt.Req{Method: "GET", Path: "/v1/alert-rules", Header: key, Status: rt.OK})
	f.Measure("GET /v1/alert-rules/{rule_id}", rt.Req{Method: "GET", Path: "/v1/alert-rules/" + id, Header: key, Status: rt.OK})
	f.Measure("PATCH /v1/alert-rules/{rule_id}", rt.Req{Method: "PATCH", Path: "/v1/alert-rules/" + id, Header: key, Body: `{"threshold_value":1600}`, Status: rt.OK})
	f.Measure("GET /v1/alerts", rt.Req{Method: "GET", Path: "/v1/alerts", Header: key, Status: rt.OK})
	f.Measure("GET /v1/alert-rules/{rule_id}/history", rt.Req{Method: "GET", Path: "/v1/alert-rules/" + id + "/history", Header: key, Status: rt.OK})
	now := time.Now().UTC().Truncate(time.Minute)
	from, to := now.Add(-time.Hour).Format(time.RFC3339), now.Format(time.RFC3339)
	f.Measure("POST /v1/alert-rules/preview", rt.Req{Method: "POST", Path: "/v1/alert-rules/preview", Header: key, Status: rt.OK,
		Body: fmt.Sprintf(`{"name":"p","project_id":"proj_a1","metric":"api_errors","operator":">=","threshold_value":6,"window_duration":"5m","from":%q,"to":%q}`, from, to)})
	f.Measure("GET /v1/metrics", rt.Req{Method: "GET", Header: key, Status: rt.OK,
		Path: "/v1/metrics?" + url.Values{"metric": {"api_errors"}, "project_id": {"proj_a1"}, "from": {from}, "to": {to}, "step": {"1m"}}.Encode()})
	sil := f.Measure("POST /v1/silences", rt.Req{Method: "POST", Path: "/v1/silences", Header: key, Status: rt.Created,
		Body: fmt.Sprintf(`{"ends_at":%q,"comment":"maintenance","matchers":[{"name":"project_id","value":"proj_a1"}]}`, now.Add(time.Hour).Format(time.RFC3339))}).JSON(t)["id"].(string)
	f.Measure("GET /v1/silences", rt.Req{Method: "GET", Path: "/v1/silences", Header: key, Status: rt.OK})
	f.Measure("DELETE /v1/silences/{silence_id}", rt.Req{Method: "DELETE", Path: "/v1/silences/" + sil, Header: key, Status: rt.NoContent})
	f.Measure("DELETE /v1/alert-rules/{rule_id}", rt.Req{Method: "DELETE", Path: "/v1/alert-rules/" + id, Header: key, Status: rt.NoContent})
	f.Measure("GET /v1/account", rt.Req{Method: "GET", Path: "/v1/account", Header: key, Status: rt.OK})
	f.Measure("GET /console", rt.Req{Method: "GET", Path: "/console", Status: rt.OK})
	f.Measure("GET /console/{file...}", rt.Req{Method: "GET", Path: "/console/app.js", Status: rt.OK})
	f.Measure("GET /openapi.json", rt.Req{Method: "GET", Path: "/openapi.json", Status: rt.OK})
	f.Measure("GET /docs", rt.Req{Method: "GET", Path: "/docs", Status: rt.OK})
	f.Check()
}
