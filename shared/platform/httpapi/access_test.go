package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/logctx"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
)

// TestAccessLineCarriesAllThreeRequestIDs runs a request through the
// Lambda adapter: the access line, and a line the handler logs, name our
// request ID, API Gateway's and Lambda's; the metrics batch counts it.
func TestAccessLineCarriesAllThreeRequestIDs(t *testing.T) {
	var logs, metrics bytes.Buffer
	log := slog.New(logctx.New(slog.NewJSONHandler(&logs, nil)))
	batch := emf.New(&metrics, nil)
	h := httpapi.New(httpapi.Config{Log: log, Metrics: batch}, []httpapi.Route{{
		Method: "GET", Path: "/v1/{account_id}/{project_id}/thing", Family: httpapi.BaseErrors, Auth: httpapi.Public,
		Handle: func(w http.ResponseWriter, r *http.Request, _ httpapi.Caller) error {
			log.InfoContext(r.Context(), "inside the handler")
			httpapi.WriteJSON(w, http.StatusTeapot, map[string]string{"ok": "yes"})
			return nil
		},
	}})
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "lambda-req-456"})
	res, err := emf.Flushing(batch, httpapi.LambdaHandler(h))(ctx, events.APIGatewayV2HTTPRequest{
		RawPath: "/v1/acct_a/proj_a1/thing", Headers: map[string]string{"x-api-key": "vo_api_us_not-logged"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: "apigw-req-123", HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/v1/acct_a/proj_a1/thing"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rid := res.Headers["X-Request-Id"]
	if res.StatusCode != http.StatusTeapot || rid == "" {
		t.Fatalf("status %d, X-Request-Id %q", res.StatusCode, rid)
	}
	var access, inside map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		switch m["msg"] {
		case "request":
			access = m
		case "inside the handler":
			inside = m
		}
	}
	for name, line := range map[string]map[string]any{"access line": access, "handler's line": inside} {
		for k, want := range map[string]any{"request_id": rid, "apigw_request_id": "apigw-req-123", "lambda_request_id": "lambda-req-456"} {
			if line[k] != want {
				t.Errorf("%s: %s = %v, want %v (%v)", name, k, line[k], want, line)
			}
		}
	}
	for k, want := range map[string]any{"method": "GET", "route": "GET /v1/{account_id}/{project_id}/thing", "status": 418.0, "host": "base"} {
		if access[k] != want {
			t.Errorf("access line: %s = %v, want %v", k, access[k], want)
		}
	}
	if _, ok := access["duration_ms"].(float64); !ok {
		t.Errorf("access line: no duration_ms (%v)", access)
	}
	if strings.Contains(logs.String(), "not-logged") {
		t.Errorf("a header's key reached the log:\n%s", logs.String())
	}
	line := strings.TrimSpace(metrics.String())
	if err := emf.Validate([]byte(line)); err != nil {
		t.Fatalf("EMF line %s: %v", line, err)
	}
	if !strings.Contains(line, `"Requests":1`) || !strings.Contains(line, `"4xx":1`) || !strings.Contains(line, `"Host":"base"`) {
		t.Errorf("EMF line %s: want one request, one 4xx, host base", line)
	}
}
