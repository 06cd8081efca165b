package apitest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/testsupport/abbench"
)

// pathRound is the requests of one round of each side: enough for a round
// to span several garbage collections, so that the ratio's spread is the
// work's (rounds of 200, each about a millisecond, spread 3.0x to 5.8x
// depending on where a collection fell).
const pathRound = 2000

// BenchmarkRequestPathAB is the full stack (BenchmarkCreateRule and
// BenchmarkGetRule) against the bare handler (BenchmarkBareHandler: the
// same adapter writing the same rule's JSON, no routing, auth, validation
// or store), interleaved round by round (shared/testsupport/abbench), each
// round pathRound requests of each side. a-ms and base-ms are a round's.
//
//	go test ./shared/testsupport/apitest -run '^$' -bench RequestPathAB
func BenchmarkRequestPathAB(b *testing.B) {
	ctx := context.Background()
	type lambdaFn = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	send := func(b *testing.B, lh lambdaFn, ev events.APIGatewayV2HTTPRequest, want int) {
		res, err := lh(ctx, ev)
		if err != nil || res.StatusCode != want {
			b.Fatalf("%d %v %.200s", res.StatusCode, err, res.Body)
		}
	}
	// bare is BenchmarkBareHandler's: the adapter and a handler writing a
	// rule's JSON.
	bareOf := func(b *testing.B, h *harness, ruleJSON string) func() {
		var rule bareRule
		if err := json.Unmarshal([]byte(ruleJSON), &rule); err != nil {
			b.Fatal(err)
		}
		lh := httpapi.LambdaHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { httpapi.WriteJSON(w, 200, rule) }))
		ev := benchEvent("GET", "/v1/alert-rules/x", h.keyA, "")
		if res, _ := lh(ctx, ev); res.Body != ruleJSON {
			b.Fatalf("the bare handler writes\n%s\nthe stack\n%s", res.Body, ruleJSON)
		}
		return func() {
			for range pathRound {
				send(b, lh, ev, 200)
			}
		}
	}
	for _, limited := range []bool{false, true} {
		name := "get/no-rate-limit"
		if limited {
			name = "get/rate-limited"
		}
		b.Run(name, func(b *testing.B) {
			h := newHarness(b)
			h.check = false
			if !limited {
				h.withoutRateLimit()
			}
			lh, ev, created := h.ruleToGet()
			// One bucket interval per request: every request is admitted.
			step := time.Second / time.Duration(ratelimit.Default.Rate)
			abbench.Run(b, func() {
				for range pathRound {
					h.clock.Advance(step)
					send(b, lh, ev, 200)
				}
			}, bareOf(b, h, created))
		})
	}
	// Creates, as deployed, and without the access line and the request
	// metrics (the request path's own work: adapter, auth, decode, validate, store).
	for _, quiet := range []bool{false, true} {
		name := "create"
		if quiet {
			name = "create-without-access-line-and-metrics"
		}
		b.Run(name, func(b *testing.B) {
			// pathRound creates spread over pathRound/2 accounts (2 each, under
			// the 10-rule limit), emptied before each round, untimed.
			h := newHarness(b)
			h.check = false
			if quiet {
				h.deps.Log = slog.New(slog.DiscardHandler)
				h.deps.AccessLog = h.deps.Log
				h.deps.Telemetry = nil
			}
			h.withoutRateLimit()
			lh := httpapi.LambdaHandler(h.h)
			evs, empty := h.createAccounts(pathRound / 2)
			res, err := lh(ctx, evs[0])
			if err != nil || res.StatusCode != 201 {
				b.Fatal(res.StatusCode, err)
			}
			abbench.RunWith(b, empty, func() {
				for i := range pathRound {
					send(b, lh, evs[i%len(evs)], 201)
				}
			}, bareOf(b, h, res.Body))
		})
	}
}

// bareRule is a rule's record in a struct of its shape, so that the bare
// handlers (BenchmarkBareHandler, the A/B baselines) encode what the real
// one does.
type bareRule struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	ProjectID       *string `json:"project_id"`
	Metric          string  `json:"metric"`
	Operator        string  `json:"operator"`
	ThresholdValue  int64   `json:"threshold_value"`
	WindowDuration  string  `json:"window_duration"`
	Enabled         bool    `json:"enabled"`
	CurrentState    string  `json:"current_state"`
	CreatedAt       string  `json:"created_at"`
	UpdatedAt       string  `json:"updated_at"`
	Since           *string `json:"since"`
	LastEvaluatedAt *string `json:"last_evaluated_at"`
	CurrentValue    *int64  `json:"current_value"`
}
