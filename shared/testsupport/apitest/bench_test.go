package apitest

import (
	"github.com/voiceops/opsapi/shared/testsupport/testclock"

	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// These benchmarks measure the full in-process stack the issue names: the
// Lambda adapter, routing, authentication with a warm key cache, body
// validation and the in-memory store. BenchmarkBareHandler writes the same
// JSON from a bare net/http handler through the same adapter, for the ratio.
//
//	go test -run '^$' -bench . -benchmem ./shared/testsupport/apitest/

func benchEvent(method, path, key, body string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: path,
		Headers: map[string]string{"x-api-key": key, "content-type": "application/json"},
		Body:    body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path},
		},
	}
}

const benchRuleBody = `{"name":"p95 too slow","metric":"turn_latency_p95","operator":">","threshold_value":1500,"window_duration":"5m","project_id":"proj_a1"}`

// BenchmarkCreateRule creates alert rules through the full stack: the
// API Gateway adapter, routing, the account key (warm cache), body
// decoding and validation, and the memory store's atomic create. The rules
// go to benchAccounts accounts in turn; once every account holds its 10,
// the timer stops once to empty them (once per 10*benchAccounts creates,
// never per iteration: StopTimer stops the world and would weigh on the
// figure).
func BenchmarkCreateRule(b *testing.B) {
	const benchAccounts = 100
	h := newHarness(b)
	h.withoutRateLimit()
	h.check = false
	ctx := context.Background()
	lh := httpapi.LambdaHandler(h.h)
	accts, empty := h.createAccounts(benchAccounts)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i > 0 && i%(10*benchAccounts) == 0 {
			b.StopTimer()
			empty()
			b.StartTimer()
		}
		res, err := lh(ctx, accts[i%benchAccounts])
		if err != nil || res.StatusCode != 201 {
			b.Fatalf("%d %v %s", res.StatusCode, err, res.Body)
		}
	}
}

// withoutRateLimit serves the harness without the per-key rate limit: the
// benchmarks send more than a key's burst at one instant of the fake clock.
// BenchmarkGetRule/rate-limited measures the limit's own cost.
func (h *harness) withoutRateLimit() {
	h.deps.Guards.Limiter = nil
	h.h = flushing(h.tel, All(h.deps))
}

// BenchmarkGetRule reads one rule through the full stack, without and with
// the per-key rate limit (the in-memory bucket store). The clock moves one
// bucket interval (40 ms at the default 25 a second) per request in both,
// so every request is admitted and the two differ only by the limiter.
func BenchmarkGetRule(b *testing.B) {
	for _, limited := range []bool{false, true} {
		name := "no-rate-limit"
		if limited {
			name = "rate-limited"
		}
		b.Run(name, func(b *testing.B) {
			h := newHarness(b)
			if !limited {
				h.withoutRateLimit()
			}
			lh, ev, _ := h.ruleToGet()
			ctx := context.Background()
			step := time.Second / time.Duration(ratelimit.Default.Rate)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h.clock.Advance(step)
				res, err := lh(ctx, ev)
				if err != nil || res.StatusCode != 200 {
					b.Fatalf("%d %v", res.StatusCode, err)
				}
			}
		})
	}
}

// BenchmarkBareHandler is the floor: the adapter and a handler that writes a
// rule's JSON, with no routing, auth, validation or store.
func BenchmarkBareHandler(b *testing.B) {
	h := newHarness(b)
	created := h.do("POST", "/v1/alert-rules", h.keyA, benchRuleBody).Expect(b, 201)
	var rule bareRule // the record in a struct of its shape (path_ab_bench_test.go)
	if err := json.Unmarshal(created.Body, &rule); err != nil {
		b.Fatal(err)
	}
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { httpapi.WriteJSON(w, 200, rule) })
	lh := httpapi.LambdaHandler(bare)
	ctx := context.Background()
	ev := benchEvent("GET", "/v1/alert-rules/x", h.keyA, "")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := lh(ctx, ev)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("%d %v", res.StatusCode, err)
		}
	}
}

