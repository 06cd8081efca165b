package apitest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Findings of the adversarial suite that live in the HTTP floor.

// TestNonCanonicalPathsAreJSON404: the mux would clean these paths and
// redirect (307, text/html, no X-Request-Id) to another route.
func TestNonCanonicalPathsAreJSON404(t *testing.T) {
	h := newHarness(t)
	h.check = false
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/alert-rules/../webhook-endpoints"},
		{"GET", "/v1//alert-rules"},
		{"POST", "/v1//alert-rules"},
		{"GET", "/v1/./alerts"},
		{"GET", "/v1/alert-rules/"},
		{"GET", "/v1/acct_a/proj_a1/../proj_a2/conversations"},
		{"POST", "/v1/outbound-calling//trigger"},
	} {
		res := h.do(c.method, c.path, h.keyA, nil)
		if res.Status != http.StatusNotFound || res.Header.Get("Location") != "" || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: %d %v %s", c.method, c.path, res.Status, res.Header, res.Body)
		}
	}
	// The same through the Lambda adapter.
	lh := httpapi.LambdaHandler(h.h)
	res, err := lh(context.Background(), benchEvent("GET", "/v1//alert-rules", h.keyA, ""))
	if err != nil || res.StatusCode != 404 || res.Headers["X-Request-Id"] == "" {
		t.Errorf("Lambda: %d %v %v", res.StatusCode, res.Headers, err)
	}
}

// TestInvalidUTF8BodiesAre400: JSON text must be UTF-8 (RFC 8259); the
// bytes are refused, never rewritten as U+FFFD.
func TestInvalidUTF8BodiesAre400(t *testing.T) {
	h := newHarness(t)
	body := `{"name":"bad ` + "\xff\xfe" + `","metric":"api_errors","operator":">","threshold_value":1,"window_duration":"5m"}`
	res := h.do("POST", "/v1/alert-rules", h.keyA, body).Expect(t, 400)
	if !strings.Contains(string(res.Body), "UTF-8") {
		t.Errorf("body %s", res.Body)
	}
	if rules, _ := h.stores.Rules.ListRules(context.Background(), "acct_a"); len(rules) != 0 {
		t.Errorf("stored %+v", rules)
	}
	// The base host: 400 in its shape.
	req := httptest.NewRequest("POST", "/v1/acct_a/proj_a1/chat/create", strings.NewReader(`{"integration_attributes":{"a":"`+"\xc3"+`"}}`))
	req.Header.Set("X-API-KEY", h.keyA)
	req.Header.Set("X-TOKEN", h.agent)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"error_message":"request body is not valid UTF-8`) {
		t.Errorf("the base host: %d %s", rec.Code, rec.Body)
	}
}

// TestHeaderValuesMustBeStrings: a null header value is 422, not "".
func TestHeaderValuesMustBeStrings(t *testing.T) {
	h := newHarness(t)
	for _, headers := range []string{`{"X-A": null}`, `{"X-A": 1}`, `{"X-A": ["v"]}`} {
		body := `{"name":"n","url":"https://hooks.example.com/x","event_types":["alerts.triggered"],"headers":` + headers + `}`
		res := h.do("POST", "/v1/webhook-endpoints", h.keyA, body).Expect(t, 422)
		if f := res.FieldErrors(t); len(f) != 1 || f[0] != "headers" {
			t.Errorf("%s: fields %v", headers, f)
		}
	}
	if eps, _ := h.stores.Endpoints.ListEndpoints(context.Background(), "acct_a"); len(eps) != 0 {
		t.Errorf("stored %+v", eps)
	}
}

// slowRules blocks every read until the request's context ends.
type slowRules struct{ voiceops.RuleStore }

func (slowRules) ListRules(ctx context.Context, _ string) ([]voiceops.AlertRule, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestRequestsHaveADeadline: a store that never answers costs a request
// its deadline, not API Gateway's 30 s; the api_errors write runs in the
// background and never holds the answer.
func TestRequestsHaveADeadline(t *testing.T) {
	h := newHarnessWith(t, func(s voiceops.Stores) voiceops.Stores { s.Rules = slowRules{s.Rules}; return s })
	release := make(chan struct{})
	recorded := make(chan string, 1)
	d := h.deps
	d.Metrics = nil
	cfg := d.config()
	cfg.Deadline = 50 * time.Millisecond
	cfg.Background = func(f func()) { go f() }
	cfg.CountError = func(ctx context.Context, accountID, _ string, _ time.Time) error {
		<-release // a metrics table as slow as the rest
		recorded <- accountID
		return nil
	}
	srv := httpapi.New(cfg, d.studio()...)
	req := httptest.NewRequest("GET", "/v1/alert-rules", nil)
	req.Header.Set("x-api-key", h.keyA)
	rec := httptest.NewRecorder()
	start := time.Now()
	srv.ServeHTTP(rec, req)
	if took := time.Since(start); rec.Code != 500 || took > 2*time.Second {
		t.Fatalf("%d after %v: %s", rec.Code, took, rec.Body)
	}
	close(release)
	select {
	case a := <-recorded:
		if a != "acct_a" {
			t.Errorf("api_errors of %s", a)
		}
	case <-time.After(5 * time.Second):
		t.Error("the api_errors event was never recorded")
	}
}
