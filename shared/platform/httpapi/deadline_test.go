package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/voiceops"
)

type oneKey struct{}

func (oneKey) Authenticate(_ context.Context, key string, kind voiceops.KeyKind) (voiceops.Principal, error) {
	if key != "k" {
		return voiceops.Principal{}, voiceops.Errorf(voiceops.KindUnauthorized, "no")
	}
	return voiceops.Principal{KeyID: "key_1", Kind: kind, AccountID: "acct_1"}, nil
}

// v2Event is an API Gateway HTTP API (payload 2.0) request.
func v2Event(method, path string, headers map[string]string, body string) events.APIGatewayV2HTTPRequest {
	ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: path, Headers: headers, Body: body}
	ev.RequestContext.HTTP.Method = method
	ev.RequestContext.HTTP.Path = path
	ev.RequestContext.DomainName = "api.example.com"
	return ev
}

// TestRequestDeadlineLeavesTheMarginBeforeTheInvocationEnds: under a Lambda
// invocation that ends in 10 s, a route configured with a 10 s deadline
// gets 10 s minus ResponseMargin, and its deadline's 500 carries the
// request ID; outside Lambda the configured deadline holds.
func TestRequestDeadlineLeavesTheMarginBeforeTheInvocationEnds(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(10*time.Second))
	defer cancel()
	if got := requestDeadline(ctx, 10*time.Second, now); got != 10*time.Second-ResponseMargin {
		t.Errorf("deadline under a 10 s invocation: %s, want %s", got, 10*time.Second-ResponseMargin)
	}
	if got := requestDeadline(context.Background(), 10*time.Second, now); got != 10*time.Second {
		t.Errorf("deadline outside Lambda: %s", got)
	}
	if got := requestDeadline(ctx, 5*time.Second, now); got != 5*time.Second {
		t.Errorf("a shorter configured deadline: %s", got)
	}
	if got := requestDeadline(ctx, 10*time.Second, now.Add(9*time.Second)); got != 0 {
		t.Errorf("an invocation already past its margin: %s", got)
	}
	if FunctionTimeout(10*time.Second) < 10*time.Second+ResponseMargin || FunctionTimeout(10*time.Second)%time.Second != 0 {
		t.Errorf("FunctionTimeout(10s) = %s", FunctionTimeout(10*time.Second))
	}

	// Through the adapter: the handler waits for its context, which must
	// end ResponseMargin before the invocation does.
	var sawDeadline time.Time
	h := New(Config{Keys: oneKey{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, []Route{{
		Method: http.MethodGet, Path: "/v1/alert-rules", Family: StudioErrors, Auth: AccountKey,
		Handle: func(w http.ResponseWriter, r *http.Request, c Caller) error {
			sawDeadline, _ = r.Context().Deadline()
			<-r.Context().Done()
			return r.Context().Err()
		},
	}})
	end := time.Now().Add(ResponseMargin + 300*time.Millisecond)
	lctx, lcancel := context.WithDeadline(context.Background(), end)
	defer lcancel()
	resp, err := LambdaHandler(h)(lctx, v2Event("GET", "/v1/alert-rules", map[string]string{"x-api-key": "k"}, ""))
	if err != nil {
		t.Fatal(err)
	}
	if !sawDeadline.Before(end.Add(-ResponseMargin).Add(time.Millisecond)) {
		t.Errorf("request deadline %s, want at least %s before the invocation's end %s", sawDeadline, ResponseMargin, end)
	}
	var body struct {
		Message   string `json:"message"`
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil || resp.StatusCode != 500 || body.RequestID == "" ||
		body.RequestID != resp.Headers["X-Request-Id"] || lctx.Err() != nil {
		t.Errorf("answer %d %s (headers %v, %v), invocation context %v", resp.StatusCode, resp.Body, resp.Headers, err, lctx.Err())
	}
}

// TestLambdaInvocationWaitsForTheAPIErrorsWrite: the api_errors write of a
// 500 is done before the invocation returns, not left to a goroutine that a
// frozen environment would stop.
func TestLambdaInvocationWaitsForTheAPIErrorsWrite(t *testing.T) {
	var written atomic.Bool
	h := New(Config{
		Keys: oneKey{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		CountError: func(ctx context.Context, accountID, projectID string, at time.Time) error {
			select {
			case <-time.After(200 * time.Millisecond): // a slow metrics table
			case <-ctx.Done():
				return ctx.Err()
			}
			written.Store(accountID == "acct_1")
			return nil
		},
	}, []Route{{
		Method: http.MethodGet, Path: "/v1/alert-rules", Family: StudioErrors, Auth: AccountKey,
		Handle: func(http.ResponseWriter, *http.Request, Caller) error { return errors.New("store down") },
	}})
	resp, err := LambdaHandler(h)(context.Background(), v2Event("GET", "/v1/alert-rules", map[string]string{"x-api-key": "k"}, ""))
	if err != nil || resp.StatusCode != 500 {
		t.Fatalf("answer %d %v", resp.StatusCode, err)
	}
	if !written.Load() {
		t.Error("the invocation returned before its api_errors write was done")
	}
}
