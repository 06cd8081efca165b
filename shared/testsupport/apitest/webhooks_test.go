package apitest

import (
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestCreateEndpoint(t *testing.T) {
	h := newHarness(t)
	body := with(validEndpoint(), "headers", map[string]string{"Authorization": "Bearer abc", "X-Team": "ops"}, "timeout_ms", 2500)
	got := h.do("POST", "/v1/webhook-endpoints", h.keyA, body).Expect(t, 201).JSON(t)
	id := got["id"].(string)
	if !voiceops.ValidEndpointID(id) {
		t.Errorf("id %q", id)
	}
	secret, _ := got["signing_secret"].(string)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if !strings.HasPrefix(secret, "whsec_") || err != nil || len(raw) != 32 {
		t.Errorf("signing_secret %q is not whsec_ + base64 of 32 bytes", secret)
	}
	want := map[string]any{
		"id": id, "name": "pager", "url": "https://hooks.example.com/alerts",
		"event_types": []any{"alerts.triggered", "alerts.resolved"},
		"headers":     map[string]any{"Authorization": "Bearer abc", "X-Team": "ops"},
		"timeout_ms":  float64(2500), "enabled": true,
		"created_at": "2026-11-22T10:00:00.000Z", "updated_at": "2026-11-22T10:00:00.000Z",
	}
	delete(got, "signing_secret")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("create = %v, want %v", got, want)
	}
	// GET never shows the secret.
	res := h.do("GET", "/v1/webhook-endpoints/"+id, h.keyA, nil).Expect(t, 200)
	if strings.Contains(string(res.Body), "signing_secret") || strings.Contains(string(res.Body), secret) {
		t.Errorf("GET leaks the secret: %s", res.Body)
	}
	if !reflect.DeepEqual(res.JSON(t), want) {
		t.Errorf("GET = %s", res.Body)
	}
	// Defaults.
	d := h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(t, 201).JSON(t)
	if d["timeout_ms"] != float64(5000) || d["enabled"] != true || !reflect.DeepEqual(d["headers"], map[string]any{}) {
		t.Errorf("defaults: %v", d)
	}
	h.do("GET", "/v1/webhook-endpoints/"+id, h.keyB, nil).Expect(t, 404)
}

func TestEndpointValidation(t *testing.T) {
	h := newHarness(t)
	many := map[string]string{}
	for i := 0; i < 21; i++ {
		many[fmt.Sprint("X-H", i)] = "v"
	}
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"missing url", with(validEndpoint(), "url", deleteField), "url"},
		{"http", with(validEndpoint(), "url", "http://hooks.example.com/"), "url"},
		{"relative", with(validEndpoint(), "url", "/hooks"), "url"},
		{"no host", with(validEndpoint(), "url", "https:///x"), "url"},
		{"too long", with(validEndpoint(), "url", "https://example.com/"+strings.Repeat("a", 2048)), "url"},
		{"loopback", with(validEndpoint(), "url", "https://127.0.0.1/x"), "url"},
		{"private", with(validEndpoint(), "url", "https://10.1.2.3/x"), "url"},
		{"metadata", with(validEndpoint(), "url", "https://169.254.169.254/latest"), "url"},
		{"cgnat", with(validEndpoint(), "url", "https://100.64.0.1/"), "url"},
		{"ipv6 loopback", with(validEndpoint(), "url", "https://[::1]/"), "url"},
		{"mapped loopback", with(validEndpoint(), "url", "https://[::ffff:127.0.0.1]/"), "url"},
		{"localhost", with(validEndpoint(), "url", "https://localhost/"), "url"},
		{"credentials", with(validEndpoint(), "url", "https://user:pw@example.com/"), "url"},
		{"url number", with(validEndpoint(), "url", 5), "url"},
		{"upper-case scheme", with(validEndpoint(), "url", "HTTPS://hooks.example.com/"), "url"},
		{"space", with(validEndpoint(), "url", "https://hooks.example.com/a b"), "url"},
		{"port out of range", with(validEndpoint(), "url", "https://hooks.example.com:99999/"), "url"},
		{"fragment", with(validEndpoint(), "url", "https://hooks.example.com/#"), "url"},
		{"single label", with(validEndpoint(), "url", "https://intranet/"), "url"},
		{"internal suffix", with(validEndpoint(), "url", "https://metadata.google.internal/"), "url"},
		{"no event types", with(validEndpoint(), "event_types", []string{}), "event_types"},
		{"bad event type", with(validEndpoint(), "event_types", []string{"alerts.fired"}), "event_types"},
		{"duplicate event type", with(validEndpoint(), "event_types", []string{"alerts.resolved", "alerts.resolved"}), "event_types"},
		{"event types string", with(validEndpoint(), "event_types", "alerts.resolved"), "event_types"},
		{"header Host", with(validEndpoint(), "headers", map[string]string{"Host": "x"}), "headers.Host"},
		{"header Upgrade", with(validEndpoint(), "headers", map[string]string{"Upgrade": "h2c"}), "headers.Upgrade"},
		{"header Expect", with(validEndpoint(), "headers", map[string]string{"expect": "100-continue"}), "headers.expect"},
		{"header Proxy-Authorization", with(validEndpoint(), "headers", map[string]string{"Proxy-Authorization": "Basic eDp5"}), "headers.Proxy-Authorization"},
		{"header content-type", with(validEndpoint(), "headers", map[string]string{"content-type": "x"}), "headers.content-type"},
		{"header webhook-id", with(validEndpoint(), "headers", map[string]string{"Webhook-Id": "x"}), "headers.Webhook-Id"},
		{"header x-service", with(validEndpoint(), "headers", map[string]string{"X-Service-Signature": "x"}), "headers.X-Service-Signature"},
		{"header user-agent", with(validEndpoint(), "headers", map[string]string{"User-Agent": "x"}), "headers.User-Agent"},
		{"header name over 256", with(validEndpoint(), "headers", map[string]string{strings.Repeat("X", 257): "x"}), "headers"},
		{"header content-length", with(validEndpoint(), "headers", map[string]string{"Content-Length": "1"}), "headers.Content-Length"},
		{"header name not token", with(validEndpoint(), "headers", map[string]string{"Bad Name": "x"}), "headers.Bad Name"},
		{"header CRLF", with(validEndpoint(), "headers", map[string]string{"X-A": "a\r\nX-B: b"}), "headers.X-A"},
		{"header value long", with(validEndpoint(), "headers", map[string]string{"X-A": strings.Repeat("a", 1025)}), "headers.X-A"},
		{"header value number", with(validEndpoint(), "headers", map[string]any{"X-A": 1}), "headers"},
		{"21 headers", with(validEndpoint(), "headers", many), "headers"},
		{"timeout low", with(validEndpoint(), "timeout_ms", 999), "timeout_ms"},
		{"timeout high", with(validEndpoint(), "timeout_ms", 30001), "timeout_ms"},
		{"timeout fraction", with(validEndpoint(), "timeout_ms", 1500.5), "timeout_ms"},
		{"name long", with(validEndpoint(), "name", strings.Repeat("n", 256)), "name"},
		{"signing secret sent", with(validEndpoint(), "signing_secret", "whsec_x"), "signing_secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := h.do("POST", "/v1/webhook-endpoints", h.keyA, c.body).Expect(t, 422)
			if got := res.FieldErrors(t); !slices.Equal(got, []string{c.field}) {
				t.Errorf("fields %v, want [%s]: %s", got, c.field, res.Body)
			}
		})
	}
	h.do("POST", "/v1/webhook-endpoints", h.keyA, with(validEndpoint(), "headers", map[string]string{"Authorization": "Basic x"})).Expect(t, 201)
	if n := len(h.do("GET", "/v1/webhook-endpoints", h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any)); n != 1 {
		t.Errorf("%d endpoints stored, want only the valid one", n)
	}
}

