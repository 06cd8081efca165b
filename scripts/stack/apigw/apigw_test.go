package apigw

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	r, err := NewRouter([]Route{
		{Key: "ANY /v1/alert-rules", Function: "alerts"},
		{Key: "ANY /v1/alert-rules/{proxy+}", Function: "alerts"},
		{Key: "GET /v1/alert-rules/special", Function: "special"},
		{Key: "POST /{version}/{account_id}/{project_id}/chat/create", Function: "chat"},
		{Key: "GET /v1/{account_id}/{project_id}/conversations", Function: "conv"},
		{Key: "GET /v1/{account_id}/{project_id}/conversations/concurrency", Function: "conc"},
		{Key: "GET /v1/outbound-calling/{callSid}/status", Function: "outbound"},
		{Key: "GET /v1/{a}/{b}/status", Function: "vars"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path string
		want         string // function; "" for no match
		params       map[string]string
	}{
		{"GET", "/v1/alert-rules", "alerts", nil},
		{"DELETE", "/v1/alert-rules/rule_1", "alerts", map[string]string{"proxy": "rule_1"}},
		{"GET", "/v1/alert-rules/a/b", "alerts", map[string]string{"proxy": "a/b"}},
		{"GET", "/v1/alert-rules/special", "special", nil},
		{"POST", "/v1/alert-rules/special", "alerts", map[string]string{"proxy": "special"}},
		{"POST", "/v3/acct/proj/chat/create", "chat", map[string]string{"version": "v3", "account_id": "acct", "project_id": "proj"}},
		{"GET", "/v3/acct/proj/chat/create", "", nil},
		{"GET", "/v1/acct/proj/conversations/concurrency", "conc", map[string]string{"account_id": "acct", "project_id": "proj"}},
		{"GET", "/v1/outbound-calling/CA1/status", "outbound", map[string]string{"callSid": "CA1"}},
		{"GET", "/v1/x/y/status", "vars", map[string]string{"a": "x", "b": "y"}},
		{"GET", "/nope", "", nil},
		{"GET", "/v1/alert-rulesX", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			m, ok := r.Match(tt.method, tt.path)
			if tt.want == "" {
				if ok {
					t.Fatalf("matched %q, want no match", m.Key)
				}
				return
			}
			if !ok || m.Function != tt.want {
				t.Fatalf("Match = %q (%v), want %s", m.Function, ok, tt.want)
			}
			if !reflect.DeepEqual(m.PathParameters, tt.params) {
				t.Errorf("params = %v, want %v", m.PathParameters, tt.params)
			}
		})
	}
	withDefault, _ := NewRouter([]Route{{Key: "GET /a", Function: "a"}, {Key: "$default", Function: "def"}})
	if m, ok := withDefault.Match("GET", "/a"); !ok || m.Function != "a" {
		t.Errorf("a route loses to $default")
	}
	if m, ok := withDefault.Match("POST", "/a"); !ok || m.Function != "def" || m.Key != "$default" {
		t.Errorf("$default does not catch the rest: %+v", m)
	}
	if _, err := NewRouter([]Route{{Key: "GET"}}); err == nil {
		t.Error("a route key without a path was accepted")
	}
}

