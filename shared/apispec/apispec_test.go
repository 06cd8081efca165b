package apispec

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// The operations the handlers of shared/api serve (doc 1 and DECISIONS.md).
var wantOperations = []string{
	"DELETE /v1/alert-rules/{rule_id}",
	"DELETE /v1/webhook-endpoints/{endpoint_id}",
	"GET /v1/alert-rules",
	"GET /v1/alert-rules/{rule_id}",
	"GET /v1/alerts",
	"GET /v1/webhook-endpoints",
	"GET /v1/webhook-endpoints/{endpoint_id}",
	"GET /v1/webhook-endpoints/{endpoint_id}/deliveries",
	"PATCH /v1/alert-rules/{rule_id}",
	"PATCH /v1/webhook-endpoints/{endpoint_id}",
	"POST /internal/v1/metric-events",
	"POST /v1/alert-rules",
	"POST /v1/webhook-endpoints",
	"POST /v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry",
	"POST /v1/webhook-endpoints/{endpoint_id}/rotate-secret",
	"POST /v1/webhook-endpoints/{endpoint_id}/test",
}

func TestDocumentLoadsAndValidates(t *testing.T) {
	if !json.Valid(Document()) {
		t.Fatal("openapi.json is not valid JSON")
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, Document(), "", "  "); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(pretty.Bytes()), bytes.TrimSpace(Document())) {
		t.Error("openapi.json is not pretty-printed with two-space indentation")
	}

	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(Document())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}

	var got []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			got = append(got, method+" "+path)
			for status, ref := range op.Responses.Map() {
				if h := ref.Value.Headers["X-Request-Id"]; h == nil || !h.Value.Required {
					t.Errorf("%s %s %s: no required X-Request-Id header", method, path, status)
				}
			}
			if (op.Security == nil || len(*op.Security) == 0) && len(doc.Security) == 0 {
				t.Errorf("%s %s: no security requirement", method, path)
			}
		}
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(wantOperations, "\n") {
		t.Errorf("operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantOperations, "\n"))
	}

	if _, err := NewValidator(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenAPISpecValidatorCLI(t *testing.T) {
	bin, err := exec.LookPath("openapi-spec-validator")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("openapi-spec-validator is not installed: %v", err)
		}
		t.Skipf("openapi-spec-validator is not installed (pip install openapi-spec-validator): %v", err)
	}
	out, err := exec.Command(bin, "openapi.json").CombinedOutput()
	if err != nil {
		t.Fatalf("openapi-spec-validator openapi.json: %v\n%s", err, out)
	}
	t.Logf("openapi-spec-validator: %s", bytes.TrimSpace(out))
}

// Fixtures: responses shaped exactly as shared/api writes them.

const reqID = "req_4fJ9kQ2mX7pL0aZ8bC3d"

func rule() map[string]any {
	return map[string]any{
		"id": "ar_3kTb9QxZ1mW7cY0pL2vN8d", "name": "Too many API errors", "project_id": nil,
		"metric": "api_errors", "operator": ">=", "threshold_value": 10, "window_duration": "5m",
		"enabled": true, "current_state": "ok",
		"created_at": "2026-11-22T14:00:00.000Z", "updated_at": "2026-11-22T14:00:00.000Z",
		"since": "2026-11-22T14:00:00.000Z", "last_evaluated_at": nil, "current_value": nil,
	}
}

func firingRule() map[string]any {
	r := rule()
	r["project_id"] = "proj_support"
	r["current_state"] = "alert"
	r["since"] = "2026-11-22T14:05:00.000Z"
	r["last_evaluated_at"] = "2026-11-22T14:05:00.000Z"
	r["current_value"] = 12
	return r
}

func activeAlert() map[string]any {
	return map[string]any{
		"alert_rule_id": "ar_3kTb9QxZ1mW7cY0pL2vN8d", "name": "Too many API errors", "metric": "api_errors",
		"operator": ">=", "threshold_value": 10, "window_duration": "5m", "since": "2026-11-22T14:05:00.000Z",
		"project_id": nil, "last_evaluated_at": "2026-11-22T14:05:00.000Z", "current_value": 12,
	}
}

