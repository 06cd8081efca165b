package console

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

// get serves one file of a console's routes.
func get(t *testing.T, routes []httpapi.Route, file string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("GET", "/console/"+file, nil)
	r.SetPathValue("file", file)
	w := httptest.NewRecorder()
	if err := routes[1].Handle(w, r, httpapi.Caller{}); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return w
}

func TestTheBaseHostIsNamed(t *testing.T) {
	routes, err := RoutesWith("https://abc123.execute-api.us-east-1.amazonaws.com/")
	if err != nil {
		t.Fatal(err)
	}
	page := get(t, routes, "")
	csp := page.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "connect-src 'self' https://abc123.execute-api.us-east-1.amazonaws.com;") || strings.Contains(csp, "*") {
		t.Errorf("CSP = %q, want connect-src naming the base origin and no wildcard", csp)
	}
	if !strings.Contains(page.Body.String(), "app.js") {
		t.Errorf("page = %.100s", page.Body)
	}
	var cfg struct {
		BaseURL string `json:"base_url"`
	}
	w := get(t, routes, "config.json")
	if err := json.Unmarshal(w.Body.Bytes(), &cfg); err != nil || cfg.BaseURL != "https://abc123.execute-api.us-east-1.amazonaws.com" ||
		w.Header().Get("Content-Type") != "application/json" || w.Header().Get("ETag") == "" {
		t.Errorf("config.json = %s %v (%v)", w.Body, w.Header(), err)
	}

	// One origin (the dev server): 'self' only, and an empty base URL.
	same := Routes()
	if csp := get(t, same, "app.js").Header().Get("Content-Security-Policy"); csp != Policy || !strings.Contains(csp, "connect-src 'self';") {
		t.Errorf("same-origin CSP = %q", csp)
	}
	if body := get(t, same, "config.json").Body.String(); body != `{"base_url":""}` {
		t.Errorf("same-origin config.json = %s", body)
	}

	for _, bad := range []string{"abc.example.com", "ftp://x.example", "https://", "https://a.example; script-src *", "https://*.example", "https://u:p@a.example"} {
		if _, err := RoutesWith(bad); err == nil {
			t.Errorf("RoutesWith(%q) accepted", bad)
		}
	}
}
