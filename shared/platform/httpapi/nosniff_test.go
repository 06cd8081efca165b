package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestEveryAnswerIsNoSniff: a success, a handler's error, a panic, an
// unknown route and a wrong method all carry nosniff; the 404 and 405
// name the path percent-encoded, so no markup of the request comes back.
func TestEveryAnswerIsNoSniff(t *testing.T) {
	h := New(Config{Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, []Route{
		{Method: "GET", Path: "/v1/ok", Auth: Public, Handle: func(w http.ResponseWriter, _ *http.Request, _ Caller) error {
			WriteJSON(w, 200, map[string]string{"ok": "yes"})
			return nil
		}},
		{Method: "GET", Path: "/v1/fails", Auth: Public, Handle: func(http.ResponseWriter, *http.Request, Caller) error {
			return BadRequest("x", "is bad")
		}},
		{Method: "GET", Path: "/v1/panics", Auth: Public, Handle: func(http.ResponseWriter, *http.Request, Caller) error {
			panic("boom")
		}},
	})
	for _, c := range []struct {
		method, target string
		status         int
	}{
		{"GET", "/v1/ok", 200},
		{"GET", "/v1/fails", 400},
		{"GET", "/v1/panics", 500},
		{"GET", "/v1/%3Cimg%20src=x%20onerror=alert(1)%3E", 404},
		{"GET", `/v1/"><script>alert(1)</script>`, 404},
		{"DELETE", "/v1/ok", 405},
		{"GET", "/v1/%3Cb%3E/../x", 404},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.target, nil))
		body := rec.Body.String()
		if rec.Code != c.status || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s: %d, nosniff %q; want %d and nosniff", c.method, c.target, rec.Code, rec.Header().Get("X-Content-Type-Options"), c.status)
		}
		if strings.ContainsAny(body, "<>") || strings.Contains(body, `\"`) {
			t.Errorf("%s %s: the body quotes markup back: %s", c.method, c.target, body)
		}
	}
}