func endpoint() map[string]any {
	return map[string]any{
		"id": "whe_7Hs2LmQ9xV0cK4tB1nR6pZ", "name": "Pager", "url": "https://hooks.example.com/voiceops",
		"event_types": []any{"alerts.triggered", "alerts.resolved"},
		"headers":     map[string]any{"Authorization": "Bearer abc"}, "timeout_ms": 5000, "enabled": true,
		"created_at": "2026-11-22T14:00:00.000Z", "updated_at": "2026-11-22T14:00:00.000Z",
	}
}

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw9Bb6eZKSxbY="

func createdEndpoint() map[string]any {
	e := endpoint()
	e["signing_secret"] = secret
	return e
}

func with(m map[string]any, key string, val any) map[string]any {
	m[key] = val
	return m
}

func without(m map[string]any, key string) map[string]any {
	delete(m, key)
	return m
}

func delivery() map[string]any {
	return map[string]any{
		"id": "dlv_9aLk2PzX4cVb7NmQ1wEr5t", "event_id": "evt_2bQm8ZkR4tW1yN6cV0pL3x", "event_type": "alerts.triggered",
		"test": false, "status": "pending", "created_at": "2026-11-22T14:05:00.000Z", "updated_at": "2026-11-22T14:05:00.000Z",
		"next_attempt_at": "2026-11-22T14:05:00.000Z", "attempts": []any{},
	}
}

func attempt(statusCode, errText any) map[string]any {
	return map[string]any{"number": 1, "at": "2026-11-22T14:05:00.000Z", "status_code": statusCode, "duration_ms": 12, "error": errText}
}

func failedDelivery() map[string]any {
	d := delivery()
	d["status"] = "failed"
	d["next_attempt_at"] = nil
	d["attempts"] = []any{attempt(400, "HTTP 400")}
	return d
}

func retriedDelivery() map[string]any {
	d := failedDelivery()
	d["status"] = "pending"
	d["test"] = true
	d["next_attempt_at"] = "2026-11-22T14:06:00.000Z"
	d["attempts"] = []any{attempt(nil, "timed out after 5s"), with(attempt(503, "HTTP 503"), "number", 2)}
	return d
}

func list(items ...map[string]any) map[string]any {
	data := make([]any, len(items))
	for i, it := range items {
		data[i] = it
	}
	return map[string]any{"data": data}
}

func validation(fields ...map[string]any) map[string]any {
	errs := make([]any, len(fields))
	for i, f := range fields {
		errs[i] = f
	}
	return map[string]any{"message": "validation failed", "errors": errs, "request_id": reqID}
}

func errBody(msg string) map[string]any {
	return map[string]any{"message": msg, "request_id": reqID}
}

func jsonHeader() http.Header {
	return http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {reqID}}
}

type checkCase struct {
	name   string
	method string
	url    string
	status int
	header http.Header // nil: jsonHeader()
	body   any         // nil: no body; []byte: raw; else marshalled
}

func (c checkCase) run(v *Validator) error {
	req := httptest.NewRequest(c.method, c.url, nil)
	h := c.header
	if h == nil {
		h = jsonHeader()
	}
	var body []byte
	switch b := c.body.(type) {
	case nil:
	case []byte:
		body = b
	default:
		var err error
		if body, err = json.Marshal(b); err != nil {
			panic(err)
		}
	}
	return v.Check(req, c.status, h, body)
}

