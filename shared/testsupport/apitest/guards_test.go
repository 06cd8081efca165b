package apitest

import (
	"github.com/voiceops/opsapi/shared/testsupport/spectest"

	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/idempotency"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
)

// send serves a request with the given headers and checks the answer
// against the OpenAPI document.
func (h *harness) send(method, path string, headers map[string]string, body string) response {
	h.t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader([]byte(body)))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	res := response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if err := spectest.Validator(h.t).Check(req, res.Status, res.Header, res.Body); err != nil {
		h.t.Errorf("%s %s -> %d %s: response does not match the OpenAPI document: %v", method, path, res.Status, res.Body, err)
	}
	return res
}

func TestRateLimitPerKey(t *testing.T) {
	h := newHarness(t)
	l := ratelimit.Default
	for i := range l.Burst {
		res := h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 200)
		if got, want := res.Header.Get("RateLimit"), `"key";r=`+itoa(l.Burst-1-i)+`;t=`; !strings.HasPrefix(got, want) {
			t.Fatalf("request %d: RateLimit %q, want prefix %q", i+1, got, want)
		}
		if got := res.Header.Get("RateLimit-Policy"); got != `"key";q=50;w=2` {
			t.Fatalf("RateLimit-Policy %q", got)
		}
	}
	res := h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 429)
	if res.Header.Get("Retry-After") != "1" || res.Header.Get("RateLimit") != `"key";r=0;t=2` {
		t.Errorf("429 headers: Retry-After %q RateLimit %q", res.Header.Get("Retry-After"), res.Header.Get("RateLimit"))
	}
	if m := res.JSON(t)["message"].(string); !strings.Contains(m, "rate limit exceeded") || res.JSON(t)["request_id"] == nil {
		t.Errorf("429 body %s", res.Body)
	}
	// A refused create creates nothing.
	h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Expect(t, 429)
	if n, _ := h.stores.Rules.ListRules(context.Background(), "acct_a"); len(n) != 0 {
		t.Errorf("%d rules after a refused create", len(n))
	}

	// Other keys, of this tenant or another, have their own buckets.
	h.do("GET", "/v1/alert-rules", h.keyB, nil).Expect(t, 200)
	h.trigger(h.service, `{"to_number":"+447911123456"}`).Expect(t, 200)

	// One interval (40 ms at 25 a second) later, one more request.
	h.clock.Advance(40 * time.Millisecond)
	h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 200)
	h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 429)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestRateLimitBaseHostShape(t *testing.T) {
	h := newHarness(t)
	if err := h.requests.SetAccountLimit(context.Background(), "acct_a", &ratelimit.Limit{Rate: 1, Burst: 2}); err != nil {
		t.Fatal(err)
	}
	h.trigger(h.service, `{"to_number":"+447911123456"}`).Expect(t, 200)
	h.callStatus(h.service, "CA00000000000000000000000000000000").Expect(t, 404)
	res := h.trigger(h.service, `{"to_number":"+447911123456"}`).Expect(t, 429)
	wantBaseError(t, res)
	if res.Header.Get("Retry-After") != "1" || res.Header.Get("RateLimit-Policy") != `"key";q=2;w=2` {
		t.Errorf("429 headers %v", res.Header)
	}
	// acct_b has no override: the default.
	if got := h.do("GET", "/v1/alert-rules", h.keyB, nil).Header.Get("RateLimit-Policy"); got != `"key";q=50;w=2` {
		t.Errorf("acct_b policy %q", got)
	}
}

// A create-like route as a test drives it: one request with an
// Idempotency-Key, and the number of records the route has created.
type createCase struct {
	name    string
	method  string
	path    string
	headers map[string]string
	body    string
	other   string // another body
	status  int
	count   func(*harness) int
}

