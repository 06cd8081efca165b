package apitest

import (
	"context"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/idempotency"
)

// Strict input: an empty Idempotency-Key, and repeated
// JSON object keys.

// TestEmptyIdempotencyKeyIs400: a header sent empty is a malformed key,
// never "no key" (which would run each retry again), on both hosts and in
// each host's error shape; nothing is created.
func TestEmptyIdempotencyKeyIs400(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	for range 2 {
		res := h.send("POST", "/v1/alert-rules", map[string]string{"x-api-key": h.keyA, idempotency.Header: ""}, benchRuleBody).Expect(t, 400)
		if f := res.FieldErrors(t); len(f) != 1 || f[0] != idempotency.Header {
			t.Errorf("the studio host: fields %v in %s", f, res.Body)
		}
		res = h.send("POST", "/v1/outbound-calling/trigger", map[string]string{"X-Service-Auth-Token": h.service, idempotency.Header: ""}, `{"to_number":"+14155550100"}`).Expect(t, 400)
		if msg, _ := res.JSON(t)["error_message"].(string); !strings.Contains(msg, "Idempotency-Key must be 1 to 255") {
			t.Errorf("the base host: %s", res.Body)
		}
		h.send("POST", "/v1/acct_a/proj_a1/chat/create", map[string]string{"X-API-KEY": h.keyA, "X-TOKEN": h.agent, idempotency.Header: ""}, `{}`).Expect(t, 400)
	}
	if rules, _ := h.stores.Rules.ListRules(ctx, "acct_a"); len(rules) != 0 {
		t.Errorf("created %d rules", len(rules))
	}
	if jobs := h.dials.sent(); len(jobs) != 0 {
		t.Errorf("queued %d calls", len(jobs))
	}
	// Through the Lambda adapter, as API Gateway hands an empty header.
	ev := benchEvent("POST", "/v1/alert-rules", h.keyA, benchRuleBody)
	ev.Headers[strings.ToLower(idempotency.Header)] = ""
	res, err := httpapi.LambdaHandler(h.h)(ctx, ev)
	if err != nil || res.StatusCode != 400 || !strings.Contains(res.Body, idempotency.Header) {
		t.Errorf("Lambda: %d %s %v", res.StatusCode, res.Body, err)
	}
	// Printable keys of 1 and 255 characters are keys.
	for _, k := range []string{"k", strings.Repeat("~", 255)} {
		h.send("POST", "/v1/outbound-calling/trigger", map[string]string{"X-Service-Auth-Token": h.service, idempotency.Header: k}, `{"to_number":"+14155550100"}`).Expect(t, 200)
	}
}

// TestRepeatedKeysAre400: a JSON body that repeats an object key, at any
// depth, is 400 on both hosts and changes nothing (encoding/json would let
// the last one win: the dialed the second number).
func TestRepeatedKeysAre400(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	studioCases := []struct{ path, body, field string }{
		{"/v1/alert-rules", `{"name":"a","name":"b","metric":"api_errors","operator":">","threshold_value":1,"window_duration":"5m"}`, "name"},
		{"/v1/alert-rules", `{"name":"a","metric":"api_errors","operator":">","threshold_value":1,"window_duration":"5m","\u006eame":"b"}`, "name"},
		{"/v1/webhook-endpoints", `{"name":"n","url":"https://hooks.example.com/x","event_types":["alerts.triggered"],"headers":{"X-A":"1","X-A":"2"}}`, "headers.X-A"},
	}
	for _, c := range studioCases {
		res := h.do("POST", c.path, h.keyA, c.body).Expect(t, 400)
		m := res.JSON(t)
		if f := res.FieldErrors(t); m["message"] != "request body repeats an object key" || len(f) != 1 || f[0] != c.field {
			t.Errorf("%s %s: %s", c.path, c.body, res.Body)
		}
	}
	if rules, _ := h.stores.Rules.ListRules(ctx, "acct_a"); len(rules) != 0 {
		t.Errorf("stored %d rules", len(rules))
	}
	if eps, _ := h.stores.Endpoints.ListEndpoints(ctx, "acct_a"); len(eps) != 0 {
		t.Errorf("stored %d endpoints", len(eps))
	}
	for body, field := range map[string]string{
		`{"to_number":"+14155550001","to_number":"+14155550100"}`:                         "to_number",
		`{"to_number":"+14155550100","metadata":{"first_name":"Ada","first_name":"Bob"}}`: "metadata.first_name",
	} {
		res := h.trigger(h.service, body).Expect(t, 400)
		if msg, _ := res.JSON(t)["error_message"].(string); msg != "request body repeats an object key: "+field+" is repeated (the keys of a JSON object must be unique)" {
			t.Errorf("%s: %s", body, res.Body)
		}
	}
	if jobs := h.dials.sent(); len(jobs) != 0 {
		t.Errorf("a refused trigger queued %d dial jobs", len(jobs))
	}
	req := map[string]string{"X-API-KEY": h.keyA, "X-TOKEN": h.agent}
	h.send("POST", "/v1/acct_a/proj_a1/chat/create", req, `{"integration_attributes":{"a":[{"b":1,"b":2}]}}`).Expect(t, 400)
}

// TestRepeatedKeysInAnExternalEvent: an external event's JSON body is a
// JSON request body too, whatever the event ID is read from.
func TestRepeatedKeysInAnExternalEvent(t *testing.T) {
	h := newEventsHarness(t)
	for _, loc := range []string{"payload", "headers"} {
		path := webhookURL(loc, "ref", "acct_a", "proj_a1")
		hdr := map[string]string{"X-Api-Key": h.events, "ref": h.conv}
		calls := h.fn.count()
		res := h.harness.send("POST", path, hdr, `{"ref":"`+h.conv+`","amount":{"v":1,"v":100}}`).Expect(t, 400)
		if msg, _ := res.JSON(t)["error_message"].(string); !strings.Contains(msg, "amount.v is repeated") {
			t.Errorf("%s: %s", loc, res.Body)
		}
		if h.fn.count() != calls {
			t.Errorf("%s: the refused event reached the project's function", loc)
		}
		h.harness.send("POST", path, hdr, `{"ref":"`+h.conv+`","amount":{"v":1}}`).Expect(t, 201)
	}
}
