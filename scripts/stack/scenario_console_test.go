//go:build stack

package main

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// The console deployed: the studio host serves it with a CSP naming the
// base host's origin and a config.json naming its URL (the alerts
// function's CONSOLE_BASE_URL, from the template), and the base host
// answers the console's CORS preflight and its cross-origin GET as API
// Gateway does with the template's CorsConfiguration.
func TestConsoleReachesTheBaseHost(t *testing.T) {
	studio, base := st.Credentials.AgentStudioURL, strings.TrimSuffix(st.Credentials.BaseURL, "/")
	bu, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	baseOrigin := bu.Scheme + "://" + bu.Host
	code, h, b := call(t, "GET", studio+"/console/", nil, nil, nil)
	if code != 200 || !strings.Contains(string(b), "<html") {
		t.Fatalf("GET /console/ = %d %.200s", code, b)
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self' "+baseOrigin+";") {
		t.Errorf("CSP = %q, want connect-src 'self' %s", csp, baseOrigin)
	}
	var cfg struct {
		BaseURL string `json:"base_url"`
	}
	if code, _, b := call(t, "GET", studio+"/console/config.json", nil, nil, &cfg); code != 200 || cfg.BaseURL != base {
		t.Errorf("config.json = %d %s, want base_url %s", code, b, base)
	}

	su, _ := url.Parse(studio)
	consoleOrigin := su.Scheme + "://" + su.Host
	acct := st.Credentials.Accounts[0]
	p := acct.Projects[0]
	conv := fmt.Sprintf("%s/v3/%s/%s/conversations", base, acct.AccountID, p.ProjectID)
	code, h, b = call(t, "OPTIONS", conv, map[string]string{"Origin": consoleOrigin,
		"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-api-key"}, nil, nil)
	if code != 204 {
		t.Errorf("preflight = %d %s, want 204", code, b)
	}
	for k, v := range map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET",
		"Access-Control-Allow-Headers": "x-api-key,content-type", "Access-Control-Max-Age": "3600"} {
		if got := h.Get(k); got != v {
			t.Errorf("preflight %s = %q, want %q", k, got, v)
		}
	}
	code, h, b = call(t, "GET", conv, map[string]string{"Origin": consoleOrigin, "x-api-key": p.APIKey}, nil, nil)
	if code != 200 || h.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("GET with Origin = %d, Access-Control-Allow-Origin %q, want 200 and *: %.200s", code, h.Get("Access-Control-Allow-Origin"), b)
	}
	// The studio host answers no CORS: the console is its own origin there.
	if _, h, _ := call(t, "GET", studio+"/console/", map[string]string{"Origin": baseOrigin}, nil, nil); h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("studio host: Access-Control-Allow-Origin %q, want none", h.Get("Access-Control-Allow-Origin"))
	}
}
