package apitest

import (
	"reflect"
	"slices"
	"testing"

	"github.com/voiceops/opsapi/shared/voiceops"
)

const (
	slackURL   = "https://hooks.slack.com/services/T000/B000/XXXXXXXX"
	routingKey = "R0123456789ABCDEF0123456789abcde"
)

func slackEndpoint() map[string]any {
	return with(validEndpoint(), "kind", "slack", "url", slackURL)
}

func pagerDutyEndpoint() map[string]any {
	return with(validEndpoint(), "kind", "pagerduty", "url", deleteField, "routing_key", routingKey)
}

func TestEndpointKindsCreate(t *testing.T) {
	h := newHarness(t)
	s := h.do("POST", "/v1/webhook-endpoints", h.keyA, slackEndpoint()).Expect(t, 201).JSON(t)
	if s["kind"] != "slack" || s["url"] != slackURL {
		t.Errorf("slack endpoint = %v", s)
	}
	if _, ok := s["signing_secret"]; ok {
		t.Errorf("a slack endpoint signs nothing, yet its create shows a signing_secret: %v", s)
	}
	p := h.do("POST", "/v1/webhook-endpoints", h.keyA, pagerDutyEndpoint()).Expect(t, 201).JSON(t)
	if p["kind"] != "pagerduty" || p["url"] != voiceops.PagerDutyEventsURL || p["routing_key"] != routingKey {
		t.Errorf("pagerduty endpoint = %v", p)
	}
	// An explicit webhook kind is a webhook: its record has no kind, as
	// for clients that never send one.
	w := h.do("POST", "/v1/webhook-endpoints", h.keyA, with(validEndpoint(), "kind", "webhook")).Expect(t, 201).JSON(t)
	if _, ok := w["kind"]; ok {
		t.Errorf("webhook endpoint shows kind: %v", w)
	}
	if _, ok := w["signing_secret"]; !ok {
		t.Errorf("webhook endpoint has no signing_secret: %v", w)
	}
	got := h.do("GET", "/v1/webhook-endpoints/"+p["id"].(string), h.keyA, nil).Expect(t, 200).JSON(t)
	if !reflect.DeepEqual(got, p) {
		t.Errorf("GET = %v, want %v", got, p)
	}
}

func TestEndpointKindsBadInput(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"unknown kind", with(validEndpoint(), "kind", "opsgenie"), []string{"kind"}},
		{"kind not a string", with(validEndpoint(), "kind", 1), []string{"kind"}},
		{"slack on another host", with(slackEndpoint(), "url", "https://hooks.example.com/services/x"), []string{"url"}},
		{"slack on a look-alike host", with(slackEndpoint(), "url", "https://hooks.slack.com.example.com/x"), []string{"url"}},
		{"slack on another port", with(slackEndpoint(), "url", "https://hooks.slack.com:8443/x"), []string{"url"}},
		{"slack without url", with(slackEndpoint(), "url", deleteField), []string{"url"}},
		{"slack with headers", with(slackEndpoint(), "headers", map[string]string{"X-A": "1"}), []string{"headers"}},
		{"slack with routing key", with(slackEndpoint(), "routing_key", routingKey), []string{"routing_key"}},
		{"webhook with routing key", with(validEndpoint(), "routing_key", routingKey), []string{"routing_key"}},
		{"routing key of 31", with(pagerDutyEndpoint(), "routing_key", routingKey[:31]), []string{"routing_key"}},
		{"routing key of 33", with(pagerDutyEndpoint(), "routing_key", routingKey+"x"), []string{"routing_key"}},
		{"routing key not alphanumeric", with(pagerDutyEndpoint(), "routing_key", routingKey[:31]+"-"), []string{"routing_key"}},
		{"pagerduty without routing key", with(pagerDutyEndpoint(), "routing_key", deleteField), []string{"routing_key"}},
		{"pagerduty with headers", with(pagerDutyEndpoint(), "headers", map[string]string{"X-A": "1"}), []string{"headers"}},
		{"pagerduty with another url", with(pagerDutyEndpoint(), "url", "https://hooks.example.com/pd"), []string{"url"}},
		{"pagerduty loopback without the dev flag", with(pagerDutyEndpoint(), "url", "http://127.0.0.1:9002/v2/enqueue"), []string{"url"}},
		{"slack loopback without the dev flag", with(slackEndpoint(), "url", "http://127.0.0.1:9003/slack"), []string{"url"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := h.do("POST", "/v1/webhook-endpoints", h.keyA, c.body).Expect(t, 422)
			if got := res.FieldErrors(t); !slices.Equal(got, c.fields) {
				t.Errorf("fields %v, want %v: %s", got, c.fields, res.Body)
			}
		})
	}
	if n := len(h.do("GET", "/v1/webhook-endpoints", h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any)); n != 0 {
		t.Errorf("%d endpoints stored, want none", n)
	}
	// Empty headers ignore nothing; the exact Events API URL is the default.
	h.do("POST", "/v1/webhook-endpoints", h.keyA, with(slackEndpoint(), "headers", map[string]string{})).Expect(t, 201)
	h.do("POST", "/v1/webhook-endpoints", h.keyA, with(pagerDutyEndpoint(), "url", voiceops.PagerDutyEventsURL)).Expect(t, 201)
}

