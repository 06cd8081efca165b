package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/agent"
	"github.com/voiceops/opsapi/shared/api"
	"github.com/voiceops/opsapi/shared/auth"
	"github.com/voiceops/opsapi/shared/conversation"
	"github.com/voiceops/opsapi/shared/hooks"
	"github.com/voiceops/opsapi/shared/keys"
	"github.com/voiceops/opsapi/shared/memory"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/samples"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestReplayEvents sends every calls-*.json of events/ through the real
// Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	want := map[string]int{
		"calls-start.json": 200,
		"calls-turn.json":  200,
		"calls-end.json":   200,
	}
	evs, err := samples.HTTPEvents("calls-")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(want) {
		t.Errorf("%d calls-* events, want %d: add the new file to this table", len(evs), len(want))
	}
	for name, ev := range evs {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Now().UTC()
			store := memory.New()
			stores := store.Stores()
			if err := samples.Seed(ctx, stores, now); err != nil {
				t.Fatal(err)
			}
			if err := samples.SeedConversations(ctx, stores, store.AgentConfigs(), now); err != nil {
				t.Fatal(err)
			}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			rec := &metrics.Recorder{Store: memory.NewMetrics()}
			h := handler(api.Deps{Stores: stores, Auth: auth.New(stores.Accounts, voiceops.RegionUS, time.Now),
				Now: time.Now, Log: log, Metrics: rec, InternalKeyDigest: keys.Digest(samples.InternalKey),
				Conversations: &conversation.Engine{Store: stores.Conversations, Configs: store.AgentConfigs(),
					Functions: hooks.NewRunner(hooks.Options{}), Metrics: rec, AgentDeps: agent.Deps{}, Now: time.Now, Log: log}})
			res, err := h(ctx, ev)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != want[name] {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, want[name], res.Body)
			}
			var body map[string]any
			if err := json.Unmarshal([]byte(res.Body), &body); err != nil {
				t.Errorf("body is not a JSON object: %s", res.Body)
			}
			if res.Headers["X-Request-Id"] == "" {
				t.Errorf("no X-Request-Id in %v", res.Headers)
			}
		})
	}
}