func TestEndpointLimitAndList(t *testing.T) {
	h := newHarness(t)
	ids := make([]string, 0, 10)
	for i := 0; i < voiceops.MaxEndpointsPerAccount; i++ {
		body := validEndpoint()
		if i%2 == 1 {
			body = with(body, "enabled", false, "event_types", []string{"alerts.resolved"})
		}
		h.clock.Advance(time.Second)
		ids = append(ids, h.do("POST", "/v1/webhook-endpoints", h.keyA, body).Expect(t, 201).JSON(t)["id"].(string))
	}
	h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(t, 409)
	h.do("POST", "/v1/webhook-endpoints", h.keyB, validEndpoint()).Expect(t, 201)
	list := func(q string) []string {
		var out []string
		for _, e := range h.do("GET", "/v1/webhook-endpoints"+q, h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any) {
			m := e.(map[string]any)
			if _, leak := m["signing_secret"]; leak {
				t.Errorf("list leaks signing_secret")
			}
			out = append(out, m["id"].(string))
		}
		return out
	}
	if got := list(""); !slices.Equal(got, ids) {
		t.Errorf("list = %v, want %v (creation order)", got, ids)
	}
	if got := list("?enabled=false"); len(got) != 5 {
		t.Errorf("enabled=false: %d", len(got))
	}
	if got := list("?event_type=alerts.triggered"); len(got) != 5 {
		t.Errorf("event_type=alerts.triggered: %d", len(got))
	}
	if got := list("?event_type=alerts.resolved&enabled=true"); len(got) != 5 {
		t.Errorf("resolved+enabled: %d", len(got))
	}
	for q, f := range map[string]string{"?enabled=1": "enabled", "?event_type=alerts.all": "event_type"} {
		if got := h.do("GET", "/v1/webhook-endpoints"+q, h.keyA, nil).Expect(t, 400).FieldErrors(t); !slices.Equal(got, []string{f}) {
			t.Errorf("%s: %v", q, got)
		}
	}
	h.do("DELETE", "/v1/webhook-endpoints/"+ids[0], h.keyA, nil).Expect(t, 204)
	h.do("DELETE", "/v1/webhook-endpoints/"+ids[0], h.keyA, nil).Expect(t, 404)
	h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(t, 201)
}

