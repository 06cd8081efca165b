package httpapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

// A host that serves one family answers every request in its error shape:
// "/", unknown routes and wrong methods included. A handler serving both
// (the dev server) tells them apart by path.
func TestUnknownRoutesAnswerInTheHostsErrorShape(t *testing.T) {
	ok := func(w http.ResponseWriter, _ *http.Request, _ httpapi.Caller) error { w.WriteHeader(204); return nil }
	studioRoute := httpapi.Route{Method: "GET", Path: "/v1/alert-rules", Family: httpapi.StudioErrors, Auth: httpapi.Public, Handle: ok}
	baseRoute := httpapi.Route{Method: "GET", Path: "/v1/outbound-calling/trigger", Family: httpapi.BaseErrors, Auth: httpapi.Public, Handle: ok}
	cfg := httpapi.Config{Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, c := range []struct {
		name   string
		routes []httpapi.Route
		method string
		path   string
		status int
		field  string
	}{
		{"studio host, /", []httpapi.Route{studioRoute}, "GET", "/", 404, "message"},
		{"studio host, a base-host path", []httpapi.Route{studioRoute}, "GET", "/v3/a/b/conversations", 404, "message"},
		{"base host, /", []httpapi.Route{baseRoute}, "GET", "/", 404, "error_message"},
		{"base host, unknown", []httpapi.Route{baseRoute}, "GET", "/nope", 404, "error_message"},
		{"base host, wrong method", []httpapi.Route{baseRoute}, "DELETE", "/v1/outbound-calling/trigger", 405, "error_message"},
		{"base host, a studio-host path", []httpapi.Route{baseRoute}, "GET", "/v1/alert-rules/x", 404, "error_message"},
		{"both, a studio-host path", []httpapi.Route{studioRoute, baseRoute}, "GET", "/v1/alert-rules/x/y", 404, "message"},
		{"both, a base-host path", []httpapi.Route{studioRoute, baseRoute}, "GET", "/v3/x", 404, "error_message"},
	} {
		rec := httptest.NewRecorder()
		httpapi.New(cfg, c.routes).ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != c.status {
			t.Errorf("%s: %d %s", c.name, rec.Code, rec.Body)
			continue
		}
		if _, found := body[c.field]; !found || body["request_id"] == nil {
			t.Errorf("%s: %s, want %q and request_id", c.name, rec.Body, c.field)
		}
	}
}