func createCases(t *testing.T, h *harness) []createCase {
	ctx := context.Background()
	id := h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(t, 201).JSON(t)["id"].(string)
	if err := h.store.DNI().AddNumbers(ctx, "acct_a", "proj_a1", []string{"+441632960100", "+441632960101", "+441632960102"}, 0); err != nil {
		t.Fatal(err)
	}
	rules := func(h *harness) int { l, _ := h.stores.Rules.ListRules(ctx, "acct_a"); return len(l) }
	endpoints := func(h *harness) int { l, _ := h.stores.Endpoints.ListEndpoints(ctx, "acct_a"); return len(l) }
	key := map[string]string{"x-api-key": h.keyA}
	return []createCase{
		{"alert rule", "POST", "/v1/alert-rules", key, `{"name":"p95","metric":"turn_latency_p95","operator":">","threshold_value":1500,"window_duration":"5m"}`,
			`{"name":"p95","metric":"turn_latency_p95","operator":">","threshold_value":1600,"window_duration":"5m"}`, 201, rules},
		{"webhook endpoint", "POST", "/v1/webhook-endpoints", key, `{"name":"pager","url":"https://hooks.example.com/a","event_types":["alerts.triggered"]}`,
			`{"name":"pager","url":"https://hooks.example.com/b","event_types":["alerts.triggered"]}`, 201, endpoints},
		{"rotate secret", "POST", "/v1/webhook-endpoints/" + id + "/rotate-secret", key, `{}`, `{"expire_current_in":"1h"}`, 200, nil},
		{"test event", "POST", "/v1/webhook-endpoints/" + id + "/test", key, ``, `{}`, 202, nil},
		{"chat create", "POST", "/v1/acct_a/proj_a1/chat/create", map[string]string{"X-API-KEY": h.keyA, "X-TOKEN": h.agent}, `{}`, `{"channel":"webchat"}`, 200, nil},
		{"outbound trigger", "POST", "/v1/outbound-calling/trigger", map[string]string{"X-Service-Auth-Token": h.service}, `{"to_number":"+447911123456"}`,
			`{"to_number":"+447911123457"}`, 200, nil}, // one call: TestIdempotencyOutboundTriggerPlacesOneCall
		{"DNI reservation", "POST", "/v1/conversations/dni-reservation", map[string]string{"x-api-key": h.projKey}, `{"attributes":{"o":1}}`, `{"attributes":{"o":2}}`, 200, nil},
	}
}

func TestIdempotencyKeyReplaysTheFirstResponse(t *testing.T) {
	h := newHarness(t)
	for _, c := range createCases(t, h) {
		t.Run(c.name, func(t *testing.T) {
			withKey := func(k string) map[string]string {
				m := map[string]string{idempotency.Header: k}
				for n, v := range c.headers {
					m[n] = v
				}
				return m
			}
			before := 0
			if c.count != nil {
				before = c.count(h)
			}
			first := h.send(c.method, c.path, withKey("k-"+strings.ReplaceAll(c.name, " ", "-")), c.body).Expect(t, c.status)
			if first.Header.Get(idempotency.ReplayedHeader) != "" {
				t.Errorf("first response marked replayed")
			}
			again := h.send(c.method, c.path, withKey("k-"+strings.ReplaceAll(c.name, " ", "-")), c.body).Expect(t, c.status)
			if !bytes.Equal(again.Body, first.Body) || again.Header.Get(idempotency.ReplayedHeader) != "true" ||
				again.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
				t.Errorf("replay %s %v\nwant %s", again.Body, again.Header, first.Body)
			}
			if c.count != nil {
				if got := c.count(h); got != before+1 {
					t.Errorf("%d records created, want 1", got-before)
				}
			}
			// Another body with the key: 422 in the route's shape, nothing done.
			other := h.send(c.method, c.path, withKey("k-"+strings.ReplaceAll(c.name, " ", "-")), c.other).Expect(t, 422)
			if !strings.Contains(string(other.Body), "Idempotency-Key was used") {
				t.Errorf("422 body %s", other.Body)
			}
			if c.count != nil && c.count(h) != before+1 {
				t.Errorf("the 422 created a record")
			}
			// Another key runs the request again.
			fresh := h.send(c.method, c.path, withKey("k2-"+strings.ReplaceAll(c.name, " ", "-")), c.body)
			if fresh.Header.Get(idempotency.ReplayedHeader) != "" {
				t.Errorf("a new key was answered with a replay")
			}
		})
	}
}

