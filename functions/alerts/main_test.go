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

// TestReplayEvents sends every alerts-*.json of events/ through the real
// Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	want := map[string]int{
		"alerts-create-rule.json": 201,
		"alerts-list-rules.json":  200,
		"alerts-get-rule.json":    200,
		"alerts-patch-rule.json":  200,
		"alerts-delete-rule.json": 204,
		"alerts-list-active.json": 200,
	}
	evs, err := samples.HTTPEvents("alerts-")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(want) {
		t.Errorf("%d alerts-* events, want %d: add the new file to this table", len(evs), len(want))
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
