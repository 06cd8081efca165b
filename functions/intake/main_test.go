package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/testsupport/samples"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestReplayEvents sends every intake-*.json of events/ through the real
// Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	want := map[string]int{
		"intake-metric-events.json": 202,
	}
	// The sample events are dated just before this time.
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	stores := map[string]*memory.Metrics{}
	samples.Replay{Prefix: "intake-", Want: want,
		Handler: func(t *testing.T, name string) samples.Lambda {
			store := memory.NewMetrics()
			store.Now = func() time.Time { return now }
			stores[name] = store
			return handler(deps{
				Metrics: &buckets.Recorder{Store: store}, InternalKey: httpapi.FixedDigest(keys.Digest(samples.InternalKey)),
				Now: func() time.Time { return now }, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
		},
		Check: func(t *testing.T, name string, res events.APIGatewayV2HTTPResponse) {
			var body struct {
				Accepted int `json:"accepted"`
			}
			if err := json.Unmarshal([]byte(res.Body), &body); err != nil || body.Accepted == 0 {
				t.Fatalf("body %s", res.Body)
			}
			// What was accepted is stored: every event counts in the
			// account's scope.
			bs, err := stores[name].ReadBuckets(context.Background(), metrics.Scope{AccountID: samples.AccountID}, now.Add(-time.Hour), now.Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if got := buckets.Summarize(bs, now.Add(-time.Hour), now.Add(time.Minute)).Counts.Of(metrics.Activity); got != int64(body.Accepted) {
				t.Errorf("%d events stored for %s, want %d", got, samples.AccountID, body.Accepted)
			}
		},
	}.Run(t)
}

// TestReplayWithoutTheKey: the same event with another internal key is 401.
func TestReplayWithoutTheKey(t *testing.T) {
	evs, err := samples.HTTPEvents("intake-metric-events")
	if err != nil || len(evs) != 1 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	h := handler(deps{Metrics: &buckets.Recorder{Store: memory.NewMetrics()}, Now: time.Now,
		InternalKey: httpapi.FixedDigest(keys.Digest(keys.New(keys.KindInternal, voiceops.RegionUS))),
		Log:         slog.New(slog.NewTextHandler(io.Discard, nil))})
	for _, ev := range evs {
		res, err := h(context.Background(), ev)
		if err != nil || res.StatusCode != 401 {
			t.Errorf("another key: %d, %v", res.StatusCode, err)
		}
	}
}

func TestRunNeedsItsEnvironment(t *testing.T) {
	if _, err := build(func(string) string { return "" }); err == nil {
		t.Error("run started without SERVICE_REGION and the table names")
	}
}
