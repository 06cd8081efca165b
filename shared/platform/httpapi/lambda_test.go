package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

type anyKey struct{}

func (anyKey) Authenticate(_ context.Context, key string, kind voiceops.KeyKind) (voiceops.Principal, error) {
	return voiceops.Principal{KeyID: "key_1", Kind: kind, AccountID: "acct_1"}, nil
}

// TestIdempotencyKeyWithACommaThroughTheLambdaAdapter: API Gateway gives a
// header as one string (repeated lines already joined with commas); the
// adapter passes it on whole, so "order-42,retry-1" and "order-42,retry-2"
// are two keys, each replaying only its own request, as on the dev server.
func TestIdempotencyKeyWithACommaThroughTheLambdaAdapter(t *testing.T) {
	var created atomic.Int64
	var seen []string
	h := httpapi.New(httpapi.Config{
		Keys: anyKey{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Guards: httpapi.Guards{Idempotency: memory.NewRequests()},
	}, []httpapi.Route{httpapi.Route{
		Method: http.MethodPost, Path: "/v1/alert-rules", Family: httpapi.StudioErrors, Auth: httpapi.AccountKey,
		Handle: func(w http.ResponseWriter, r *http.Request, c httpapi.Caller) error {
			seen = append(seen, r.Header.Get("Idempotency-Key"))
			httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"n": created.Add(1), "accept": r.Header.Values("Accept")})
			return nil
		},
	}.Creates()})
	call := func(key string) (int, int) {
		t.Helper()
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: "/v1/alert-rules", Body: `{"name":"r"}`,
			Headers: map[string]string{
				"x-api-key": "k", "content-type": "application/json", "idempotency-key": key,
				"accept": "application/json, text/plain", // two lines joined by API Gateway
			}}
		ev.RequestContext.HTTP.Method, ev.RequestContext.HTTP.Path = "POST", "/v1/alert-rules"
		resp, err := httpapi.LambdaHandler(h)(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			N      int      `json:"n"`
			Accept []string `json:"accept"`
		}
		if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
			t.Fatalf("%d %s: %v", resp.StatusCode, resp.Body, err)
		}
		if len(body.Accept) != 1 || body.Accept[0] != "application/json, text/plain" {
			t.Errorf("Accept reached the handler as %q, want the one value API Gateway gave", body.Accept)
		}
		return resp.StatusCode, body.N
	}
	st1, n1 := call("order-42,retry-1")
	st2, n2 := call("order-42,retry-2")
	st3, n3 := call("order-42,retry-1")
	st4, n4 := call("order-42,retry-2")
	if st1 != 201 || st2 != 201 || n1 == n2 {
		t.Errorf("two keys sharing a prefix: %d n=%d, %d n=%d; want two creations", st1, n1, st2, n2)
	}
	if st3 != 201 || n3 != n1 || st4 != 201 || n4 != n2 {
		t.Errorf("replays: %d n=%d (want n=%d), %d n=%d (want n=%d)", st3, n3, n1, st4, n4, n2)
	}
	if created.Load() != 2 || len(seen) != 2 || seen[0] != "order-42,retry-1" || seen[1] != "order-42,retry-2" {
		t.Errorf("created %d, keys seen by the handler %q", created.Load(), seen)
	}
}
