package apigw

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCORS(t *testing.T) {
	cors, err := ParseCORS(map[string]any{"AllowOrigins": []any{"*"}, "AllowHeaders": []any{"x-api-key", "content-type"},
		"AllowMethods": []any{"GET"}, "MaxAge": float64(3600)})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	router, _ := NewRouter([]Route{{Key: "GET /v3/a/p/conversations", Function: "conv"}})
	a := &API{Router: router, CORS: cors, Invoke: func(context.Context, string, []byte) ([]byte, bool, error) {
		calls++
		// The integration's own CORS header is replaced by the API's.
		return []byte(`{"statusCode":200,"headers":{"Access-Control-Allow-Origin":"https://evil.example"},"body":"{}"}`), false, nil
	}}
	do := func(method string, h map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "http://base.local/v3/a/p/conversations", nil)
		for k, v := range h {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		a.ServeHTTP(w, r)
		return w
	}
	console := "https://studio.example"
	pre := do("OPTIONS", map[string]string{"Origin": console, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-api-key"})
	want := map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET",
		"Access-Control-Allow-Headers": "x-api-key,content-type", "Access-Control-Max-Age": "3600"}
	if pre.Code != http.StatusNoContent || calls != 0 {
		t.Errorf("preflight = %d (function called %d times), want 204 from the gateway", pre.Code, calls)
	}
	for k, v := range want {
		if got := pre.Header().Get(k); got != v {
			t.Errorf("preflight %s = %q, want %q", k, got, v)
		}
	}
	get := do("GET", map[string]string{"Origin": console, "x-api-key": "k"})
	if get.Code != 200 || calls != 1 || get.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("GET with Origin = %d, Allow-Origin %q, want 200 and *", get.Code, get.Header().Get("Access-Control-Allow-Origin"))
	}
	if plain := do("GET", nil); plain.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("GET without Origin has Allow-Origin %q", plain.Header().Get("Access-Control-Allow-Origin"))
	}
	if nf := do("OPTIONS", map[string]string{"Origin": console}); nf.Code != http.StatusNotFound {
		t.Errorf("OPTIONS without Access-Control-Request-Method = %d, want routing's 404", nf.Code)
	}

	// Exact origins: only those are named; another gets no header.
	a.CORS = &CORS{AllowOrigins: []string{console}, AllowMethods: []string{"GET"}}
	if got := do("GET", map[string]string{"Origin": console}).Header().Get("Access-Control-Allow-Origin"); got != console {
		t.Errorf("exact origin: Allow-Origin %q, want %q", got, console)
	}
	other := do("OPTIONS", map[string]string{"Origin": "https://other.example", "Access-Control-Request-Method": "GET"})
	if other.Code != http.StatusNoContent || other.Header().Get("Access-Control-Allow-Origin") != "" || other.Header().Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("other origin's preflight = %d %v, want 204 without CORS headers", other.Code, other.Header())
	}
	// Without a CORS configuration, OPTIONS is routed and nothing is added.
	a.CORS = nil
	if w := do("OPTIONS", map[string]string{"Origin": console, "Access-Control-Request-Method": "GET"}); w.Code != http.StatusNotFound {
		t.Errorf("no CORS: preflight = %d, want 404", w.Code)
	}
	if w := do("GET", map[string]string{"Origin": console}); w.Header().Get("Access-Control-Allow-Origin") != "https://evil.example" {
		t.Errorf("no CORS: the integration's headers pass as they are, got %v", w.Header())
	}

	for _, bad := range []any{"x", map[string]any{"AllowOrigins": "*"}, map[string]any{"MaxAge": "1"}, map[string]any{"Nope": true}} {
		if _, err := ParseCORS(bad); err == nil {
			t.Errorf("ParseCORS(%v) accepted", bad)
		}
	}
}
