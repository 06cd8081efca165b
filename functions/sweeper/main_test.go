package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/testsupport/samples"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestReplayScheduledEvent runs the real handler on
// events/sweeper-scheduled.json: an idle chat is ended with reason
// timeout, one with recent activity is left alone.
func TestReplayScheduledEvent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(samples.Dir(), "sweeper-scheduled.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.EventBridgeEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	m := memory.New()
	open := func(started, due time.Time) voiceops.Conversation {
		c := voiceops.Conversation{
			ID: voiceops.NewConversationID(started), AccountID: "acct_a", ProjectID: "proj_a1", Environment: voiceops.EnvLive,
			Channel: voiceops.ChannelWebchat, StartedAt: started, InProgress: true, IdleDue: due,
			ExpiresAt: now.Add(24 * time.Hour), Version: 1,
		}
		if err := m.Stores().Conversations.CreateConversation(ctx, c, nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	idle := open(now.Add(-time.Hour), now.Add(-30*time.Minute))
	active := open(now.Add(-time.Hour), now.Add(10*time.Minute))
	e := convgraph.New(convgraph.Deps{
		Conversations: m.Stores().Conversations, Configs: m.AgentConfigs(),
		Now: func() time.Time { return now }, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	res, err := handler(e)(ctx, ev)
	if err != nil || res.Ended != 1 {
		t.Fatalf("run: %+v %v, want 1 ended", res, err)
	}
	got, _ := m.Stores().Conversations.GetConversation(ctx, "acct_a", "proj_a1", idle.ID)
	if got.InProgress || got.EndReason != voiceops.EndTimeout || got.EndedAt == nil || !got.EndedAt.Equal(idle.IdleDue) {
		t.Errorf("idle chat after the sweep: %+v", got)
	}
	if got, _ := m.Stores().Conversations.GetConversation(ctx, "acct_a", "proj_a1", active.ID); !got.InProgress {
		t.Errorf("the active chat was ended")
	}
}