func TestEndpointKindsPatch(t *testing.T) {
	h := newHarness(t)
	s := h.do("POST", "/v1/webhook-endpoints", h.keyA, slackEndpoint()).Expect(t, 201).JSON(t)
	p := h.do("POST", "/v1/webhook-endpoints", h.keyA, pagerDutyEndpoint()).Expect(t, 201).JSON(t)
	w := h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(t, 201).JSON(t)
	delete(w, "signing_secret")
	for _, c := range []struct {
		name  string
		ep    map[string]any
		body  map[string]any
		field string
	}{
		{"slack url on another host", s, map[string]any{"url": "https://example.com/x"}, "url"},
		{"slack headers", s, map[string]any{"headers": map[string]string{"X-A": "1"}}, "headers"},
		{"slack routing key", s, map[string]any{"routing_key": routingKey}, "routing_key"},
		{"pagerduty short key", p, map[string]any{"routing_key": "abc"}, "routing_key"},
		{"pagerduty url", p, map[string]any{"url": "https://example.com/x"}, "url"},
		{"webhook routing key", w, map[string]any{"routing_key": routingKey}, "routing_key"},
		{"kind change", w, map[string]any{"kind": "slack"}, "kind"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := h.do("PATCH", "/v1/webhook-endpoints/"+c.ep["id"].(string), h.keyA, c.body).Expect(t, 422)
			if got := res.FieldErrors(t); !slices.Equal(got, []string{c.field}) {
				t.Errorf("fields %v, want [%s]: %s", got, c.field, res.Body)
			}
		})
	}
	if got := h.do("GET", "/v1/webhook-endpoints/"+w["id"].(string), h.keyA, nil).Expect(t, 200).JSON(t); !reflect.DeepEqual(got, w) {
		t.Errorf("invalid PATCHes changed the endpoint: %v", got)
	}
	const key2 = "Z0123456789ABCDEF0123456789abcde"
	got := h.do("PATCH", "/v1/webhook-endpoints/"+p["id"].(string), h.keyA, map[string]any{"routing_key": key2}).Expect(t, 200).JSON(t)
	if got["routing_key"] != key2 || got["kind"] != "pagerduty" {
		t.Errorf("PATCH routing_key = %v", got)
	}
	h.do("PATCH", "/v1/webhook-endpoints/whe_missing", h.keyA, map[string]any{"routing_key": key2}).Expect(t, 404)
}

// TestEndpointKindsLoopback: the dev server's -allow-loopback-webhooks
// lets slack and pagerduty endpoints name local stand-ins.
func TestEndpointKindsLoopback(t *testing.T) {
	h := newHarness(t)
	h.deps.URLPolicy = voiceops.URLPolicy{AllowLoopback: true}
	h.h = flushing(h.tel, All(h.deps))
	h.check = false // the document describes deployed stacks: https:// only
	s := h.do("POST", "/v1/webhook-endpoints", h.keyA, with(slackEndpoint(), "url", "http://127.0.0.1:9003/slack")).Expect(t, 201).JSON(t)
	p := h.do("POST", "/v1/webhook-endpoints", h.keyA, with(pagerDutyEndpoint(), "url", "http://localhost:9002/v2/enqueue")).Expect(t, 201).JSON(t)
	if s["url"] != "http://127.0.0.1:9003/slack" || p["url"] != "http://localhost:9002/v2/enqueue" {
		t.Errorf("stand-in URLs: %v, %v", s["url"], p["url"])
	}
	// Loopback is all the flag adds: another host is still refused.
	h.do("POST", "/v1/webhook-endpoints", h.keyA, with(slackEndpoint(), "url", "https://example.com/x")).Expect(t, 422)
}
