package apitest

import (
	"github.com/voiceops/opsapi/shared/testsupport/spectest"

	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/platform/idempotency"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// fuzzRoute is one route as FuzzRoutes calls it: a concrete path and the
// headers that authenticate it.
type fuzzRoute struct {
	method, path string
	headers      map[string]string
}

// FuzzRoutes sends any body, query, content type and Idempotency-Key to
// every route of both hosts that reads one (the JSON bodies, the query
// parsers, the external event ID extraction, the Idempotency-Key) and holds
// the answer to the contract: never a 5xx but 501, always documented in the
// OpenAPI document (status, shape, headers).
func FuzzRoutes(f *testing.F) {
	f.Add(uint8(0), "", []byte(`{"name":"p95","metric":"turn_latency_p95","operator":">","threshold_value":1500,"window_duration":"5m"}`), uint8(0), "k1")
	f.Add(uint8(1), "enabled=true&metric=api_errors", []byte(nil), uint8(0), "")
	f.Add(uint8(3), "", []byte(`{"name":"e","url":"https://127.1/","event_types":["alerts.triggered"],"headers":{"X-A":"1"}}`), uint8(0), "k2")
	f.Add(uint8(8), "", []byte(`{"channel":"webchat","integration_attributes":{"a":[1,{"b":null}]}}`), uint8(0), "")
	f.Add(uint8(9), "", []byte(`{"conversation_id":"conv_x","message":"hi"}`), uint8(0), "")
	f.Add(uint8(11), "", []byte(`{"to_number":"+447911123456","metadata":{"n":1e400}}`), uint8(0), "k3")
	f.Add(uint8(13), "event_id_location=payload&event_id_path=a.b&account_id=acct_a&project_id=proj_a1", []byte(`<a><b>x</b></a>`), uint8(2), "")
	f.Add(uint8(13), "event_id_location=payload&event_id_path=id", []byte(`id=1&x=%zz`), uint8(1), "")
	f.Add(uint8(15), "limit=0&offset=-1&start_time=2026-13-01", []byte(nil), uint8(0), "")
	f.Add(uint8(16), "start_time=2026-11-22T00:00:00Z&end_time=2026-11-23T00:00:00Z&slice_by=variant", []byte(nil), uint8(0), "")
	f.Add(uint8(6), "", []byte(`{"events":[{"account_id":"acct_a","metric":"turn_latency","value":1e308}]}`), uint8(0), "")
	f.Add(uint8(12), "", []byte(`{"attributes":{"o":"\ud800"}}`), uint8(0), "has space")
	f.Add(uint8(28), "limit=5&cursor=1764000000000_3", []byte(nil), uint8(0), "")
	f.Add(uint8(29), "metric=turn_latency_p95&project_id=proj_a1&from=2026-11-21T10:00:00Z&step=15m", []byte(nil), uint8(0), "")
	f.Add(uint8(30), "", []byte(`{"name":"p","metric":"api_errors","operator":">","threshold_value":1,"window_duration":"5m","from":"2026-11-22T09:00:00Z","to":"2026-11-22T10:00:00Z"}`), uint8(0), "")

	h := newHarness(f)
	metrics := memory.NewMetrics()
	metrics.Now = h.clock.Now
	h.deps.Metrics = &buckets.Recorder{Store: metrics}
	rollups := memory.NewRollups()
	rollups.Now = h.clock.Now
	h.deps.Series = &series.Reader{Minutes: metrics, Hours: rollups, Now: h.clock.Now}
	h.withoutRateLimit() // one instant of the fake clock: far past any burst
	ctx := context.Background()
	events, _, err := h.prov.CreateKey(ctx, voiceops.KeyEvents, "acct_a", "proj_a1")
	if err != nil {
		f.Fatal(err)
	}
	ep := h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(f, 201).JSON(f)["id"].(string)
	rule := h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Expect(f, 201).JSON(f)["id"].(string)
	api := map[string]string{"x-api-key": h.keyA}
	chat := map[string]string{"x-api-key": h.keyA, "X-TOKEN": h.agent}
	internal := map[string]string{"X-Internal-Key": testInternalKey}
	routes := []fuzzRoute{
		{"POST", "/v1/alert-rules", api},
		{"GET", "/v1/alert-rules", api},
		{"PATCH", "/v1/alert-rules/" + rule, api},
		{"POST", "/v1/webhook-endpoints", api},
		{"PATCH", "/v1/webhook-endpoints/" + ep, api},
		{"POST", "/v1/webhook-endpoints/" + ep + "/rotate-secret", api},
		{"POST", "/internal/v1/metric-events", internal},
		{"GET", "/v1/webhook-endpoints/" + ep + "/deliveries", api},
		{"POST", "/v1/acct_a/proj_a1/chat/create", chat},
		{"POST", "/v1/acct_a/proj_a1/chat/respond", chat},
		{"PUT", "/v1/acct_a/proj_a1/chat/close", chat},
		{"POST", "/v1/outbound-calling/trigger", map[string]string{"X-Service-Auth-Token": h.service}},
		{"POST", "/v1/conversations/dni-reservation", map[string]string{"x-api-key": h.projKey}},
		{"POST", "/v1/external-events/webhook", map[string]string{"X-Api-Key": events}},
		{"POST", "/internal/v1/agentic-dial/bridge-ended", map[string]string{"X-Api-Key": events}},
		{"GET", "/v3/acct_a/proj_a1/conversations", api},
		{"GET", "/v1/acct_a/proj_a1/conversations/concurrency", api},
		{"GET", "/v1/acct_a/proj_a1/handoff_state", api},
		{"POST", "/internal/v1/voice/calls", internal},
		{"GET", "/v1/alerts", api},
		{"GET", "/v1/webhook-endpoints", api},
		{"GET", "/v1/acct_a/proj_a1/conversations", api},
		{"POST", "/internal/v1/voice/calls/conv_0000000000000000000000/turns", internal},
		{"POST", "/internal/v1/voice/calls/conv_0000000000000000000000/end", internal},
		{"POST", "/internal/v1/outbound-calling/CA00000000000000000000000000000000/status", internal},
		{"GET", "/v1/outbound-calling/CA00000000000000000000000000000000/status", map[string]string{"X-Service-Auth-Token": h.service}},
		{"POST", "/v1/webhook-endpoints/" + ep + "/test", api},
		{"POST", "/v1/webhook-endpoints/" + ep + "/deliveries/dlv_0000000000000000000000/retry", api},
		// Our additions.
		{"GET", "/v1/alert-rules/" + rule + "/history", api},
		{"GET", "/v1/metrics", api},
		{"POST", "/v1/alert-rules/preview", api},
	}
	contentTypes := []string{"application/json", "application/x-www-form-urlencoded", "application/xml", "text/plain", ""}
	validator := spectest.Validator(f)
	f.Fuzz(func(t *testing.T, route uint8, query string, body []byte, ct uint8, idemKey string) {
		rt := routes[int(route)%len(routes)]
		req := httptest.NewRequest(rt.method, rt.path, bytes.NewReader(body))
		req.URL.RawQuery = strings.Map(func(r rune) rune {
			if r <= ' ' || r == 0x7f || r == '#' {
				return -1
			}
			return r
		}, query)
		if c := contentTypes[int(ct)%len(contentTypes)]; c != "" && len(body) > 0 {
			req.Header.Set("Content-Type", c)
		}
		for k, v := range rt.headers {
			req.Header.Set(k, v)
		}
		if idemKey != "" && !strings.ContainsAny(idemKey, "\r\n\x00") {
			req.Header.Set(idempotency.Header, idemKey)
		}
		rec := httptest.NewRecorder()
		h.h.ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented {
			t.Fatalf("%s %s?%s %q -> %d %s", rt.method, rt.path, req.URL.RawQuery, body, rec.Code, rec.Body)
		}
		if err := validator.Check(req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
			t.Fatalf("%s %s?%s %q -> %d %s: not as documented: %v", rt.method, rt.path, req.URL.RawQuery, body, rec.Code, rec.Body, err)
		}
	})
}