func newValidator(t *testing.T) *Validator {
	t.Helper()
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const (
	local    = "http://127.0.0.1:43127"
	regional = "https://eu.studio.example.com"
	ruleURL  = local + "/v1/alert-rules/ar_3kTb9QxZ1mW7cY0pL2vN8d"
	epURL    = local + "/v1/webhook-endpoints/whe_7Hs2LmQ9xV0cK4tB1nR6pZ"
	retryURL = epURL + "/deliveries/dlv_9aLk2PzX4cVb7NmQ1wEr5t/retry"
	intake   = local + "/internal/v1/metric-events"
)

func TestCheckAccepts(t *testing.T) {
	v := newValidator(t)
	cases := []checkCase{
		{name: "create rule", method: "POST", url: local + "/v1/alert-rules", status: 201, body: rule()},
		{name: "get rule on a regional host", method: "GET", url: regional + "/v1/alert-rules/ar_3kTb9QxZ1mW7cY0pL2vN8d", status: 200, body: rule()},
		{name: "get rule on any host", method: "GET", url: "http://example.test:1/v1/alert-rules/ar_1", status: 200, body: rule()},
		{name: "get firing project rule", method: "GET", url: ruleURL, status: 200, body: firingRule()},
		{name: "get disabled rule", method: "GET", url: ruleURL, status: 200, body: with(with(rule(), "enabled", false), "current_state", "unknown")},
		{name: "patch rule", method: "PATCH", url: ruleURL, status: 200, body: firingRule()},
		{name: "list rules", method: "GET", url: local + "/v1/alert-rules?enabled=true&metric=api_errors", status: 200, body: list(rule(), firingRule())},
		{name: "empty list", method: "GET", url: local + "/v1/alert-rules", status: 200, body: list()},
		{name: "delete rule", method: "DELETE", url: ruleURL, status: 204, header: http.Header{"X-Request-Id": {reqID}}},
		{name: "active alerts", method: "GET", url: local + "/v1/alerts?project_id=proj_support", status: 200, body: list(activeAlert(), with(activeAlert(), "project_id", "proj_support"))},
		{name: "create endpoint", method: "POST", url: local + "/v1/webhook-endpoints", status: 201, body: createdEndpoint()},
		{name: "create endpoint without headers", method: "POST", url: local + "/v1/webhook-endpoints", status: 201, body: with(createdEndpoint(), "headers", map[string]any{})},
		{name: "get endpoint", method: "GET", url: epURL, status: 200, body: endpoint()},
		{name: "patch endpoint", method: "PATCH", url: epURL, status: 200, body: endpoint()},
		{name: "list endpoints", method: "GET", url: local + "/v1/webhook-endpoints?event_type=alerts.resolved", status: 200, body: list(endpoint(), endpoint())},
		{name: "delete endpoint", method: "DELETE", url: epURL, status: 204, header: http.Header{"X-Request-Id": {reqID}}},
		{name: "rotate without overlap", method: "POST", url: epURL + "/rotate-secret", status: 200, body: map[string]any{"signing_secret": secret, "previous_secret_expires_at": nil}},
		{name: "rotate with overlap", method: "POST", url: epURL + "/rotate-secret", status: 200, body: map[string]any{"signing_secret": secret, "previous_secret_expires_at": "2026-11-23T14:00:00.000Z"}},
		{name: "400 unreadable body", method: "POST", url: local + "/v1/alert-rules", status: 400, body: validation()},
		{name: "400 bad query", method: "GET", url: local + "/v1/alert-rules?metric=cpu", status: 400, body: validation(map[string]any{"field": "metric", "message": "must be one of: ..."})},
		{name: "401", method: "GET", url: local + "/v1/alerts", status: 401, body: errBody("missing or invalid API key")},
		{name: "403", method: "POST", url: epURL + "/rotate-secret", status: 403, body: errBody("this endpoint needs an account-scoped API key")},
		{name: "404", method: "DELETE", url: ruleURL, status: 404, body: errBody("alert rule not found")},
		{name: "409", method: "POST", url: local + "/v1/webhook-endpoints", status: 409, body: errBody("the account already has the maximum of 10 webhook endpoints")},
		{name: "413", method: "PATCH", url: epURL, status: 413, body: errBody("request body is larger than 1048576 bytes")},
		{name: "422 body", method: "PATCH", url: ruleURL, status: 422, body: validation(map[string]any{"field": "name", "message": "must not be null"})},
		{name: "422 malformed id", method: "GET", url: local + "/v1/webhook-endpoints/nope", status: 422, body: validation(map[string]any{"field": "endpoint_id", "message": "must match ^whe_[A-Za-z0-9]+$"})},
		{name: "500", method: "GET", url: local + "/v1/webhook-endpoints", status: 500, body: errBody("internal error")},
		{name: "test event", method: "POST", url: epURL + "/test", status: 202, body: map[string]any{"event_id": "evt_2bQm8ZkR4tW1yN6cV0pL3x", "delivery_id": "dlv_9aLk2PzX4cVb7NmQ1wEr5t"}},
		{name: "test event 404", method: "POST", url: epURL + "/test", status: 404, body: errBody("webhook endpoint not found")},
		{name: "test event 422", method: "POST", url: local + "/v1/webhook-endpoints/x/test", status: 422, body: validation(map[string]any{"field": "endpoint_id", "message": "must match ^whe_[A-Za-z0-9]+$"})},
		{name: "delivery log", method: "GET", url: epURL + "/deliveries?limit=3", status: 200, body: list(delivery(), failedDelivery(), retriedDelivery())},
		{name: "empty delivery log", method: "GET", url: epURL + "/deliveries", status: 200, body: list()},
		{name: "in-flight delivery", method: "GET", url: epURL + "/deliveries", status: 200, body: list(with(delivery(), "next_attempt_at", nil))},
		{name: "delivered, skipped", method: "GET", url: epURL + "/deliveries", status: 200, body: list(
			with(with(with(failedDelivery(), "status", "delivered"), "attempts", []any{attempt(204, nil)}), "event_type", "alerts.resolved"),
			with(with(failedDelivery(), "status", "skipped"), "attempts", []any{}))},
		{name: "delivery log 400", method: "GET", url: epURL + "/deliveries?limit=0", status: 400, body: validation(map[string]any{"field": "limit", "message": "must be an integer between 1 and 100"})},
		{name: "delivery log 404", method: "GET", url: epURL + "/deliveries", status: 404, body: errBody("webhook endpoint not found")},
		{name: "retry", method: "POST", url: retryURL, status: 202, body: retriedDelivery()},
		{name: "retry of a pending delivery", method: "POST", url: retryURL, status: 409, body: errBody("the delivery is still in progress: an attempt is already queued")},
		{name: "retry 404", method: "POST", url: retryURL, status: 404, body: errBody("delivery not found")},
		{name: "retry malformed delivery_id", method: "POST", url: epURL + "/deliveries/nope/retry", status: 422, body: validation(map[string]any{"field": "delivery_id", "message": "must match ^dlv_[A-Za-z0-9]+$"})},
		{name: "retry 403", method: "POST", url: retryURL, status: 403, body: errBody("this endpoint needs an account-scoped API key")},
		{name: "intake", method: "POST", url: intake, status: 202, body: map[string]any{"accepted": 8}},
		{name: "intake empty batch", method: "POST", url: intake, status: 202, body: map[string]any{"accepted": 0}},
		{name: "intake 400", method: "POST", url: intake, status: 400, body: validation()},
		{name: "intake 401", method: "POST", url: intake, status: 401, body: errBody("missing or invalid X-Internal-Key")},
		{name: "intake 413", method: "POST", url: intake, status: 413, body: errBody("request body is larger than 1048576 bytes")},
		{name: "intake 422", method: "POST", url: intake, status: 422, body: validation(map[string]any{"field": "events[3].metric", "message": "must be one of: ..."})},
		{name: "intake 500", method: "POST", url: intake, status: 500, body: errBody("internal error")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.run(v); err != nil {
				t.Fatalf("Check refused a valid response: %v", err)
			}
		})
	}
}

