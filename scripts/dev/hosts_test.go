package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHostNames(t *testing.T) {
	for _, c := range []struct {
		addr, publicURL string
		host            string
		ok              bool
	}{
		{"127.0.0.1:8080", "", "127.0.0.1:8080", true},
		{"127.0.0.1:8080", "", "localhost:8080", true},
		{"127.0.0.1:8080", "", "LOCALHOST", true},
		{"127.0.0.1:8080", "", "[::1]:8080", true},
		{"127.0.0.1:8080", "", "127.0.0.2", true},
		{"127.0.0.1:8080", "", "rebind.example:8080", false},
		{"127.0.0.1:8080", "", "localhost.rebind.example", false},
		{"127.0.0.1:8080", "", "192.168.1.20:8080", false},
		{"127.0.0.1:8080", "", "", false},
		{"devbox.lan:8080", "", "devbox.lan:8080", true},
		{"0.0.0.0:8080", "", "192.168.1.20:8080", true},
		{"0.0.0.0:8080", "", "rebind.example", false},
		{"[::]:8080", "", "[fe80::1]:8080", true},
		{"192.168.1.20:8080", "", "192.168.1.20:8080", true},
		{"192.168.1.20:8080", "", "192.168.1.21:8080", false},
		{"127.0.0.1:8080", "https://abc.ngrok.example", "abc.ngrok.example", true},
		{"127.0.0.1:8080", "https://abc.ngrok.example", "abd.ngrok.example", false},
	} {
		if got := newHostNames(c.addr, c.publicURL).allows(c.host); got != c.ok {
			t.Errorf("-addr %s -public-url %q, Host %q: %v, want %v", c.addr, c.publicURL, c.host, got, c.ok)
		}
	}
}

// TestDevServerAnswersOnlyItsHostNames: over the running dev server, a
// request naming another host (a DNS-rebinding page) is 421 and reads
// nothing, the metrics and the documents included; its own names are
// served; every answer carries nosniff.
func TestDevServerAnswersOnlyItsHostNames(t *testing.T) {
	creds, stop := startDev(t)
	defer func() { _ = stop() }()
	get := func(path, host string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", creds.AgentStudioURL+path, nil)
		if host != "" {
			req.Host = host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	for _, path := range []string{"/metrics", "/docs", "/openapi.json", "/v1/alert-rules", "/console/"} {
		res, body := get(path, "rebind.example:8080")
		var e struct {
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		}
		if res.StatusCode != http.StatusMisdirectedRequest || json.Unmarshal([]byte(body), &e) != nil || e.Message == "" ||
			!strings.HasPrefix(e.RequestID, "req_") || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s as rebind.example: %d %v %s", path, res.StatusCode, res.Header, body)
		}
		for _, host := range []string{"", "localhost"} {
			if res, body := get(path, host); res.StatusCode == http.StatusMisdirectedRequest || res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("GET %s as %q: %d %v %.200s", path, host, res.StatusCode, res.Header, body)
			}
		}
	}
	if res, _ := get("/docs", ""); res.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("GET /docs: no Content-Security-Policy")
	}
	if res, _ := get("/openapi.json", ""); res.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("GET /openapi.json: no Content-Security-Policy")
	}
}

func TestWithHostsAnswers421(t *testing.T) {
	h := withHosts(newHostNames("127.0.0.1:0", ""), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Host = "attacker.example"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 421 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Errorf("%d %v", rec.Code, rec.Header())
	}
}
