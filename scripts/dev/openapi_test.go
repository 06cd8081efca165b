package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/apispec"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

// TestOpenAPIPathsAreNotCleaned: over a real connection, the paths a
// ServeMux would clean and redirect reach the API's
// guard and get its JSON 404 with a request ID; /openapi.json is the
// document.
func TestOpenAPIPathsAreNotCleaned(t *testing.T) {
	api := httpapi.New(httpapi.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(withOpenAPI(api))
	defer srv.Close()
	raw := func(method, path string) (*http.Response, string) {
		t.Helper()
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", method, path)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	for _, p := range []string{"//openapi.json", "/v1/../openapi.json", "/./openapi.json", "/openapi.json/", "//v1/alert-rules",
		"/v1/alert-rules/..", "/v1/alert-rules/../webhook-endpoints", "/v1//outbound-calling/trigger"} {
		res, body := raw("GET", p)
		if res.StatusCode != 404 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") ||
			res.Header.Get("X-Request-Id") == "" || res.Header.Get("Location") != "" || !strings.Contains(body, `"request_id":"req_`) {
			t.Errorf("GET %s: %d %v %s", p, res.StatusCode, res.Header, body)
		}
	}
	res, body := raw("GET", "/openapi.json")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" || body != string(apispec.Document()) {
		t.Errorf("GET /openapi.json: %d %v", res.StatusCode, res.Header)
	}
	if res, _ := raw("POST", "/openapi.json"); res.StatusCode < 400 || res.Header.Get("X-Request-Id") == "" {
		t.Errorf("POST /openapi.json: %d %v", res.StatusCode, res.Header)
	}
}
