package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

func testHandler() func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return handler(time.Now, log, log, nil)
}

// check404 sends ev and checks the JSON 404 in the family's shape, with the
// X-Request-Id of the body.
func check404(t *testing.T, ev events.APIGatewayV2HTTPRequest, family httpapi.Family) {
	t.Helper()
	resp, err := testHandler()(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
		t.Fatalf("body %q: %v", resp.Body, err)
	}
	field, other := "message", "error_message"
	if family == httpapi.BaseErrors {
		field, other = other, field
	}
	rid := resp.Headers["X-Request-Id"]
	if resp.StatusCode != 404 || body[field] == nil || body[other] != nil || rid == "" || body["request_id"] != rid ||
		resp.Headers["Content-Type"] != "application/json" {
		t.Errorf("answer %d %v %s, want 404 with %q and the X-Request-Id", resp.StatusCode, resp.Headers, resp.Body, field)
	}
}

// TestReplayEvents sends every notfound-*.json of events/ (a request of
// each host that no route matches) through the real handler.
func TestReplayEvents(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "events", "notfound-*.json"))
	if err != nil || len(files) < 2 {
		t.Fatalf("events/notfound-*.json: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			family := httpapi.StudioErrors
			if ev.StageVariables[httpapi.FamilyStageVariable] == "base" {
				family = httpapi.BaseErrors
			}
			check404(t, ev, family)
		})
	}
}

// TestTheHostsStageNamesTheShape: the same path answers in the shape of the
// host whose stage it came through; without the stage variable, in the
// shape its path tells (as on the dev server).
func TestTheHostsStageNamesTheShape(t *testing.T) {
	ev := func(method, path string, stage map[string]string) events.APIGatewayV2HTTPRequest {
		e := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "$default", RawPath: path, StageVariables: stage}
		e.RequestContext.HTTP.Method, e.RequestContext.HTTP.Path = method, path
		return e
	}
	studio := map[string]string{httpapi.FamilyStageVariable: "studio"}
	base := map[string]string{httpapi.FamilyStageVariable: "base"}
	check404(t, ev("GET", "/v1/conversations", studio), httpapi.StudioErrors)
	check404(t, ev("DELETE", "/v1/alert-rules-x", base), httpapi.BaseErrors)
	check404(t, ev("GET", "/", base), httpapi.BaseErrors)
	check404(t, ev("GET", "/v9/x", nil), httpapi.BaseErrors)
	check404(t, ev("GET", "/v1/alert-rules/x/y/z", nil), httpapi.StudioErrors)
}
