package apispec

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/voiceops/opsapi/shared/alerts/studioapi"
	"github.com/voiceops/opsapi/shared/platform/catalog"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// documented lists, by host, the operations of the catalog's documented
// groups (shared/platform/catalog): what the document must hold, no more and no less.
func documented() map[catalog.Host][]string {
	out := map[catalog.Host][]string{}
	for _, g := range catalog.Groups() {
		if g.Undocumented {
			continue
		}
		for _, r := range g.Routes {
			out[g.Host] = append(out[g.Host], r.Pattern())
		}
	}
	for _, ops := range out {
		sort.Strings(ops)
	}
	return out
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

	// Each operation is on the base host when its path's servers name it
	// (".api."), else on the studio host (the document's servers).
	got := map[catalog.Host][]string{}
	for path, item := range doc.Paths.Map() {
		host := catalog.Studio
		for _, s := range item.Servers {
			if strings.Contains(s.URL, ".api.") {
				host = catalog.Base
			}
		}
		for method, op := range item.Operations() {
			got[host] = append(got[host], method+" "+path)
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
	want := documented()
	for _, h := range catalog.Hosts {
		for _, op := range got[h] {
			if !slices.Contains(want[h], op) {
				t.Errorf("%s host: %s is in the document, not in shared/platform/catalog", h, op)
			}
		}
		for _, op := range want[h] {
			if !slices.Contains(got[h], op) {
				t.Errorf("%s host: %s is in shared/platform/catalog, not in the document", h, op)
			}
		}
	}
	if len(want[catalog.Studio]) == 0 || len(want[catalog.Base]) == 0 {
		t.Errorf("the catalog documents no route on a host: %v", want)
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

// Fixtures: responses shaped exactly as the handlers write them.

const reqID = "req_4fJ9kQ2mX7pL0aZ8bC3d"

// rule is a rule's body as the handlers write it (studioapi.RuleBody), so
// that a field added to the rule is in the fixture too.
func rule() map[string]any {
	at := time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)
	r := voiceops.NewRule("ar_3kTb9QxZ1mW7cY0pL2vN8d", "acct_x", voiceops.RuleInput{Name: "Too many API errors",
		Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreaterEqual, Threshold: 10, Window: voiceops.Window5m}, at)
	b, err := json.Marshal(studioapi.RuleBody(r))
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return m
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

// Base host fixtures (shared/conversations/chatapi, shared/conversations/voiceapi and shared/platform/httpapi/errors.go).

const convID = "conv_17953416000001es5bW4rR2HdGvM5TOVFq"

func baseErr(msg string) map[string]any {
	return map[string]any{"error_message": msg, "request_id": reqID}
}

func chatCreated() map[string]any {
	return map[string]any{"conversation_id": convID, "response": "Welcome to Acme. How can I help?"}
}

func answer() map[string]any {
	return map[string]any{"conversation_id": convID, "response": "Your balance is 1,234.56 dollars.", "end_conversation": false}
}

func handedOff() map[string]any {
	a := answer()
	a["response"] = "Let me put you through to a person."
	a["end_conversation"] = true
	a["handoff"] = map[string]any{"destination": "support-queue", "reason": "caller asked for a human", "shared_id": "shr_abc"}
	return a
}

func success() map[string]any { return map[string]any{"success": true} }

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
	local     = "http://127.0.0.1:43127"
	regional  = "https://eu.studio.voiceops.example"
	ruleURL   = local + "/v1/alert-rules/ar_3kTb9QxZ1mW7cY0pL2vN8d"
	epURL     = local + "/v1/webhook-endpoints/whe_7Hs2LmQ9xV0cK4tB1nR6pZ"
	retryURL  = epURL + "/deliveries/dlv_9aLk2PzX4cVb7NmQ1wEr5t/retry"
	intake    = local + "/internal/v1/metric-events"
	chatURL   = local + "/v1/acct_a/proj_a1/chat"
	callsURL  = local + "/internal/v1/voice/calls"
	callURL   = callsURL + "/" + convID
	eventURL  = local + "/v1/external-events/webhook?event_id_location=payload&event_id_path=ref&account_id=acct_a&project_id=proj_a1"
	bridgeURL = local + "/internal/v1/agentic-dial/bridge-ended"
)

func queued() map[string]any { return map[string]any{"status": "queued", "event_id": convID} }

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
		{name: "chat create", method: "POST", url: chatURL + "/create", status: 200, body: chatCreated()},
		{name: "chat create on the base host", method: "POST", url: "https://euw-1.api.voiceops.example/v1/acct_a/proj_a1/chat/create", status: 200, body: chatCreated()},
		{name: "chat create with an empty response", method: "POST", url: chatURL + "/create", status: 200, body: with(chatCreated(), "response", "")},
		{name: "chat respond", method: "POST", url: chatURL + "/respond", status: 200, body: answer()},
		{name: "chat respond ending", method: "POST", url: chatURL + "/respond", status: 200, body: with(answer(), "end_conversation", true)},
		{name: "chat respond with handoff", method: "POST", url: chatURL + "/respond", status: 200, body: handedOff()},
		{name: "chat close", method: "PUT", url: chatURL + "/close", status: 200, body: success()},
		{name: "chat 400", method: "POST", url: chatURL + "/create", status: 400, body: baseErr("validation failed: channel must be one of: webchat, whatsapp, sms, api")},
		{name: "chat 401", method: "POST", url: chatURL + "/respond", status: 401, body: baseErr("missing or invalid X-TOKEN")},
		{name: "chat 403", method: "PUT", url: chatURL + "/close", status: 403, body: baseErr("the API key is not valid for this project")},
		{name: "chat 404 other version", method: "POST", url: local + "/v2/acct_a/proj_a1/chat/create", status: 404, body: baseErr("unknown API version: chat is served under /v1/")},
		{name: "chat 404 no agent", method: "POST", url: chatURL + "/create", status: 404, body: baseErr("the project has no agent configured")},
		{name: "chat 404 conversation", method: "POST", url: chatURL + "/respond", status: 404, body: baseErr("conversation not found")},
		{name: "chat respond 409", method: "POST", url: chatURL + "/respond", status: 409, body: baseErr("the resource was changed by another request; retry")},
		{name: "chat respond 410", method: "POST", url: chatURL + "/respond", status: 410, body: baseErr("the conversation has ended")},
		{name: "chat close 410", method: "PUT", url: chatURL + "/close", status: 410, body: baseErr("the conversation has ended")},
		{name: "chat 413", method: "POST", url: chatURL + "/create", status: 413, body: baseErr("request body is larger than 1048576 bytes")},
		{name: "chat 500", method: "PUT", url: chatURL + "/close", status: 500, body: baseErr("internal error")},
		{name: "call start", method: "POST", url: callsURL, status: 200, body: answer()},
		{name: "call turn with handoff", method: "POST", url: callURL + "/turns", status: 200, body: handedOff()},
		{name: "call end", method: "POST", url: callURL + "/end", status: 200, body: success()},
		{name: "call 400", method: "POST", url: callURL + "/end", status: 400, body: baseErr("validation failed: outcome is required")},
		{name: "call 401", method: "POST", url: callsURL, status: 401, body: baseErr("missing or invalid X-Internal-Key")},
		{name: "call 404", method: "POST", url: callURL + "/turns", status: 404, body: baseErr("conversation not found")},
		{name: "call turn 409", method: "POST", url: callURL + "/turns", status: 409, body: baseErr("the resource was changed by another request; retry")},
		{name: "call end 410", method: "POST", url: callURL + "/end", status: 410, body: baseErr("the conversation has ended")},
		{name: "call 500", method: "POST", url: callsURL, status: 500, body: baseErr("internal error")},
		{name: "external event", method: "POST", url: eventURL, status: 201, body: queued()},
		{name: "external event 400", method: "POST", url: eventURL, status: 400, body: baseErr("event ID not found or not bound to an active conversation")},
		{name: "external event 401", method: "POST", url: eventURL, status: 401, body: baseErr("missing or invalid X-Api-Key (an events key is required)")},
		{name: "external event 403", method: "POST", url: eventURL, status: 403, body: baseErr("the API key is not valid for this project")},
		{name: "external event 413", method: "POST", url: eventURL, status: 413, body: baseErr("request body is larger than 262144 bytes")},
		{name: "external event 500", method: "POST", url: eventURL, status: 500, body: baseErr("internal error")},
		{name: "bridge ended", method: "POST", url: bridgeURL, status: 200, body: success()},
		{name: "bridge ended 400", method: "POST", url: bridgeURL, status: 400, body: baseErr("validation failed: call_duration_seconds is required")},
		{name: "bridge ended 401", method: "POST", url: bridgeURL, status: 401, body: baseErr("missing or invalid X-Api-Key (an events key is required)")},
		{name: "bridge ended 404", method: "POST", url: bridgeURL, status: 404, body: baseErr("conversation not found")},
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
		// (409 and 400 are documented on both: an Idempotency-Key in flight, a malformed one.)
		{name: "410 on a test event", method: "POST", url: epURL + "/test", status: 410, body: errBody("gone")},
		{name: "413 on a retry", method: "POST", url: retryURL, status: 413, body: errBody("too large")},
		{name: "429 without Retry-After", method: "GET", url: "/v1/alert-rules", status: 429, body: errBody("rate limit exceeded")},
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
		{name: "chat create with end_conversation", method: "POST", url: chatURL + "/create", status: 200, body: with(chatCreated(), "end_conversation", false)},
		{name: "chat create without response", method: "POST", url: chatURL + "/create", status: 200, body: without(chatCreated(), "response")},
		{name: "external event queued with another status", method: "POST", url: eventURL, status: 201, body: with(queued(), "status", "done")},
		{name: "external event without event_id", method: "POST", url: eventURL, status: 201, body: without(queued(), "event_id")},
		{name: "external event 404", method: "POST", url: eventURL, status: 404, body: baseErr("conversation not found")},
		{name: "bridge ended with success false", method: "POST", url: bridgeURL, status: 200, body: map[string]any{"success": false}},
		{name: "chat create with malformed conversation_id", method: "POST", url: chatURL + "/create", status: 200, body: with(chatCreated(), "conversation_id", "c_1")},
		{name: "chat create answered 201", method: "POST", url: chatURL + "/create", status: 201, body: chatCreated()},
		{name: "chat respond without end_conversation", method: "POST", url: chatURL + "/respond", status: 200, body: without(answer(), "end_conversation")},
		{name: "chat respond with null handoff", method: "POST", url: chatURL + "/respond", status: 200, body: with(answer(), "handoff", nil)},
		{name: "handoff without reason", method: "POST", url: chatURL + "/respond", status: 200, body: with(handedOff(), "handoff", map[string]any{"destination": "support-queue", "shared_id": "shr_abc"})},
		{name: "handoff without shared_id", method: "POST", url: chatURL + "/respond", status: 200, body: with(handedOff(), "handoff", map[string]any{"destination": "support-queue", "reason": "r"})},
		{name: "handoff that does not end", method: "POST", url: chatURL + "/respond", status: 200, body: with(handedOff(), "end_conversation", false)},
		{name: "chat close with success false", method: "PUT", url: chatURL + "/close", status: 200, body: map[string]any{"success": false}},
		{name: "chat close with POST", method: "POST", url: chatURL + "/close", status: 200, body: success()},
		{name: "GET on chat create", method: "GET", url: chatURL + "/create", status: 200, body: chatCreated()},
		{name: "chat error in studio-host shape", method: "POST", url: chatURL + "/respond", status: 404, body: errBody("conversation not found")},
		{name: "chat error with errors", method: "POST", url: chatURL + "/create", status: 400, body: with(baseErr("validation failed"), "errors", []any{})},
		{name: "chat error without request_id", method: "POST", url: chatURL + "/create", status: 404, body: without(baseErr("the project has no agent configured"), "request_id")},
		{name: "chat 422", method: "POST", url: chatURL + "/respond", status: 422, body: baseErr("validation failed")},
		{name: "chat create 410", method: "POST", url: chatURL + "/create", status: 410, body: baseErr("the conversation has ended")},
		{name: "chat 500 leaking details", method: "POST", url: chatURL + "/respond", status: 500, body: baseErr("dynamodb: ConditionalCheckFailedException")},
		{name: "call start 403", method: "POST", url: callsURL, status: 403, body: baseErr("forbidden")},
		{name: "call start 410", method: "POST", url: callsURL, status: 410, body: baseErr("the conversation has ended")},
		{name: "call end answered like a turn", method: "POST", url: callURL + "/end", status: 200, body: answer()},
		{name: "call turn answered like an end", method: "POST", url: callURL + "/turns", status: 200, body: success()},
		{name: "call error in studio-host shape", method: "POST", url: callsURL, status: 401, body: errBody("missing or invalid X-Internal-Key")},
		{name: "unknown call sub-route", method: "POST", url: callURL + "/hangup", status: 200, body: success()},
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

// TestBaseHostOperations checks where the base-host operations are served and how
// they authenticate: on the base host {base_url} (their own servers), chat
// with X-API-KEY and X-TOKEN together, the voice intake with the internal
// key; and that their enums are the code's.
func TestBaseHostOperations(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Servers {
		if strings.Contains(s.URL, "api.voiceops.example") {
			t.Errorf("the base host %s is a document-wide server: studio-host operations are not served there", s.URL)
		}
	}
	schemes := doc.Components.SecuritySchemes
	for name, header := range map[string]string{"chatApiKey": "X-API-KEY", "agentToken": "X-TOKEN", "internalKey": "X-Internal-Key", "projectApiKey": "x-api-key"} {
		if s := schemes[name]; s == nil || s.Value.Type != "apiKey" || s.Value.In != "header" || s.Value.Name != header {
			t.Errorf("components.securitySchemes.%s is not an apiKey in the %s header", name, header)
		}
	}
	ops := map[string][]string{
		"/{version}/{account_id}/{project_id}/chat/create":        {"POST", "chat", "agentToken+chatApiKey"},
		"/{version}/{account_id}/{project_id}/chat/respond":       {"POST", "chat", "agentToken+chatApiKey"},
		"/{version}/{account_id}/{project_id}/chat/close":         {"PUT", "chat", "agentToken+chatApiKey"},
		"/internal/v1/voice/calls":                                {"POST", "internal", "internalKey"},
		"/internal/v1/voice/calls/{conversation_id}/turns":        {"POST", "internal", "internalKey"},
		"/internal/v1/voice/calls/{conversation_id}/end":          {"POST", "internal", "internalKey"},
		"/v1/{account_id}/{project_id}/conversations/concurrency": {"GET", "conversations", "projectApiKey"},
		"/v1/{account_id}/{project_id}/handoff_state":             {"GET", "conversations", "projectApiKey"},
		"/v1/conversations/dni-reservation":                       {"POST", "conversations", "projectApiKey"},
		"/v3/{account_id}/{project_id}/conversations":             {"GET", "conversations", "projectApiKey"},
		"/v1/{account_id}/{project_id}/conversations":             {"GET", "conversations", "projectApiKey"},
		"/v1/outbound-calling/trigger":                            {"POST", "outbound", "serviceAuthToken"},
		"/v1/outbound-calling/{callSid}/status":                   {"GET", "outbound", "serviceAuthToken"},
		"/internal/v1/outbound-calling/{callSid}/status":          {"POST", "internal", "internalKey"},
		"/v1/telephony/twilio/{callSid}/status":                   {"POST", "telephony", "twilioSignature"},
		"/v1/telephony/twilio/{callSid}/answer":                   {"POST", "telephony", "twilioSignature"},
		"/v1/telephony/twilio/{callSid}/turns/{conversation_id}":  {"POST", "telephony", "twilioSignature"},
	}
	for path, want := range ops {
		item := doc.Paths.Find(path)
		if item == nil {
			t.Errorf("%s: not in the document", path)
			continue
		}
		if len(item.Servers) != 1 || item.Servers[0].URL != "https://{region}.api.voiceops.example" {
			t.Errorf("%s: servers are not the base host alone", path)
		} else {
			region := item.Servers[0].Variables["region"]
			if region == nil || strings.Join(region.Enum, ",") != "us-1,uk-1,euw-1" {
				t.Errorf("%s: the base host's region is not one of us-1, uk-1, euw-1", path)
			}
		}
		op := item.GetOperation(want[0])
		if op == nil {
			t.Errorf("%s %s: no such operation", want[0], path)
			continue
		}
		if len(op.Tags) != 1 || op.Tags[0] != want[1] {
			t.Errorf("%s %s: tags %v, want [%s]", want[0], path, op.Tags, want[1])
		}
		if op.Security == nil || len(*op.Security) != 1 {
			t.Errorf("%s %s: not one security requirement", want[0], path)
		} else {
			var names []string
			for name := range (*op.Security)[0] {
				names = append(names, name)
			}
			sort.Strings(names)
			if got := strings.Join(names, "+"); got != want[2] {
				t.Errorf("%s %s: security %s, want %s", want[0], path, got, want[2])
			}
		}
		for status := range op.Responses.Map() {
			if status == "200" || status == "204" {
				continue
			}
			ref := op.Responses.Value(status)
			body := ref.Value.Content.Get("application/json")
			if body == nil || body.Schema.Value.Properties["error_message"] == nil {
				t.Errorf("%s %s: %s is not a base-host error body", want[0], path, status)
			}
		}
	}
	for _, path := range []string{"/v1/alert-rules", "/internal/v1/metric-events"} {
		if item := doc.Paths.Find(path); item == nil || len(item.Servers) != 0 {
			t.Errorf("%s: has servers of its own; studio-host operations use the document's", path)
		}
	}

	schemas := doc.Components.Schemas
	enum := func(name string) string {
		var out []string
		for _, v := range schemas[name].Value.Enum {
			out = append(out, v.(string))
		}
		return strings.Join(out, ",")
	}
	var channels, envs []string
	for _, c := range voiceops.ChatChannels {
		channels = append(channels, string(c))
	}
	for _, e := range voiceops.Environments {
		envs = append(envs, string(e))
	}
	if got := enum("ChatChannel"); got != strings.Join(channels, ",") {
		t.Errorf("ChatChannel enum %s, want voiceops.ChatChannels %v", got, channels)
	}
	var gotEnvs []string
	for _, v := range schemas["VoiceCallStart"].Value.Properties["environment"].Value.Enum {
		gotEnvs = append(gotEnvs, v.(string))
	}
	if strings.Join(gotEnvs, ",") != strings.Join(envs, ",") {
		t.Errorf("VoiceCallStart.environment enum %v, want voiceops.Environments %v", gotEnvs, envs)
	}
	if p := schemas["LanguageCode"].Value.Pattern; p != `^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$` {
		t.Errorf("LanguageCode pattern %s is not shared/voiceops's (language.go)", p)
	}
}

// TestBaseHostRequestSchemas checks the base-host request bodies against the rules
// of shared/conversations/chatapi and shared/conversations/voiceapi.
func TestBaseHostRequestSchemas(t *testing.T) {
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	type bodyCase struct {
		schema string
		body   string
	}
	visit := func(c bodyCase) error {
		var v any
		if err := json.Unmarshal([]byte(c.body), &v); err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		s := doc.Components.Schemas[c.schema]
		if s == nil {
			t.Fatalf("no schema %s", c.schema)
		}
		return s.Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
	}
	accepts := []bodyCase{
		{"ChatCreateRequest", `{}`},
		{"ChatCreateRequest", `{"integration_attributes": {"crm_id": "C-1"}, "variant_id": "express", "channel": "webchat", "asr_lang_code": "en-GB", "tts_lang_code": "zh-Hant-TW", "initial_message": "balance"}`},
		{"ChatCreateRequest", `{"integration_attributes": null, "channel": "api", "asr_lang_code": "es-419"}`},
		{"ChatRespondRequest", `{"conversation_id": "` + convID + `"}`},
		{"ChatRespondRequest", `{"conversation_id": "x", "message": "", "metadata": null, "integration_attributes": {"a": 1}, "tts_lang_code": "fr-CA"}`},
		{"ChatCloseRequest", `{"conversation_id": "` + convID + `"}`},
		{"VoiceCallStart", `{"account_id": "acct_a", "project_id": "proj_a1", "from_number": "+14155550100", "to_number": "+14155550199"}`},
		{"VoiceCallStart", `{"account_id": "acct_a", "project_id": "proj_a1", "from_number": "", "to_number": "", "variant_id": "", "language": "en-US", "environment": "pre-release", "integration_attributes": null}`},
		{"VoiceTurn", `{"account_id": "acct_a", "project_id": "proj_a1", "transcript": "balance"}`},
		{"VoiceTurn", `{"account_id": "acct_a", "project_id": "proj_a1", "dtmf": "1", "silence": false, "metadata": {"confidence": 0.9}}`},
		{"VoiceTurn", `{"account_id": "acct_a", "project_id": "proj_a1", "silence": true, "transcript": ""}`},
		{"VoiceCallEnd", `{"account_id": "acct_a", "project_id": "proj_a1", "outcome": "crashed"}`},
	}
	for _, c := range accepts {
		if err := visit(c); err != nil {
			t.Errorf("%s refuses %s: %v", c.schema, c.body, err)
		}
	}
	rejects := []bodyCase{
		{"ChatCreateRequest", `{"channel": "email"}`},
		{"ChatCreateRequest", `{"channel": "voice"}`},
		{"ChatCreateRequest", `{"asr_lang_code": "english"}`},
		{"ChatCreateRequest", `{"tts_lang_code": "en_GB"}`},
		{"ChatCreateRequest", `{"initial_message": 5}`},
		{"ChatCreateRequest", `{"integration_attributes": []}`},
		{"ChatCreateRequest", `{"variant_id": null}`},
		{"ChatCreateRequest", `{"conversation_id": "` + convID + `"}`},
		{"ChatRespondRequest", `{}`},
		{"ChatRespondRequest", `{"conversation_id": ""}`},
		{"ChatRespondRequest", `{"conversation_id": "` + strings.Repeat("c", 129) + `"}`},
		{"ChatRespondRequest", `{"conversation_id": "x", "variant_id": "express"}`},
		{"ChatRespondRequest", `{"conversation_id": "x", "message": null}`},
		{"ChatRespondRequest", `{"conversation_id": "x", "channel": "sms"}`},
		{"ChatCloseRequest", `{}`},
		{"ChatCloseRequest", `{"conversation_id": "x", "message": "bye"}`},
		{"VoiceCallStart", `{"account_id": "acct_a", "project_id": "proj_a1", "from_number": "+1"}`},
		{"VoiceCallStart", `{"account_id": "acct a", "project_id": "proj_a1", "from_number": "+1", "to_number": "+2"}`},
		{"VoiceCallStart", `{"account_id": "acct_a", "project_id": "proj_a1", "from_number": "+1", "to_number": "+2", "environment": "prod"}`},
		{"VoiceCallStart", `{"account_id": "acct_a", "project_id": "proj_a1", "from_number": "+1", "to_number": "+2", "channel": "voice"}`},
		{"VoiceTurn", `{"project_id": "proj_a1", "transcript": "hi"}`},
		{"VoiceTurn", `{"account_id": "acct_a", "project_id": "proj_a1", "silence": true, "transcript": "hi"}`},
		{"VoiceTurn", `{"account_id": "acct_a", "project_id": "proj_a1", "silence": true, "dtmf": "1"}`},
		{"VoiceTurn", `{"account_id": "acct_a", "project_id": "proj_a1", "message": "hi"}`},
		{"VoiceCallEnd", `{"account_id": "acct_a", "project_id": "proj_a1"}`},
		{"VoiceCallEnd", `{"account_id": "acct_a", "project_id": "proj_a1", "outcome": "hangup"}`},
		{"VoiceCallEnd", `{"account_id": "acct_a", "project_id": "proj_a1", "outcome": "closed"}`},
	}
	for _, c := range rejects {
		if err := visit(c); err == nil {
			t.Errorf("%s accepts %s", c.schema, c.body)
		}
	}
}

// The conversations list (shared/conversations/conversationsapi/conversations.go, convjson.go).

func convTurnV3() map[string]any {
	return map[string]any{
		"user_input": "balance please", "user_input_dtmf": "", "user_input_datetime": "2026-11-21T09:30:09.000Z",
		"agent_response": "Your balance is 1,234.56 dollars.", "agent_response_datetime": "2026-11-21T09:30:09.800Z",
		"latency": 0.8, "translated_user_input": "", "english_agent_response": "", "intents": []any{"balance"},
		"entities": []any{map[string]any{"type": "account"}}, "is_ood": false, "is_silence": false,
	}
}

func convTurnV1() map[string]any {
	t := convTurnV3()
	for _, k := range []string{"latency", "translated_user_input", "english_agent_response"} {
		delete(t, k)
	}
	t["user_input_dtmf"] = nil
	t["user_input_datetime"] = "2026-11-21T09:30:09Z"
	t["agent_response_datetime"] = "2026-11-21T09:30:09.8Z"
	return t
}

func convRecordV3() map[string]any {
	return map[string]any{
		"id": convID, "account_id": "acct_a", "project_id": "proj_a1", "environment": "live", "started_at": "2026-11-21T09:30:00.000Z",
		"channel": "voice", "in_progress": false, "variant_id": "main", "variant_name": "Demo IVR", "from_number": "+441632960001",
		"to_number": "", "num_turns": 1, "total_duration": 62, "service_duration": 2, "handoff": false, "handoff_reason": "",
		"handoff_destination": "", "num_silences": 0, "num_ood": 0,
		"metrics": map[string]any{"CALL_DURATION": "62", "CALL_TURN": []any{"2026-11-21T09:30:09.000Z"}, "CALL_START": "2026-11-21T09:30:00.000Z",
			"CALL_END": "2026-11-21T09:31:01.500Z", "END_REASON": "completed", "FUNCTION_ERRORS": "0", "ASR_LANG": "en-GB", "TTS_LANG": ""},
		"state": map[string]any{"verified": true}, "turns": []any{convTurnV3()},
	}
}

func convRecordV1() map[string]any {
	c := convRecordV3()
	c["started_at"] = "2026-11-21T09:30:00Z"
	c["to_number"], c["handoff_reason"], c["handoff_destination"] = nil, nil, nil
	c["metrics"] = map[string]any{"CALL_DURATION": "62", "CALL_TURN": []any{"2026-11-21T09:30:09Z"}, "CALL_START": "2026-11-21T09:30:00Z",
		"CALL_END": "2026-11-21T09:31:01.5Z", "END_REASON": "completed", "FUNCTION_ERRORS": "0", "ASR_LANG": "en-GB", "TTS_LANG": nil}
	c["turns"] = []any{convTurnV1()}
	return c
}

func convPage(next any, records ...map[string]any) map[string]any {
	list := []any{}
	for _, r := range records {
		list = append(list, r)
	}
	p := map[string]any{"conversations": list, "cursor": nil}
	if next != nil {
		p["next_offset"] = next
		p["cursor"] = "YzEuY29udl8xNzk1MjUzNDAwMDAwMlZvaWNlQ2FsbEdvbGRlbjAwMDAwLmFiYw"
	}
	return p
}

func convPageV1(next any, records ...map[string]any) map[string]any {
	p := convPage(next, records...)
	delete(p, "cursor")
	p["descriptions"] = map[string]any{"conversations": map[string]any{"id": "Conversation ID."}}
	return p
}

func inProgressV3() map[string]any {
	c := convRecordV3()
	c["in_progress"] = true
	m := c["metrics"].(map[string]any)
	m["CALL_END"], m["END_REASON"] = "", ""
	return c
}

func TestConversationListSchemas(t *testing.T) {
	v := newValidator(t)
	v3, v1 := local+"/v3/acct_a/proj_a1/conversations", local+"/v1/acct_a/proj_a1/conversations"
	latency := map[string]any{"turns": 1, "avg_ms": 800, "p50_ms": 800, "p95_ms": 800, "max_ms": 800}
	noTurns := map[string]any{"turns": 0, "avg_ms": nil, "p50_ms": nil, "p95_ms": nil, "max_ms": nil}
	withMetadata := func() map[string]any {
		c := convRecordV3()
		c["turns"] = []any{with(convTurnV3(), "metadata", map[string]any{})}
		return c
	}
	accepts := []checkCase{
		{name: "v3 page", method: "GET", url: v3 + "?limit=2", status: 200, body: convPage(3, convRecordV3(), inProgressV3())},
		{name: "v3 last page", method: "GET", url: v3, status: 200, body: convPage(nil, convRecordV3())},
		{name: "v3 empty", method: "GET", url: v3 + "?offset=100", status: 200, body: convPage(nil)},
		{name: "v3 include_latency", method: "GET", url: v3 + "?include_latency=true", status: 200, body: convPage(nil, with(convRecordV3(), "latency", latency), with(with(convRecordV3(), "turns", []any{}), "latency", noTurns))},
		{name: "v3 include_turn_metadata", method: "GET", url: v3 + "?include_turn_metadata=true", status: 200, body: convPage(nil, withMetadata())},
		{name: "v3 501 semantic search", method: "GET", url: v3 + "?query_type=semantic&query=refund", status: 501, body: baseErr("query_type=semantic is not implemented; query_type=transcript is")},
		{name: "v1 page", method: "GET", url: v1, status: 200, body: convPageV1(5, convRecordV1())},
		{name: "v1 empty", method: "GET", url: v1, status: 200, body: convPageV1(nil)},
		{name: "on the base host", method: "GET", url: "https://uk-1.api.voiceops.example/v3/acct_a/proj_a1/conversations", status: 200, body: convPage(nil)},
		{name: "400", method: "GET", url: v3 + "?limit=0", status: 400, body: baseErr("invalid query parameter: limit must be an integer between 1 and 5000")},
		{name: "401", method: "GET", url: v1, status: 401, body: baseErr("missing or invalid API key")},
		{name: "403", method: "GET", url: v3, status: 403, body: baseErr("the API key is not valid for this project")},
		{name: "404", method: "GET", url: v3, status: 404, body: baseErr("account or project not found")},
		{name: "500", method: "GET", url: v1, status: 500, body: baseErr("internal error")},
	}
	for _, c := range accepts {
		t.Run("accepts "+c.name, func(t *testing.T) {
			if err := c.run(v); err != nil {
				t.Fatalf("Check refused a valid response: %v", err)
			}
		})
	}
	rejects := []checkCase{
		{name: "v3 null text", method: "GET", url: v3, status: 200, body: convPage(nil, with(convRecordV3(), "to_number", nil))},
		{name: "v3 v1 times", method: "GET", url: v3, status: 200, body: convPage(nil, with(convRecordV3(), "started_at", "2026-11-21T09:30:00Z"))},
		{name: "v3 without turns", method: "GET", url: v3, status: 200, body: convPage(nil, without(convRecordV3(), "turns"))},
		{name: "v3 turn without latency", method: "GET", url: v3, status: 200, body: convPage(nil, with(convRecordV3(), "turns", []any{without(convTurnV3(), "latency")}))},
		{name: "v3 fractional duration", method: "GET", url: v3, status: 200, body: convPage(nil, with(convRecordV3(), "total_duration", 61.5))},
		{name: "v3 with descriptions", method: "GET", url: v3, status: 200, body: convPageV1(nil, convRecordV3())},
		{name: "v3 without cursor", method: "GET", url: v3, status: 200, body: without(convPage(nil, convRecordV3()), "cursor")},
		{name: "v3 cursor not URL-safe", method: "GET", url: v3, status: 200, body: with(convPage(nil), "cursor", "a+b/c=")},
		{name: "v1 with cursor", method: "GET", url: v1, status: 200, body: with(convPageV1(nil), "cursor", "abc")},
		{name: "v3 next_offset 0", method: "GET", url: v3, status: 200, body: convPage(0, convRecordV3())},
		{name: "v3 null CALL_END", method: "GET", url: v3, status: 200, body: convPage(nil, with(convRecordV3(), "metrics", with(convRecordV3()["metrics"].(map[string]any), "CALL_END", nil)))},
		{name: "v3 unknown environment", method: "GET", url: v3, status: 200, body: convPage(nil, with(convRecordV3(), "environment", "prod"))},
		{name: "v1 empty text", method: "GET", url: v1, status: 200, body: convPageV1(nil, with(convRecordV1(), "to_number", ""))},
		{name: "v1 without descriptions", method: "GET", url: v1, status: 200, body: convPage(nil, convRecordV1())},
		{name: "v1 turn with latency", method: "GET", url: v1, status: 200, body: convPageV1(nil, with(convRecordV1(), "turns", []any{with(convTurnV1(), "latency", 0.8)}))},
		{name: "v1 latency summary", method: "GET", url: v1, status: 200, body: convPageV1(nil, with(convRecordV1(), "latency", latency))},
		{name: "v1 turn metadata", method: "GET", url: v1, status: 200, body: convPageV1(nil, with(convRecordV1(), "turns", []any{with(convTurnV1(), "metadata", map[string]any{})}))},
		{name: "error in studio-host shape", method: "GET", url: v3, status: 400, body: with(errBody("invalid query parameter"), "errors", []any{})},
		{name: "422", method: "GET", url: v3, status: 422, body: baseErr("invalid")},
		{name: "POST", method: "POST", url: v3, status: 200, body: convPage(nil)},
		{name: "v2", method: "GET", url: local + "/v2/acct_a/proj_a1/conversations", status: 200, body: convPage(nil)},
	}
	for _, c := range rejects {
		t.Run("rejects "+c.name, func(t *testing.T) {
			err := c.run(v)
			if err == nil {
				t.Fatal("Check accepted an undocumented response")
			}
			t.Log(err)
		})
	}
}

// TestConcurrencyAndHandoffResponses checks the concurrency series and the
// handoff state against responses shaped as shared/conversations/conversationsapi/concurrency.go and
// handoff.go write them, and that the document refuses others.
func TestConcurrencyAndHandoffResponses(t *testing.T) {
	v := newValidator(t)
	concURL := local + "/v1/acct_a/proj_a1/conversations/concurrency?start_time=2026-11-22T14:00:00Z&end_time=2026-11-22T14:10:00Z"
	handoffURL := local + "/v1/acct_a/proj_a1/handoff_state?shared_id=shr_1"
	item := func(at string, n int) map[string]any {
		return map[string]any{"time": at, "max_concurrent_conversations": n}
	}
	sliced := func(at string, n int, id, name string) map[string]any {
		return with(with(item(at, n), "variant_id", id), "variant_name", name)
	}
	series := func(items ...map[string]any) map[string]any {
		out := make([]any, len(items))
		for i, it := range items {
			out[i] = it
		}
		return map[string]any{"account_id": "acct_a", "project_id": "proj_a1", "intervals": out}
	}
	state := func() map[string]any {
		return map[string]any{"id": convID, "shared_id": "shr_1", "data": map[string]any{"step": 3, "slots": map[string]any{"date": "2026-11-23"}}}
	}
	accepts := []checkCase{
		{name: "series", method: "GET", url: concURL, status: 200, body: series(item("2026-11-22T14:00:00.000Z", 3), item("2026-11-22T14:05:00.000Z", 0))},
		{name: "sliced series", method: "GET", url: concURL, status: 200, body: series(sliced("2026-11-22T14:00:00.000Z", 1, "var_a", "Alpha"), sliced("2026-11-22T14:00:00.000Z", 0, "", ""))},
		{name: "no series", method: "GET", url: concURL, status: 200, body: series()},
		{name: "concurrency 400", method: "GET", url: concURL, status: 400, body: baseErr("invalid query parameter: end_time must be after start_time")},
		{name: "concurrency 501", method: "GET", url: concURL, status: 501, body: baseErr("slice_by=language is not implemented; slice_by=variant is")},
		{name: "concurrency 404", method: "GET", url: concURL, status: 404, body: baseErr("account or project not found")},
		{name: "handoff state", method: "GET", url: handoffURL, status: 200, body: state()},
		{name: "handoff state, empty data", method: "GET", url: handoffURL, status: 200, body: with(state(), "data", map[string]any{})},
		{name: "no handoff", method: "GET", url: handoffURL, status: 404, body: baseErr("no handoff")},
		{name: "handoff 400", method: "GET", url: handoffURL, status: 400, body: baseErr("invalid query parameter: id or shared_id must be given")},
	}
	for _, c := range accepts {
		if err := c.run(v); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	rejects := []checkCase{
		{name: "series without intervals", method: "GET", url: concURL, status: 200, body: without(series(), "intervals")},
		{name: "negative maximum", method: "GET", url: concURL, status: 200, body: series(item("2026-11-22T14:00:00.000Z", -1))},
		{name: "fractional maximum", method: "GET", url: concURL, status: 200, body: series(with(item("2026-11-22T14:00:00.000Z", 0), "max_concurrent_conversations", 1.5))},
		{name: "time without milliseconds", method: "GET", url: concURL, status: 200, body: series(item("2026-11-22T14:00:00Z", 1))},
		{name: "interval with extra field", method: "GET", url: concURL, status: 200, body: series(with(item("2026-11-22T14:00:00.000Z", 1), "channel", "voice"))},
		{name: "concurrency 422", method: "GET", url: concURL, status: 422, body: baseErr("invalid")},
		{name: "concurrency 501 in studio-host shape", method: "GET", url: concURL, status: 501, body: errBody("not implemented")},
		{name: "handoff state, flat record", method: "GET", url: handoffURL, status: 200, body: with(state(), "destination", "support-queue")},
		{name: "handoff state without data", method: "GET", url: handoffURL, status: 200, body: without(state(), "data")},
		{name: "handoff state with null data", method: "GET", url: handoffURL, status: 200, body: with(state(), "data", nil)},
		{name: "handoff state without shared_id", method: "GET", url: handoffURL, status: 200, body: without(state(), "shared_id")},
		{name: "handoff state 501", method: "GET", url: handoffURL, status: 501, body: baseErr("not implemented")},
		{name: "POST handoff state", method: "POST", url: handoffURL, status: 200, body: state()},
	}
	for _, c := range rejects {
		if err := c.run(v); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}