func TestCheckRejects(t *testing.T) {
	v := newValidator(t)
	cases := []checkCase{
		{name: "rule missing current_state", method: "GET", url: ruleURL, status: 200, body: without(rule(), "current_state")},
		{name: "rule missing nullable field", method: "GET", url: ruleURL, status: 200, body: without(rule(), "current_value")},
		{name: "rule with null name", method: "GET", url: ruleURL, status: 200, body: with(rule(), "name", nil)},
		{name: "rule with wrong metric", method: "GET", url: ruleURL, status: 200, body: with(rule(), "metric", "cpu")},
		{name: "rule with wrong state", method: "POST", url: local + "/v1/alert-rules", status: 201, body: with(rule(), "current_state", "firing")},
		{name: "rule with wrong operator", method: "PATCH", url: ruleURL, status: 200, body: with(rule(), "operator", "==")},
		{name: "rule with fractional threshold", method: "GET", url: ruleURL, status: 200, body: with(rule(), "threshold_value", 1.5)},
		{name: "rule with negative threshold", method: "GET", url: ruleURL, status: 200, body: with(rule(), "threshold_value", -1)},
		{name: "rule with string current_value", method: "GET", url: ruleURL, status: 200, body: with(rule(), "current_value", "12")},
		{name: "rule with time without milliseconds", method: "GET", url: ruleURL, status: 200, body: with(rule(), "created_at", "2026-11-22T14:00:00Z")},
		{name: "rule with non-UTC time", method: "GET", url: ruleURL, status: 200, body: with(rule(), "since", "2026-11-22T15:00:00.000+01:00")},
		{name: "rule with bad id", method: "GET", url: ruleURL, status: 200, body: with(rule(), "id", "rule_1")},
		{name: "rule with extra field", method: "GET", url: ruleURL, status: 200, body: with(rule(), "account_id", "acct_1")},
		{name: "rule list item missing field", method: "GET", url: local + "/v1/alert-rules", status: 200, body: list(rule(), without(rule(), "enabled"))},
		{name: "active alert with null current_value", method: "GET", url: local + "/v1/alerts", status: 200, body: list(with(activeAlert(), "current_value", nil))},
		{name: "GET endpoint with signing_secret", method: "GET", url: epURL, status: 200, body: createdEndpoint()},
		{name: "list endpoints with signing_secret", method: "GET", url: local + "/v1/webhook-endpoints", status: 200, body: list(endpoint(), createdEndpoint())},
		{name: "PATCH endpoint with signing_secret", method: "PATCH", url: epURL, status: 200, body: createdEndpoint()},
		{name: "create endpoint without signing_secret", method: "POST", url: local + "/v1/webhook-endpoints", status: 201, body: endpoint()},
		{name: "create endpoint with malformed secret", method: "POST", url: local + "/v1/webhook-endpoints", status: 201, body: with(createdEndpoint(), "signing_secret", "s3cret")},
		{name: "endpoint with wrong event type", method: "GET", url: epURL, status: 200, body: with(endpoint(), "event_types", []any{"alerts.fired"})},
		{name: "endpoint with no event types", method: "GET", url: epURL, status: 200, body: with(endpoint(), "event_types", []any{})},
		{name: "endpoint with duplicate event types", method: "GET", url: epURL, status: 200, body: with(endpoint(), "event_types", []any{"alerts.resolved", "alerts.resolved"})},
		{name: "endpoint with null headers", method: "GET", url: epURL, status: 200, body: with(endpoint(), "headers", nil)},
		{name: "endpoint with reserved header", method: "GET", url: epURL, status: 200, body: with(endpoint(), "headers", map[string]any{"Webhook-Signature": "x"})},
		{name: "endpoint with http url", method: "GET", url: epURL, status: 200, body: with(endpoint(), "url", "http://hooks.example.com/")},
		{name: "endpoint with timeout out of range", method: "GET", url: epURL, status: 200, body: with(endpoint(), "timeout_ms", 500)},
		{name: "rotate without previous_secret_expires_at", method: "POST", url: epURL + "/rotate-secret", status: 200, body: map[string]any{"signing_secret": secret}},
		{name: "undocumented status", method: "GET", url: ruleURL, status: 418, body: errBody("teapot")},
		{name: "created status on a GET", method: "GET", url: ruleURL, status: 201, body: rule()},
		{name: "200 on a DELETE", method: "DELETE", url: ruleURL, status: 200, body: rule()},
		{name: "409 on a GET", method: "GET", url: local + "/v1/alert-rules", status: 409, body: errBody("conflict")},
		{name: "unknown path", method: "GET", url: local + "/v1/alert-rulez", status: 200, body: list()},
		{name: "unknown nested path", method: "GET", url: ruleURL + "/history", status: 200, body: list()},
		{name: "method not in the document", method: "PUT", url: ruleURL, status: 200, body: rule()},
		{name: "no X-Request-Id", method: "GET", url: ruleURL, status: 200, header: http.Header{"Content-Type": {"application/json"}}, body: rule()},
		{name: "malformed X-Request-Id", method: "GET", url: ruleURL, status: 200, header: http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"abc"}}, body: rule()},
		{name: "wrong Content-Type", method: "GET", url: ruleURL, status: 200, header: http.Header{"Content-Type": {"text/plain"}, "X-Request-Id": {reqID}}, body: rule()},
		{name: "empty body where one is documented", method: "GET", url: ruleURL, status: 200},
		{name: "body on a 204", method: "DELETE", url: ruleURL, status: 204, header: http.Header{"X-Request-Id": {reqID}}, body: []byte(`{}`)},
		{name: "404 with errors", method: "GET", url: ruleURL, status: 404, body: with(errBody("alert rule not found"), "errors", []any{})},
		{name: "422 without errors", method: "PATCH", url: ruleURL, status: 422, body: errBody("validation failed")},
		{name: "400 without request_id", method: "POST", url: local + "/v1/alert-rules", status: 400, body: without(validation(), "request_id")},
		{name: "request_id differs from header", method: "GET", url: ruleURL, status: 404, body: with(errBody("alert rule not found"), "request_id", "req_00000000000000000000")},
		{name: "500 leaking details", method: "GET", url: ruleURL, status: 500, body: errBody("dynamodb: ResourceNotFoundException")},
		{name: "test event without delivery_id", method: "POST", url: epURL + "/test", status: 202, body: map[string]any{"event_id": "evt_2bQm8ZkR4tW1yN6cV0pL3x"}},
		{name: "test event with bad event_id", method: "POST", url: epURL + "/test", status: 202, body: map[string]any{"event_id": "ev_1", "delivery_id": "dlv_9aLk2PzX4cVb7NmQ1wEr5t"}},
		{name: "test event answered 200", method: "POST", url: epURL + "/test", status: 200, body: map[string]any{"event_id": "evt_2bQm8ZkR4tW1yN6cV0pL3x", "delivery_id": "dlv_9aLk2PzX4cVb7NmQ1wEr5t"}},
		{name: "409 on a test event", method: "POST", url: epURL + "/test", status: 409, body: errBody("conflict")},
		{name: "400 on a retry", method: "POST", url: retryURL, status: 400, body: validation()},
		{name: "413 on a retry", method: "POST", url: retryURL, status: 413, body: errBody("request body is larger than 1048576 bytes")},
		{name: "retry answered 200", method: "POST", url: retryURL, status: 200, body: retriedDelivery()},
		{name: "delivery with bad id", method: "POST", url: retryURL, status: 202, body: with(retriedDelivery(), "id", "del_1")},
		{name: "delivery with unknown status", method: "GET", url: epURL + "/deliveries", status: 200, body: list(with(delivery(), "status", "retrying"))},
		{name: "finished delivery with next_attempt_at", method: "GET", url: epURL + "/deliveries", status: 200, body: list(with(failedDelivery(), "next_attempt_at", "2026-11-22T14:06:00.000Z"))},
		{name: "delivery without next_attempt_at", method: "GET", url: epURL + "/deliveries", status: 200, body: list(without(delivery(), "next_attempt_at"))},
		{name: "delivery without test", method: "GET", url: epURL + "/deliveries", status: 200, body: list(without(delivery(), "test"))},
		{name: "delivery with the event body", method: "GET", url: epURL + "/deliveries", status: 200, body: list(with(delivery(), "body", "{}"))},
		{name: "delivery with null attempts", method: "GET", url: epURL + "/deliveries", status: 200, body: list(with(delivery(), "attempts", nil))},
		{name: "attempt number 0", method: "GET", url: epURL + "/deliveries", status: 200, body: list(with(failedDelivery(), "attempts", []any{with(attempt(400, "HTTP 400"), "number", 0)}))},
		{name: "attempt with negative duration", method: "GET", url: epURL + "/deliveries", status: 200, body: list(with(failedDelivery(), "attempts", []any{with(attempt(400, "HTTP 400"), "duration_ms", -1)}))},
		{name: "attempt with string status_code", method: "GET", url: epURL + "/deliveries", status: 200, body: list(with(failedDelivery(), "attempts", []any{attempt("400", "HTTP 400")}))},
		{name: "attempt without error", method: "GET", url: epURL + "/deliveries", status: 200, body: list(with(failedDelivery(), "attempts", []any{without(attempt(400, "HTTP 400"), "error")}))},
		{name: "attempt with the response body", method: "GET", url: epURL + "/deliveries", status: 200, body: list(with(failedDelivery(), "attempts", []any{with(attempt(400, "HTTP 400"), "response_body", "nope")}))},
		{name: "intake accepted as a string", method: "POST", url: intake, status: 202, body: map[string]any{"accepted": "8"}},
		{name: "intake with extra field", method: "POST", url: intake, status: 202, body: map[string]any{"accepted": 8, "rejected": 0}},
		{name: "intake answered 200", method: "POST", url: intake, status: 200, body: map[string]any{"accepted": 8}},
		{name: "403 on the intake", method: "POST", url: intake, status: 403, body: errBody("forbidden")},
		{name: "404 on the intake", method: "POST", url: intake, status: 404, body: errBody("not found")},
		{name: "GET on the intake", method: "GET", url: intake, status: 200, body: map[string]any{"accepted": 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run(v)
			if err == nil {
				t.Fatal("Check accepted an undocumented response")
			}
			t.Log(err)
		})
	}
}

