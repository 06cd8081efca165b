package apidocs_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/apidocs"
	"github.com/voiceops/opsapi/shared/platform/apispec"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

// The embedded parts are the document's: a change to openapi.json needs
// `go generate ./shared/platform/apidocs`.
func TestThePartsAreCurrent(t *testing.T) {
	for _, h := range []apidocs.Host{apidocs.Studio, apidocs.Base} {
		want, err := apidocs.Split(apispec.Document(), h)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.TrimSpace(apidocs.Part(h)), want) {
			t.Errorf("shared/platform/apidocs/%s.json is stale: run go generate ./shared/platform/apidocs", h)
		}
	}
}

// Each part holds its host's paths and no other's; together they hold
// every path of the document.
func TestEachHostHasItsOwnPaths(t *testing.T) {
	var whole struct{ Paths map[string]any }
	if err := json.Unmarshal(apispec.Document(), &whole); err != nil {
		t.Fatal(err)
	}
	seen := map[string]apidocs.Host{}
	for _, h := range []apidocs.Host{apidocs.Studio, apidocs.Base} {
		var part struct {
			Paths    map[string]any
			Servers  []struct{ URL string }
			Webhooks map[string]any
		}
		if err := json.Unmarshal(apidocs.Part(h), &part); err != nil {
			t.Fatal(err)
		}
		for p := range part.Paths {
			if other, dup := seen[p]; dup {
				t.Errorf("%s is in both the %s and the %s part", p, other, h)
			}
			seen[p] = h
		}
		onBase := len(part.Servers) > 0 && strings.Contains(part.Servers[0].URL, ".api.")
		if onBase != (h == apidocs.Base) || (h == apidocs.Base) == (part.Webhooks != nil) {
			t.Errorf("%s part: servers %v, webhooks %v", h, part.Servers, part.Webhooks != nil)
		}
	}
	for _, p := range []string{"/v1/alert-rules", "/internal/v1/metric-events"} {
		if seen[p] != apidocs.Studio {
			t.Errorf("%s: in the %q part, want studio", p, seen[p])
		}
	}
	for _, p := range []string{"/v3/{account_id}/{project_id}/conversations", "/v1/outbound-calling/trigger"} {
		if seen[p] != apidocs.Base {
			t.Errorf("%s: in the %q part, want base", p, seen[p])
		}
	}
	if len(seen) != len(whole.Paths) {
		t.Errorf("the parts hold %d paths, the document %d", len(seen), len(whole.Paths))
	}
}

// /openapi.json and /docs answer without a key; the page shows every
// operation of the part and loads nothing from elsewhere.
func TestRoutesServeThePartAndItsReference(t *testing.T) {
	h := httpapi.New(httpapi.Config{Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, apidocs.Routes(apidocs.Base))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/openapi.json", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" || !bytes.Equal(rec.Body.Bytes(), apidocs.Part(apidocs.Base)) {
		t.Fatalf("/openapi.json: %d %s", rec.Code, rec.Header())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/docs", nil))
	page := rec.Body.String()
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("/docs: %d %s", rec.Code, rec.Header())
	}
	for _, want := range []string{"<code>/v1/outbound-calling/trigger</code>", `id="triggerOutboundCall"`, `<a href="#schema-`, "<h2>Schemas</h2>"} {
		if !strings.Contains(page, want) {
			t.Errorf("/docs lacks %q", want)
		}
	}
	for _, never := range []string{"<script", "src=\"http", "href=\"http", "/v1/alert-rules"} {
		if strings.Contains(page, never) {
			t.Errorf("/docs holds %q", never)
		}
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/docs", nil))
	if rec.Code != 405 || !strings.Contains(rec.Body.String(), `"error_message"`) {
		t.Errorf("POST /docs on the base host: %d %s", rec.Code, rec.Body)
	}
}

// TestDocumentsCarryTheirPolicy: the page and the document each carry a
// Content-Security-Policy that loads nothing from elsewhere and forbids
// framing, and nosniff.
func TestDocumentsCarryTheirPolicy(t *testing.T) {
	for _, host := range []apidocs.Host{apidocs.Studio, apidocs.Base} {
		h := httpapi.New(httpapi.Config{Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, apidocs.Routes(host))
		for _, path := range []string{"/docs", "/openapi.json"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			csp := rec.Header().Get("Content-Security-Policy")
			if rec.Code != 200 || !strings.HasPrefix(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
				strings.Contains(csp, "script-src") || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s GET %s: %d, CSP %q, nosniff %q", host, path, rec.Code, csp, rec.Header().Get("X-Content-Type-Options"))
			}
		}
	}
}
