package apitest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// countingDial counts dial jobs without keeping them (a benchmark sends
// millions).
type countingDial struct{ n atomic.Int64 }

func (q *countingDial) SendDial(context.Context, voiceops.DialJob, time.Duration) error {
	q.n.Add(1)
	return nil
}

// BenchmarkOutboundTrigger triggers calls through the full stack: the API
// Gateway adapter, routing, the service key (warm cache), the body rules
// (E.164 with libphonenumber, metadata strings and size), the one
// conditional write (memory store) and the one enqueue. Compare with
// BenchmarkBareHandler (the same adapter around a bare handler).
//
//	go test -run '^$' -bench 'OutboundTrigger|BareHandler' -benchmem ./shared/testsupport/apitest/
func BenchmarkOutboundTrigger(b *testing.B) {
	for _, bc := range []struct{ name, body string }{
		{"plain", `{"to_number":"+14155550100"}`},
		{"metadata", `{"to_number":"+447911123456","metadata":{"first_name":"Ada","order":"42","reason":"delivery window"},"country_code":"GB"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := newHarness(b)
			h.check = false
			q := &countingDial{}
			h.deps.Dial = q
			lh := httpapi.LambdaHandler(All(h.deps))
			ctx := context.Background()
			ev := events.APIGatewayV2HTTPRequest{
				Version: "2.0", RawPath: "/v1/outbound-calling/trigger",
				Headers: map[string]string{"x-service-auth-token": h.service, "content-type": "application/json"},
				Body:    bc.body,
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/v1/outbound-calling/trigger"},
				},
			}
			if res, _ := lh(ctx, ev); res.StatusCode != 200 { // warm the key cache
				b.Fatal(res.StatusCode, res.Body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				// The harness's clock stands still: a second per trigger
				// keeps the key under its rate limit (the guards still run).
				h.clock.Advance(time.Second)
				res, err := lh(ctx, ev)
				if err != nil || res.StatusCode != 200 {
					b.Fatal(res.StatusCode, err)
				}
			}
			b.StopTimer()
			if got := q.n.Load(); got < int64(b.N) {
				b.Fatalf("%d dial jobs for %d triggers", got, b.N)
			}
		})
	}
}