func TestBuildEvent(t *testing.T) {
	r := httptest.NewRequest("POST", "http://studio.local/v1/alert-rules?a=1&a=2&b=x%20y", strings.NewReader(`{"x":1}`))
	r.Header.Add("Idempotency-Key", "order-42,retry-1")
	r.Header.Add("X-Multi", "one")
	r.Header.Add("X-Multi", "two")
	r.Header.Add("Cookie", "a=1; b=2")
	r.Header.Set("Content-Type", "application/json")
	m := Match{Route: Route{Key: "ANY /v1/alert-rules", Function: "alerts"}}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := BuildEvent(r, []byte(`{"x":1}`), m, EventContext{AccountID: "1", APIID: "api", Stage: "$default", RequestID: "rid", Now: now})
	if ev.Version != "2.0" || ev.RouteKey != "ANY /v1/alert-rules" || ev.RawPath != "/v1/alert-rules" || ev.RawQueryString != "a=1&a=2&b=x%20y" {
		t.Errorf("event head = %+v", ev)
	}
	if ev.Headers["idempotency-key"] != "order-42,retry-1" || ev.Headers["x-multi"] != "one,two" {
		t.Errorf("headers = %v", ev.Headers)
	}
	if _, ok := ev.Headers["cookie"]; ok || !reflect.DeepEqual(ev.Cookies, []string{"a=1", "b=2"}) {
		t.Errorf("cookies = %v, headers %v", ev.Cookies, ev.Headers)
	}
	if ev.QueryStringParameters["a"] != "1,2" || ev.QueryStringParameters["b"] != "x y" {
		t.Errorf("query = %v", ev.QueryStringParameters)
	}
	rc := ev.RequestContext
	if rc.RequestID != "rid" || rc.Stage != "$default" || rc.RouteKey != m.Key || rc.HTTP.Method != "POST" || rc.HTTP.Path != "/v1/alert-rules" || rc.HTTP.SourceIP == "" || rc.TimeEpoch != now.UnixMilli() {
		t.Errorf("requestContext = %+v", rc)
	}
	if ev.Body != `{"x":1}` || ev.IsBase64Encoded {
		t.Errorf("body = %q base64 %v", ev.Body, ev.IsBase64Encoded)
	}
	bin := BuildEvent(httptest.NewRequest("POST", "/x", nil), []byte{0xff, 0x00}, m, EventContext{Now: now})
	if !bin.IsBase64Encoded || bin.Body != "/wA=" {
		t.Errorf("binary body = %q base64 %v", bin.Body, bin.IsBase64Encoded)
	}
}

func TestDecodeResponse(t *testing.T) {
	full := DecodeResponse([]byte(`{"statusCode":201,"headers":{"X-Request-Id":"r"},"cookies":["c=1"],"body":"{}"}`), false)
	if full.Status != 201 || full.Headers.Get("X-Request-Id") != "r" || full.Headers.Get("Set-Cookie") != "c=1" || string(full.Body) != "{}" {
		t.Errorf("full response = %+v", full)
	}
	if r := DecodeResponse([]byte(`{"a":1}`), false); r.Status != 200 || string(r.Body) != `{"a":1}` {
		t.Errorf("bare JSON = %+v", r)
	}
	for _, bad := range []struct {
		out   string
		fnErr bool
	}{{`{"errorMessage":"boom","errorType":"x"}`, true}, {`Task timed out after 10.00 seconds`, false}, {`{"statusCode":9999}`, false}} {
		if r := DecodeResponse([]byte(bad.out), bad.fnErr); r.Status != 500 || string(r.Body) != `{"message":"Internal Server Error"}` {
			t.Errorf("DecodeResponse(%s) = %d %s", bad.out, r.Status, r.Body)
		}
	}
}

func TestAPIAnswers(t *testing.T) {
	router, _ := NewRouter([]Route{{Key: "GET /ok", Function: "ok"}, {Key: "GET /slow", Function: "slow"}})
	a := &API{Router: router, Timeout: 50 * time.Millisecond, Invoke: func(ctx context.Context, fn string, payload []byte) ([]byte, bool, error) {
		var ev map[string]any
		if err := json.Unmarshal(payload, &ev); err != nil {
			t.Errorf("payload: %v", err)
		}
		if fn == "slow" {
			time.Sleep(200 * time.Millisecond)
		}
		return []byte(`{"statusCode":200,"body":"fine"}`), false, nil
	}}
	srv := httptest.NewServer(a)
	defer srv.Close()
	for _, tt := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/ok", 200, "fine"},
		{"GET", "/nope", 404, `{"message":"Not Found"}`},
		{"POST", "/ok", 404, `{"message":"Not Found"}`},
		{"GET", "/slow", 503, `{"message":"Service Unavailable"}`},
	} {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || strings.TrimSpace(string(b)) != tt.body || resp.Header.Get("Apigw-Requestid") == "" {
			t.Errorf("%s %s = %d %s, want %d %s", tt.method, tt.path, resp.StatusCode, b, tt.status, tt.body)
		}
	}
}