// BenchmarkChatTurn answers one chat turn through the full stack: adapter,
// routing, both keys with a warm cache, body validation, the scripted demo
// agent, the in-memory conversation store and metric recording.
func BenchmarkChatTurn(b *testing.B) {
	h := newHarness(b)
	h.withoutRateLimit()
	h.clock = testclock.At(time.Now())
	lh := httpapi.LambdaHandler(h.h)
	ctx := context.Background()
	headers := map[string]string{"x-api-key": h.keyA, "x-token": h.agent, "content-type": "application/json"}
	create := benchEvent("POST", "/v1/acct_a/proj_a1/chat/create", h.keyA, `{}`)
	create.Headers = headers
	// A conversation of 20 turns, then a new one (created outside the timing).
	var ev events.APIGatewayV2HTTPRequest
	newConversation := func() {
		res, err := lh(ctx, create)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("create: %d %v %s", res.StatusCode, err, res.Body)
		}
		var created struct {
			ConversationID string `json:"conversation_id"`
		}
		_ = json.Unmarshal([]byte(res.Body), &created)
		ev = benchEvent("POST", "/v1/acct_a/proj_a1/chat/respond", h.keyA, `{"conversation_id":"`+created.ConversationID+`","message":"what is my balance"}`)
		ev.Headers = headers
	}
	newConversation()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%20 == 19 {
			b.StopTimer()
			newConversation()
			b.StartTimer()
		}
		res, err := lh(ctx, ev)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("%d %v %s", res.StatusCode, err, res.Body)
		}
	}
}

// createAccounts makes n accounts, each with a project and a key whose
// cache entry is warm, and returns a rule create request of each and a
// function that deletes their rules again (the benchmarks create rules
// under the 10-rule limit).
func (h *harness) createAccounts(n int) ([]events.APIGatewayV2HTTPRequest, func()) {
	ctx := context.Background()
	lh := httpapi.LambdaHandler(h.h)
	var ids []string
	var creates []events.APIGatewayV2HTTPRequest
	for i := range n {
		id := fmt.Sprintf("acct_bench%04d", i)
		if _, err := h.prov.CreateAccount(ctx, id, id); err != nil {
			h.t.Fatal(err)
		}
		if _, err := h.prov.CreateProject(ctx, id, "proj_a1", "p"); err != nil {
			h.t.Fatal(err)
		}
		key, _, err := h.prov.CreateKey(ctx, voiceops.KeyAPI, id, "")
		if err != nil {
			h.t.Fatal(err)
		}
		if res, _ := lh(ctx, benchEvent("GET", "/v1/alert-rules", key, "")); res.StatusCode != 200 { // warm the key cache
			h.t.Fatal(res.StatusCode)
		}
		ids, creates = append(ids, id), append(creates, benchEvent("POST", "/v1/alert-rules", key, benchRuleBody))
	}
	return creates, func() {
		// The scopes the creates touched: kept, the harness's stream would
		// grow for the whole benchmark, each append regrowing it and each
		// GC marking it (a twentieth of a create, and more GC for both sides).
		h.stream.take()
		for _, id := range ids {
			rules, _ := h.stores.Rules.ListRules(ctx, id)
			for _, r := range rules {
				if _, err := h.stores.Rules.DeleteRule(ctx, id, r.ID, nil); err != nil {
					h.t.Fatal(err)
				}
			}
		}
	}
}

// ruleToGet creates a rule of acct_a and returns the harness's Lambda
// handler, the request that reads the rule back and the rule's body as
// created (the GET benchmarks).
func (h *harness) ruleToGet() (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), events.APIGatewayV2HTTPRequest, string) {
	lh := httpapi.LambdaHandler(h.h)
	res, err := lh(context.Background(), benchEvent("POST", "/v1/alert-rules", h.keyA, benchRuleBody))
	if err != nil || res.StatusCode != 201 {
		h.t.Fatal(res.StatusCode, err)
	}
	var created struct{ ID string }
	if err := json.Unmarshal([]byte(res.Body), &created); err != nil || created.ID == "" {
		h.t.Fatalf("created rule %q: %v", res.Body, err)
	}
	return lh, benchEvent("GET", "/v1/alert-rules/"+created.ID, h.keyA, ""), res.Body
}
