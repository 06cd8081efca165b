package dynamohttp

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/voiceops"
)

type noKeys struct{}

func (noKeys) KeyByDigest(context.Context, string) (voiceops.Key, error) {
	return voiceops.Key{}, voiceops.ErrNotFound
}

// TestConfigFillsThePlatform: every keyed function gets keys, both guards,
// its 5xx count, a clock, its log and its metrics from the one constructor;
// a part left out here would be missing from every function at once.
func TestConfigFillsThePlatform(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := emf.New(io.Discard, time.Now)
	c := Config(nil, noKeys{}, voiceops.RegionUS, Tables{Config: "config", Requests: "requests", Metrics: "metrics"}, log, metrics)
	if c.Keys == nil || c.CountError == nil || c.Now == nil {
		t.Errorf("keys %v, count error set %v, clock set %v: want all", c.Keys, c.CountError != nil, c.Now != nil)
	}
	if c.Guards.Limiter == nil || c.Guards.Idempotency == nil {
		t.Errorf("guards %+v: want the rate limiter and the Idempotency-Key store", c.Guards)
	}
	if c.Log != log || c.Metrics != metrics || c.AccessLog == nil || c.AccessLog == log {
		t.Error("the function's log, access log and metrics are not the platform's")
	}
}

// writes counts the writes made to it and keeps what they wrote.
type writes struct{ got []string }

func (w *writes) Write(p []byte) (int, error) { w.got = append(w.got, string(p)); return len(p), nil }

// TestAccessLineLeavesWithTheMetrics: an invocation's access line and its
// request metrics reach stdout in one write, the access line first, and
// nothing is left for the next invocation.
func TestAccessLineLeavesWithTheMetrics(t *testing.T) {
	var stdout, stderr writes
	metrics := emf.New(&stdout, time.Now)
	log := slog.New(slog.NewJSONHandler(&stderr, nil))
	h := emf.Flushing(metrics, httpapi.LambdaHandler(httpapi.New(Config(nil, noKeys{}, voiceops.RegionUS, Tables{}, log, metrics))))
	for i := range 2 {
		ev := events.APIGatewayV2HTTPRequest{RawPath: "/v1/no-such-route", RequestContext: events.APIGatewayV2HTTPRequestContext{
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/v1/no-such-route"}}}
		res, err := h(context.Background(), ev)
		if err != nil || res.StatusCode != 404 {
			t.Fatalf("%d %v", res.StatusCode, err)
		}
		if len(stdout.got) != i+1 {
			t.Fatalf("invocation %d: %d writes to stdout in all, want %d", i+1, len(stdout.got), i+1)
		}
		lines := strings.Split(strings.TrimSuffix(stdout.got[i], "\n"), "\n")
		if len(lines) < 2 || !strings.Contains(lines[0], `"msg":"request"`) || !strings.Contains(lines[0], `"request_id":"`+res.Headers["X-Request-Id"]+`"`) {
			t.Fatalf("invocation %d wrote %q: want its access line, then its metrics", i+1, stdout.got[i])
		}
		for _, l := range lines[1:] {
			if err := emf.Validate([]byte(l)); err != nil {
				t.Errorf("invocation %d: %v: %s", i+1, err, l)
			}
		}
	}
	if len(stderr.got) != 0 {
		t.Errorf("stderr got %q: the access lines go with the metrics", stderr.got)
	}
}