func TestIdempotencyOutboundTriggerPlacesOneCall(t *testing.T) {
	h := newHarness(t)
	hdr := map[string]string{"X-Service-Auth-Token": h.service, idempotency.Header: "call-1"}
	first := h.send("POST", "/v1/outbound-calling/trigger", hdr, `{"to_number":"+447911123456"}`).Expect(t, 200).JSON(t)["callSid"]
	again := h.send("POST", "/v1/outbound-calling/trigger", hdr, `{"to_number":"+447911123456"}`).Expect(t, 200).JSON(t)["callSid"]
	if first != again {
		t.Fatalf("replayed callSid %v, want %v", again, first)
	}
	// Never dialed twice: the replay queued no second dial job.
	if jobs := h.dials.sent(); len(jobs) != 1 || jobs[0].SID != first {
		t.Errorf("dial jobs %+v, want one for %v", jobs, first)
	}
	// The other project's service key has its own keys.
	hdr2 := map[string]string{"X-Service-Auth-Token": h.service2, idempotency.Header: "call-1"}
	if other := h.send("POST", "/v1/outbound-calling/trigger", hdr2, `{"to_number":"+447911123456"}`).Expect(t, 200); other.Header.Get(idempotency.ReplayedHeader) != "" {
		t.Errorf("another key's request replayed: %s", other.Body)
	}
}

func TestIdempotencyScopedToTheKey(t *testing.T) {
	h := newHarness(t)
	keyA2, _, err := h.prov.CreateKey(context.Background(), "api", "acct_a", "")
	if err != nil {
		t.Fatal(err)
	}
	body := `{"name":"p95","metric":"turn_latency_p95","operator":">","threshold_value":1500,"window_duration":"5m"}`
	for _, k := range []string{h.keyA, keyA2, h.keyB} {
		res := h.send("POST", "/v1/alert-rules", map[string]string{"x-api-key": k, idempotency.Header: "same"}, body).Expect(t, 201)
		if res.Header.Get(idempotency.ReplayedHeader) != "" {
			t.Errorf("key %s... got another key's response", k[:8])
		}
	}
	if l, _ := h.stores.Rules.ListRules(context.Background(), "acct_a"); len(l) != 2 {
		t.Errorf("acct_a has %d rules, want 2", len(l))
	}
}

func TestIdempotencyErrorsAreReplayedToo(t *testing.T) {
	h := newHarness(t)
	hdr := map[string]string{"x-api-key": h.keyA, idempotency.Header: "bad"}
	first := h.send("POST", "/v1/alert-rules", hdr, `{"name":""}`).Expect(t, 422)
	// The store changed meanwhile; the key still answers what it answered.
	again := h.send("POST", "/v1/alert-rules", hdr, `{"name":""}`).Expect(t, 422)
	if !bytes.Equal(first.Body, again.Body) || again.Header.Get(idempotency.ReplayedHeader) != "true" ||
		again.Header.Get("X-Request-Id") != first.Header.Get("X-Request-Id") {
		t.Errorf("replay %s, want %s", again.Body, first.Body)
	}
}

func TestIdempotencyKeyValidation(t *testing.T) {
	h := newHarness(t)
	for _, k := range []string{strings.Repeat("k", 256), "has space", "tab\tkey", "é"} {
		res := h.send("POST", "/v1/alert-rules", map[string]string{"x-api-key": h.keyA, idempotency.Header: k}, `{}`).Expect(t, 400)
		if f := res.FieldErrors(t); len(f) != 1 || f[0] != idempotency.Header {
			t.Errorf("key %q: fields %v", k, f)
		}
	}
	h.send("POST", "/v1/alert-rules", map[string]string{"x-api-key": h.keyA, idempotency.Header: strings.Repeat("k", 255)}, `{"name":"x"}`).Expect(t, 422)
	// On a route that is not create-like the header is ignored.
	h.send("GET", "/v1/alert-rules", map[string]string{"x-api-key": h.keyA, idempotency.Header: "has space"}, ``).Expect(t, 200)
}

// failingFinish is the memory store whose Finish fails, as when the
// function crashes between the work and the record.
type failingFinish struct{ *memoryRequests }

type memoryRequests = struct{ httpapi.GuardStore }

func (f failingFinish) Finish(context.Context, idempotency.Scope, string, idempotency.Response) error {
	return errors.New("crashed")
}

