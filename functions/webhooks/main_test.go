package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/api"
	"github.com/voiceops/opsapi/shared/auth"
	"github.com/voiceops/opsapi/shared/memory"
	"github.com/voiceops/opsapi/shared/samples"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestReplayEvents sends every webhooks-*.json of events/ through the real
// Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	want := map[string]int{
		"webhooks-create-endpoint.json": 201,
		"webhooks-list-endpoints.json":  200,
		"webhooks-get-endpoint.json":    200,
		"webhooks-patch-endpoint.json":  200,
		"webhooks-rotate-secret.json":   200,
		"webhooks-delete-endpoint.json": 204,
	}
	evs, err := samples.HTTPEvents("webhooks-")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(want) {
		t.Errorf("%d webhooks-* events, want %d: add the new file to this table", len(evs), len(want))
	}
	for name, ev := range evs {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			stores := memory.New().Stores()
			if err := samples.Seed(ctx, stores, now); err != nil {
				t.Fatal(err)
			}
			h := handler(api.Deps{Stores: stores, Auth: auth.New(stores.Accounts, voiceops.RegionUS, time.Now),
				Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
			res, err := h(ctx, ev)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != want[name] {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, want[name], res.Body)
			}
			if res.StatusCode != 204 && !json.Valid([]byte(res.Body)) {
				t.Errorf("body is not JSON: %s", res.Body)
			}
			if res.Headers["X-Request-Id"] == "" {
				t.Errorf("no X-Request-Id in %v", res.Headers)
			}
		})
	}
}