func TestCheckConcurrent(t *testing.T) {
	v := newValidator(t)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			good := checkCase{method: "GET", url: ruleURL, status: 200, body: firingRule()}
			bad := checkCase{method: "GET", url: epURL, status: 200, body: createdEndpoint()}
			for j := 0; j < 10; j++ {
				if err := good.run(v); err != nil {
					t.Errorf("good response refused: %v", err)
				}
				if err := bad.run(v); err == nil {
					t.Error("bad response accepted")
				}
			}
		}()
	}
	wg.Wait()
}

func TestDocumentIsACopy(t *testing.T) {
	d := Document()
	d[0] = 'x'
	if Document()[0] != '{' {
		t.Fatal("Document returned the embedded slice")
	}
}

// TestAlertEventSchema checks the event body of the webhooks section
// (components.schemas.AlertEvent) against bodies built by the code that
// builds them (voiceops.NewAlertEvent), and that the webhooks and the
// internal intake are described where clients look for them.
func TestAlertEventSchema(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alerts.triggered", "alerts.resolved"} {
		item := doc.Webhooks[name]
		if item == nil || item.Post == nil || item.Post.RequestBody == nil {
			t.Fatalf("webhooks: no POST %s with a body", name)
		}
		body := item.Post.RequestBody.Value.Content.Get("application/json")
		if body == nil || !strings.Contains(string(mustJSON(t, body.Schema)), "#/components/schemas/AlertEvent") {
			t.Errorf("webhooks %s: the body does not reference AlertEvent", name)
		}
		params := map[string]bool{}
		for _, p := range item.Post.Parameters {
			if p.Value.In == "header" && p.Value.Required {
				params[p.Value.Name] = true
			}
		}
		for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature", "X-Service-Event-ID", "X-Service-Timestamp", "X-Service-Signature"} {
			if !params[h] {
				t.Errorf("webhooks %s: no required header parameter %s", name, h)
			}
		}
	}
	intake := doc.Paths.Find("/internal/v1/metric-events")
	if intake == nil || intake.Post == nil || intake.Post.Security == nil || len(*intake.Post.Security) != 1 || (*intake.Post.Security)[0]["internalKey"] == nil {
		t.Error("POST /internal/v1/metric-events: security is not internalKey alone")
	}
	if s := doc.Components.SecuritySchemes["internalKey"]; s == nil || s.Value.Type != "apiKey" || s.Value.In != "header" || s.Value.Name != "X-Internal-Key" {
		t.Error("components.securitySchemes.internalKey is not an apiKey in the X-Internal-Key header")
	}

	schema := doc.Components.Schemas["AlertEvent"].Value
	at := time.Date(2026, 11, 22, 14, 5, 0, 0, time.UTC)
	value, project := int64(12), "proj_support"
	firing := voiceops.AlertRule{ID: "ar_3kTb9QxZ1mW7cY0pL2vN8d", AccountID: "acct_a", Name: "Too many API errors", Metric: voiceops.MetricAPIErrors,
		Operator: voiceops.OpGreaterEqual, Threshold: 10, Window: voiceops.Window5m, Enabled: true, State: voiceops.StateAlert, CurrentValue: &value}
	noData := firing
	noData.State, noData.CurrentValue, noData.ProjectID = voiceops.StateNoData, nil, &project
	disabled := firing
	disabled.State, disabled.Enabled = voiceops.StateUnknown, false
	decode := func(b []byte) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	bodies := map[string][]byte{
		"triggered":             voiceops.NewAlertEvent(voiceops.EventTriggered, firing, voiceops.StateOK, at, false).Body,
		"test":                  voiceops.NewAlertEvent(voiceops.EventTriggered, firing, voiceops.StateOK, at, true).Body,
		"triggered after gaps":  voiceops.NewAlertEvent(voiceops.EventTriggered, firing, voiceops.StateNoData, at, false).Body,
		"resolved to no_data":   voiceops.NewAlertEvent(voiceops.EventResolved, noData, voiceops.StateAlert, at, false).Body,
		"resolved by disabling": voiceops.NewAlertEvent(voiceops.EventResolved, disabled, voiceops.StateAlert, at, false).Body,
	}
	for name, b := range bodies {
		if err := schema.VisitJSON(decode(b), openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s: AlertEvent refuses %s: %v", name, b, err)
		}
	}

	triggered := func() map[string]any { return decode(bodies["triggered"]) }
	resolved := func() map[string]any { return decode(bodies["resolved to no_data"]) }
	alert := func(m map[string]any) map[string]any { return m["alert"].(map[string]any) }
	rejects := map[string]map[string]any{
		"test false":                     with(triggered(), "test", false),
		"no alert":                       without(triggered(), "alert"),
		"bad event_id":                   with(triggered(), "event_id", "ev_1"),
		"unknown event_type":             with(triggered(), "event_type", "alerts.fired"),
		"extra field":                    with(triggered(), "account_id", "acct_a"),
		"triggered without triggered_at": func() map[string]any { m := triggered(); delete(alert(m), "triggered_at"); return m }(),
		"triggered with resolved_at": func() map[string]any {
			m := triggered()
			alert(m)["resolved_at"] = "2026-11-22T14:05:00.000Z"
			return m
		}(),
		"triggered not into alert": func() map[string]any { m := triggered(); alert(m)["current_state"] = "ok"; return m }(),
		"resolved with triggered_at": func() map[string]any {
			m := resolved()
			delete(alert(m), "resolved_at")
			alert(m)["triggered_at"] = "2026-11-22T14:05:00.000Z"
			return m
		}(),
		"resolved not out of alert":   func() map[string]any { m := resolved(); alert(m)["previous_state"] = "ok"; return m }(),
		"type and timestamp disagree": with(triggered(), "event_type", "alerts.resolved"),
		"alert without current_value": func() map[string]any { m := triggered(); delete(alert(m), "current_value"); return m }(),
		"alert with fractional value": func() map[string]any { m := triggered(); alert(m)["current_value"] = 1.5; return m }(),
		"alert with extra field":      func() map[string]any { m := triggered(); alert(m)["enabled"] = true; return m }(),
	}
	for name, m := range rejects {
		if err := schema.VisitJSON(m, openapi3.EnableJSONSchema2020()); err == nil {
			t.Errorf("%s: AlertEvent accepts %v", name, m)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
