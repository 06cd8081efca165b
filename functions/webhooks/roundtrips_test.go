package main

import (
	"context"
	"testing"
	"time"

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
	f := rt.Drive(t, "webhooks", env, h)
	key := rt.Header("x-api-key", env.Keys.A)
	// Warm: the key's first read.
	f.Do(rt.Req{Method: "GET", Path: "/v1/webhook-endpoints", Header: key, Status: rt.OK})

	body := `{"name":"pager","url":"https://hooks.example.com/alerts","event_types":["alerts.triggered","alerts.resolved"]}`
	ep := f.Measure("POST /v1/webhook-endpoints", rt.Req{Method: "POST", Path: "/v1/webhook-endpoints", Header: key, Body: body, Status: rt.Created}).JSON(t)["id"].(string)
	base := "/v1/webhook-endpoints/" + ep
	f.Measure("GET /v1/webhook-endpoints", rt.Req{Method: "GET", Path: "/v1/webhook-endpoints", Header: key, Status: rt.OK})
	f.Measure("GET /v1/webhook-endpoints/{endpoint_id}", rt.Req{Method: "GET", Path: base, Header: key, Status: rt.OK})
	f.Measure("PATCH /v1/webhook-endpoints/{endpoint_id}", rt.Req{Method: "PATCH", Path: base, Header: key, Body: `{"name":"pager 2"}`, Status: rt.OK})
	f.Measure("POST /v1/webhook-endpoints/{endpoint_id}/rotate-secret", rt.Req{Method: "POST", Path: base + "/rotate-secret", Header: key, Status: rt.OK})
	dlv := f.Measure("POST /v1/webhook-endpoints/{endpoint_id}/test", rt.Req{Method: "POST", Path: base + "/test", Header: key, Status: rt.Accepted}).JSON(t)["delivery_id"].(string)
	f.Measure("GET /v1/webhook-endpoints/{endpoint_id}/deliveries", rt.Req{Method: "GET", Path: base + "/deliveries", Header: key, Status: rt.OK})
	// Only a failed delivery can be retried.
	ctx := context.Background()
	d, err := env.Stores.Deliveries.GetDelivery(ctx, "acct_a", ep, dlv)
	if err != nil {
		t.Fatal(err)
	}
	d.Status = voiceops.DeliveryFailed
	d.Attempts = append(d.Attempts, voiceops.DeliveryAttempt{Number: 1, At: time.Now(), StatusCode: 400, DurationMS: 12, Error: "HTTP 400"})
	if err := env.Stores.Deliveries.RecordAttempt(ctx, d, 0); err != nil {
		t.Fatal(err)
	}
	f.Measure("GET /v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/payload", rt.Req{Method: "GET", Path: base + "/deliveries/" + dlv + "/payload", Header: key, Status: rt.OK})
	f.Measure("POST /v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry", rt.Req{Method: "POST", Path: base + "/deliveries/" + dlv + "/retry", Header: key, Status: rt.Accepted})
	f.Measure("DELETE /v1/webhook-endpoints/{endpoint_id}", rt.Req{Method: "DELETE", Path: base, Header: key, Status: rt.NoContent})
	f.Check()
}
