package apitest

import (
	"context"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestTestEventAndDeliveryLog(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	ep := h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(t, 201).JSON(t)["id"].(string)
	other := h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(t, 201).JSON(t)["id"].(string)

	got := h.do("POST", "/v1/webhook-endpoints/"+ep+"/test", h.keyA, nil).Expect(t, 202).JSON(t)
	dlv, _ := got["delivery_id"].(string)
	if !voiceops.ValidDeliveryID(dlv) || got["event_id"] == "" {
		t.Fatalf("test response %v", got)
	}
	// One message, to that endpoint alone.
	if len(h.queue.msgs) != 1 || h.queue.msgs[0].EndpointID != ep || h.queue.msgs[0].Attempt != 1 {
		t.Fatalf("queued %+v", h.queue.msgs)
	}
	log := h.do("GET", "/v1/webhook-endpoints/"+ep+"/deliveries", h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any)
	if len(log) != 1 {
		t.Fatalf("delivery log %v", log)
	}
	d := log[0].(map[string]any)
	if d["id"] != dlv || d["test"] != true || d["status"] != "pending" || d["event_type"] != "alerts.triggered" || len(d["attempts"].([]any)) != 0 {
		t.Errorf("delivery %v", d)
	}
	if n := len(h.do("GET", "/v1/webhook-endpoints/"+other+"/deliveries", h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any)); n != 0 {
		t.Errorf("the other endpoint has %d deliveries", n)
	}
	// The event body is marked as a test.
	e, err := h.stores.Events.GetEvent(ctx, "acct_a", got["event_id"].(string))
	if err != nil || !contains(string(e.Body), `"test":true`) {
		t.Errorf("test event %s %v", e.Body, err)
	}

	// A pending delivery cannot be retried; a failed one can.
	path := "/v1/webhook-endpoints/" + ep + "/deliveries/" + dlv + "/retry"
	h.do("POST", path, h.keyA, nil).Expect(t, 409)
	cur, err := h.stores.Deliveries.GetDelivery(ctx, "acct_a", ep, dlv)
	if err != nil {
		t.Fatal(err)
	}
	failed := cur
	failed.Status = voiceops.DeliveryFailed
	failed.Attempts = append(failed.Attempts, voiceops.DeliveryAttempt{Number: 1, At: h.clock.Now(), StatusCode: 400, DurationMS: 12, Error: "HTTP 400"})
	if err := h.stores.Deliveries.RecordAttempt(ctx, failed, 0); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Minute)
	r := h.do("POST", path, h.keyA, nil).Expect(t, 202).JSON(t)
	if r["status"] != "pending" || len(r["attempts"].([]any)) != 1 || r["next_attempt_at"] != "2026-11-22T10:01:00.000Z" {
		t.Errorf("retry response %v", r)
	}
	if last := h.queue.msgs[len(h.queue.msgs)-1]; last.Attempt != 2 || last.DeliveryID != dlv {
		t.Errorf("retry queued %+v", last)
	}
	a := h.do("GET", "/v1/webhook-endpoints/"+ep+"/deliveries", h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any)[0].(map[string]any)["attempts"].([]any)[0].(map[string]any)
	if a["number"] != float64(1) || a["status_code"] != float64(400) || a["duration_ms"] != float64(12) || a["error"] != "HTTP 400" {
		t.Errorf("attempt %v", a)
	}

	// Errors.
	h.do("POST", "/v1/webhook-endpoints/"+ep+"/test", h.keyB, nil).Expect(t, 404)
	h.do("GET", "/v1/webhook-endpoints/"+ep+"/deliveries", h.keyB, nil).Expect(t, 404)
	h.do("POST", path, h.keyB, nil).Expect(t, 404)
	h.do("POST", "/v1/webhook-endpoints/whe_nope/test", h.keyA, nil).Expect(t, 404)
	h.do("POST", "/v1/webhook-endpoints/"+ep+"/deliveries/dlv_nope/retry", h.keyA, nil).Expect(t, 404)
	h.do("POST", "/v1/webhook-endpoints/"+ep+"/deliveries/nope/retry", h.keyA, nil).Expect(t, 422)
	h.do("GET", "/v1/webhook-endpoints/"+ep+"/deliveries?limit=0", h.keyA, nil).Expect(t, 400)
	h.do("GET", "/v1/webhook-endpoints/"+ep+"/deliveries?limit=101", h.keyA, nil).Expect(t, 400)
	h.do("GET", "/v1/webhook-endpoints/"+ep+"/deliveries?limit=1", h.keyA, nil).Expect(t, 200)
	h.do("POST", "/v1/webhook-endpoints/x/test", h.keyA, nil).Expect(t, 422)

	// The log, a payload and a retry read the delivery beside the
	// endpoint: another account's endpoint, or a deleted one whose
	// deliveries are still stored, is the endpoint's 404, and nothing of
	// the delivery shows.
	payload := "/v1/webhook-endpoints/" + ep + "/deliveries/" + dlv + "/payload"
	h.do("GET", payload, h.keyA, nil).Expect(t, 200)
	h.do("DELETE", "/v1/webhook-endpoints/"+ep, h.keyA, nil).Expect(t, 204)
	if _, err := h.stores.Deliveries.GetDelivery(ctx, "acct_a", ep, dlv); err != nil {
		t.Fatalf("the deleted endpoint's delivery: %v (the checks below need it stored)", err)
	}
	for _, c := range []struct{ method, path, key, message string }{
		{"GET", "/v1/webhook-endpoints/" + ep + "/deliveries", h.keyA, "webhook endpoint not found"},
		{"GET", payload, h.keyA, "webhook endpoint not found"},
		{"GET", payload, h.keyB, "webhook endpoint not found"},
		{"POST", path, h.keyA, "delivery not found"}, // a retry's 404 names the delivery, whatever is missing
	} {
		res := h.do(c.method, c.path, c.key, nil).Expect(t, 404)
		if body := res.JSON(t); body["message"] != c.message || len(body) != 2 {
			t.Errorf("%s %s: %v, want only the 404 %q", c.method, c.path, body, c.message)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
