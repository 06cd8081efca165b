package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/testsupport/samples"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// sampleSharedID is the shared ID of events/conversations-handoff-state.json:
// the replay hands samples.ConversationID off with it.
const sampleSharedID = "shr_sample1"

// TestReplayEvents sends every conversations-*.json of events/ through the
// real Lambda handler, so the samples that SAM users invoke never rot.
func TestReplayEvents(t *testing.T) {
	want := map[string]struct {
		status int
		check  func(t *testing.T, body map[string]any)
	}{
		"conversations-concurrency.json": {200, func(t *testing.T, body map[string]any) {
			// The sample conversation (variant main, in progress since
			// 10:00) in every interval of 10:00 to 11:00, sliced by variant.
			intervals, _ := body["intervals"].([]any)
			if len(intervals) != 12 {
				t.Fatalf("%d intervals, want 12: %v", len(intervals), body)
			}
			first, _ := intervals[0].(map[string]any)
			if first["time"] != "2026-11-22T10:00:00.000Z" || first["variant_id"] != "main" || first["max_concurrent_conversations"] != 1.0 {
				t.Errorf("first interval %v", first)
			}
		}},
		"conversations-list-v3.json": {200, func(t *testing.T, body map[string]any) {
			// The sample conversation, in progress for an hour, with its
			// greeting and (include_latency) its latency summary.
			c := onlyConversation(t, body)
			if c["in_progress"] != true || c["total_duration"] != 3600.0 || c["started_at"] != "2026-11-22T10:00:00.000Z" {
				t.Errorf("conversation %v", c)
			}
			if turns, _ := c["turns"].([]any); len(turns) != 1 || c["latency"] == nil || body["descriptions"] != nil {
				t.Errorf("v3 record %v", body)
			}
		}},
		"conversations-list-v1.json": {200, func(t *testing.T, body map[string]any) {
			c := onlyConversation(t, body)
			if c["started_at"] != "2026-11-22T10:00:00Z" || c["handoff_reason"] != nil || c["latency"] != nil || body["descriptions"] == nil {
				t.Errorf("v1 list %v", body)
			}
		}},
		"conversations-handoff-state.json": {200, func(t *testing.T, body map[string]any) {
			if _, ok := body["data"].(map[string]any); !ok || body["id"] != samples.ConversationID || body["shared_id"] != sampleSharedID || len(body) != 3 {
				t.Errorf("handoff state %v", body)
			}
		}},
	}
	status := map[string]int{}
	for name, w := range want {
		status[name] = w.status
	}
	samples.Replay{Prefix: "conversations-", Want: status,
		Handler: func(t *testing.T, name string) samples.Lambda {
			ctx := context.Background()
			// The samples' conversation started at 2026-11-22T10:00:00Z; the
			// clock stands an hour later, so it is in progress all along.
			now := time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
			store := memory.New()
			stores := store.Stores()
			if err := samples.Seed(ctx, stores, time.Now()); err != nil {
				t.Fatal(err)
			}
			if err := samples.SeedConversations(ctx, stores, store.AgentConfigs(), time.Now()); err != nil {
				t.Fatal(err)
			}
			if name == "conversations-handoff-state.json" {
				handOff(t, stores)
			}
			return handler(deps{HTTP: httpapi.Config{Keys: auth.New(stores.Accounts, voiceops.RegionUS, time.Now), Projects: stores.Accounts,
				Now: func() time.Time { return now }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, Conversations: stores.Conversations})
		},
		Check: func(t *testing.T, name string, res events.APIGatewayV2HTTPResponse) {
			var body map[string]any
			if err := json.Unmarshal([]byte(res.Body), &body); err != nil {
				t.Fatalf("body is not a JSON object: %s", res.Body)
			}
			if check := want[name].check; check != nil {
				check(t, body)
			}
		},
	}.Run(t)
}

// onlyConversation returns the one conversation of a list body.
func onlyConversation(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	list, _ := body["conversations"].([]any)
	if len(list) != 1 {
		t.Fatalf("%d conversations, want the sample one: %v", len(list), body)
	}
	c, _ := list[0].(map[string]any)
	if c["id"] != samples.ConversationID {
		t.Fatalf("conversation %v, want %s", c["id"], samples.ConversationID)
	}
	return c
}

// handOff records that the sample conversation was handed off, as the
// engine does in the turn that hands off.
func handOff(t *testing.T, s voiceops.Stores) {
	t.Helper()
	ctx := context.Background()
	c, err := s.Conversations.GetConversation(ctx, samples.AccountID, samples.ProjectID, samples.ConversationID)
	if err != nil {
		t.Fatal(err)
	}
	prev := c.Version
	ended := c.StartedAt.Add(3 * time.Minute)
	c.Handoff, c.HandoffDestination, c.HandoffReason, c.SharedID = true, "support-queue", "caller asked for a human", sampleSharedID
	c.InProgress, c.EndedAt, c.EndReason, c.Version = false, &ended, voiceops.EndHandoff, prev+1
	if err := s.Conversations.UpdateConversation(ctx, c, prev); err != nil {
		t.Fatal(err)
	}
}