func TestIdempotencyInFlightAndCrash(t *testing.T) {
	h := newHarness(t)
	h.deps.Guards = httpapi.Guards{Limiter: h.deps.Guards.Limiter, Idempotency: failingFinish{&memoryRequests{h.requests}}}
	h.h = All(h.deps)
	hdr := map[string]string{"x-api-key": h.keyA, idempotency.Header: "crash"}
	body := `{"name":"p95","metric":"turn_latency_p95","operator":">","threshold_value":1500,"window_duration":"5m"}`
	h.send("POST", "/v1/alert-rules", hdr, body).Expect(t, 201)
	// The record was never finished: while its lease runs, the request is
	// in flight; after it, its outcome is unknown. Neither runs it again.
	busy := h.send("POST", "/v1/alert-rules", hdr, body).Expect(t, 409)
	if !strings.Contains(string(busy.Body), "still in progress") {
		t.Errorf("409 body %s", busy.Body)
	}
	h.clock.Advance(idempotency.Lease)
	gone := h.send("POST", "/v1/alert-rules", hdr, body).Expect(t, 409)
	if !strings.Contains(string(gone.Body), "without an answer") {
		t.Errorf("409 body %s", gone.Body)
	}
	if l, _ := h.stores.Rules.ListRules(context.Background(), "acct_a"); len(l) != 1 {
		t.Errorf("%d rules, want 1: a replay ran the create again", len(l))
	}
	// After 24 hours the key is free again.
	h.clock.Advance(idempotency.TTL)
	h.send("POST", "/v1/alert-rules", hdr, body).Expect(t, 201)
}

func TestIdempotencyExternalEvent(t *testing.T) {
	h := newEventsHarness(t)
	path := webhookURL("payload", "ref", "acct_a", "proj_a1")
	hdr := map[string]string{"X-Api-Key": h.events, idempotency.Header: "evt-1"}
	body := `{"ref":"` + h.conv + `","n":1}`
	first := h.harness.send("POST", path, hdr, body).Expect(t, 201)
	calls := h.fn.count()
	again := h.harness.send("POST", path, hdr, body).Expect(t, 201)
	if !bytes.Equal(again.Body, first.Body) || again.Header.Get(idempotency.ReplayedHeader) != "true" {
		t.Errorf("replay %s %v, want %s", again.Body, again.Header, first.Body)
	}
	if n := h.fn.count(); n != calls {
		t.Errorf("the replay ran the project's function again (%d calls, want %d)", n, calls)
	}
	h.harness.send("POST", path, hdr, `{"ref":"`+h.conv+`","n":2}`).Expect(t, 422)
}

func (r *recordingRunner) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

type downLimiter struct{}

func (downLimiter) Take(context.Context, string, string) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("table unavailable")
}

type downIdempotency struct{ idempotency.Store }

func (downIdempotency) Begin(context.Context, idempotency.Record, time.Time) (idempotency.Record, bool, error) {
	return idempotency.Record{}, false, errors.New("table unavailable")
}

// The limiter fails open; the Idempotency-Key fails closed (docs/decisions.md,
// "Failure behaviour").
func TestGuardsWhenTheirStoreFails(t *testing.T) {
	h := newHarness(t)
	h.deps.Guards = httpapi.Guards{Limiter: downLimiter{}, Idempotency: downIdempotency{h.requests}}
	h.h = All(h.deps)
	for range ratelimit.Default.Burst + 10 {
		if res := h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 200); res.Header.Get("RateLimit") != "" {
			t.Fatalf("RateLimit header without a decision: %v", res.Header)
		}
	}
	body := `{"name":"p95","metric":"turn_latency_p95","operator":">","threshold_value":1500,"window_duration":"5m"}`
	h.send("POST", "/v1/alert-rules", map[string]string{"x-api-key": h.keyA, idempotency.Header: "k"}, body).Expect(t, 500)
	if l, _ := h.stores.Rules.ListRules(context.Background(), "acct_a"); len(l) != 0 {
		t.Errorf("%d rules created without an idempotency record", len(l))
	}
	// Without the header the create is not guarded, and goes on.
	h.send("POST", "/v1/alert-rules", map[string]string{"x-api-key": h.keyA}, body).Expect(t, 201)
}

// A key refused for another tenant's paths still spends its own budget.
func TestRateLimitCountsRefusedTargets(t *testing.T) {
	h := newHarness(t)
	for range ratelimit.Default.Burst {
		if res := h.do("GET", "/v3/acct_a/proj_a1/conversations", h.keyB, nil).Expect(t, 403); res.Header.Get("RateLimit") == "" {
			t.Fatalf("403 without RateLimit: %v", res.Header)
		}
	}
	h.do("GET", "/v3/acct_a/proj_a1/conversations", h.keyB, nil).Expect(t, 429)
	h.do("GET", "/v1/alert-rules", h.keyB, nil).Expect(t, 429)
	h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 200)
}
