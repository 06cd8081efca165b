package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

const message = "use a regional address: https://studio.us.example.com, https://studio.uk.example.com"

// TestReplayEvents sends every misdirected-*.json of events/ through the
// real handler: whatever the method, path or headers, the answer is 421
// with the message and API Gateway's request ID.
func TestReplayEvents(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "events", "misdirected-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no events/misdirected-*.json")
	}
	h := mustHandler(t, message)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.RequestContext.RequestID == "" {
				t.Fatal("the sample has no requestContext.requestId")
			}
			check421(t, h, ev, ev.RequestContext.RequestID)
		})
	}
}

func TestEveryRequestIs421(t *testing.T) {
	h := mustHandler(t, message)
	for _, tc := range []struct {
		name string
		ev   events.APIGatewayV2HTTPRequest
	}{
		{"GET", httpEvent("GET", "/v1/alert-rules", "", "req-1")},
		{"POST with a body", httpEvent("POST", "/v1/us-1/acct/proj/chat/create", `{"channel":"webchat"}`, "req-2")},
		{"root", httpEvent("GET", "/", "", "req-3")},
		{"DELETE", httpEvent("DELETE", "/v1/webhook-endpoints/we_1", "", "req-4")},
		{"no request ID", httpEvent("OPTIONS", "/x", "", "")},
	} {
		t.Run(tc.name, func(t *testing.T) { check421(t, h, tc.ev, tc.ev.RequestContext.RequestID) })
	}
}

func TestMessageIsRequired(t *testing.T) {
	if _, err := handler(""); err == nil || !strings.Contains(err.Error(), MessageEnv) {
		t.Errorf("err = %v, want one naming %s", err, MessageEnv)
	}
	if err := run(context.Background(), func(string) string { return "" }); err == nil {
		t.Error("run without MESSAGE: no error")
	}
}

func mustHandler(tb testing.TB, msg string) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	tb.Helper()
	h, err := handler(msg)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func httpEvent(method, path, body, requestID string) events.APIGatewayV2HTTPRequest {
	ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "$default", RawPath: path, Body: body}
	ev.RequestContext.RequestID = requestID
	ev.RequestContext.HTTP.Method = method
	ev.RequestContext.HTTP.Path = path
	return ev
}

func check421(t *testing.T, h func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error),
	ev events.APIGatewayV2HTTPRequest, requestID string) {
	t.Helper()
	res, err := h(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 421 {
		t.Errorf("status %d, want 421", res.StatusCode)
	}
	if got := res.Headers["Content-Type"]; got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
	if got := res.Headers["X-Content-Type-Options"]; got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", got)
	}
	if got := res.Headers["X-Request-Id"]; got != requestID {
		t.Errorf("X-Request-Id %q, want %q", got, requestID)
	}
	if res.IsBase64Encoded {
		t.Error("body is base64-encoded")
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(res.Body), &body); err != nil {
		t.Fatalf("body %q: %v", res.Body, err)
	}
	if len(body) != 1 || body["message"] != message {
		t.Errorf("body %s, want exactly {\"message\": %q}", res.Body, message)
	}
}