func TestPatchEndpoint(t *testing.T) {
	h := newHarness(t)
	created := h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(t, 201).JSON(t)
	delete(created, "signing_secret")
	path := "/v1/webhook-endpoints/" + created["id"].(string)
	h.clock.Advance(time.Minute)
	if got := h.do("PATCH", path, h.keyA, map[string]any{}).Expect(t, 200).JSON(t); !reflect.DeepEqual(got, created) {
		t.Errorf("PATCH {} = %v, want %v", got, created)
	}
	got := h.do("PATCH", path, h.keyA, map[string]any{"enabled": false, "timeout_ms": 30000, "headers": map[string]string{"X-A": "1"}}).Expect(t, 200).JSON(t)
	if got["enabled"] != false || got["timeout_ms"] != float64(30000) || !reflect.DeepEqual(got["headers"], map[string]any{"X-A": "1"}) ||
		got["updated_at"] != "2026-11-22T10:01:00.000Z" || got["url"] != created["url"] {
		t.Errorf("PATCH = %v", got)
	}
	for name, body := range map[string]map[string]any{
		"http url":      {"url": "http://example.com"},
		"empty types":   {"event_types": []string{}},
		"null name":     {"name": nil},
		"null headers":  {"headers": nil},
		"reserved":      {"headers": map[string]string{"webhook-signature": "x"}},
		"unknown":       {"secret": "x"},
		"timeout":       {"timeout_ms": 100},
		"private url":   {"url": "https://192.168.1.1/"},
		"enabled maybe": {"enabled": "maybe"},
	} {
		t.Run(name, func(t *testing.T) { h.do("PATCH", path, h.keyA, body).Expect(t, 422) })
	}
	if after := h.do("GET", path, h.keyA, nil).Expect(t, 200).JSON(t); !reflect.DeepEqual(after, got) {
		t.Errorf("invalid PATCHes changed the endpoint: %v", after)
	}
	h.do("PATCH", path, h.keyB, map[string]any{"name": "x"}).Expect(t, 404)
	h.do("PATCH", "/v1/webhook-endpoints/ar_x", h.keyA, map[string]any{}).Expect(t, 422)
}

func TestRotateSecret(t *testing.T) {
	h := newHarness(t)
	created := h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(t, 201).JSON(t)
	id, first := created["id"].(string), created["signing_secret"].(string)
	path := "/v1/webhook-endpoints/" + id + "/rotate-secret"
	ctx := context.Background()

	// No body: the old secret stops at once.
	got := h.do("POST", path, h.keyA, nil).Expect(t, 200).JSON(t)
	second := got["signing_secret"].(string)
	if second == first || !strings.HasPrefix(second, "whsec_") || got["previous_secret_expires_at"] != nil {
		t.Errorf("rotate = %v", got)
	}
	e, err := h.stores.Endpoints.GetEndpoint(ctx, "acct_a", id)
	if err != nil || !slices.Equal(e.ValidSecrets(h.clock.Now()), []string{second}) {
		t.Errorf("valid secrets after rotation without overlap: %v, %v", e.ValidSecrets(h.clock.Now()), err)
	}
	// With an overlap both sign until it ends.
	got = h.do("POST", path, h.keyA, map[string]any{"previous_secret_expires_in": 3600}).Expect(t, 200).JSON(t)
	third := got["signing_secret"].(string)
	if got["previous_secret_expires_at"] != "2026-11-22T11:00:00.000Z" {
		t.Errorf("previous_secret_expires_at = %v", got["previous_secret_expires_at"])
	}
	e, _ = h.stores.Endpoints.GetEndpoint(ctx, "acct_a", id)
	if s := e.ValidSecrets(h.clock.Now()); !slices.Equal(s, []string{third, second}) {
		t.Errorf("valid secrets during overlap: %v", s)
	}
	if s := e.ValidSecrets(h.clock.Now().Add(time.Hour)); !slices.Equal(s, []string{third}) {
		t.Errorf("valid secrets after overlap: %v", s)
	}
	// GET still hides it.
	if res := h.do("GET", "/v1/webhook-endpoints/"+id, h.keyA, nil).Expect(t, 200); strings.Contains(string(res.Body), third) {
		t.Errorf("GET leaks the rotated secret")
	}
	for name, body := range map[string]any{
		"too long overlap": map[string]any{"previous_secret_expires_in": 86401},
		"negative":         map[string]any{"previous_secret_expires_in": -1},
		"fraction":         map[string]any{"previous_secret_expires_in": 1.5},
		"unknown":          map[string]any{"expires": 1},
	} {
		t.Run(name, func(t *testing.T) { h.do("POST", path, h.keyA, body).Expect(t, 422) })
	}
	h.do("POST", path, h.keyA, "[]").Expect(t, 400)
	h.do("POST", path, h.keyB, nil).Expect(t, 404)
	h.do("POST", "/v1/webhook-endpoints/whe_nope/rotate-secret", h.keyA, nil).Expect(t, 404)
	e, _ = h.stores.Endpoints.GetEndpoint(ctx, "acct_a", id)
	if e.Secret != third {
		t.Errorf("failed rotations changed the secret")
	}
}
