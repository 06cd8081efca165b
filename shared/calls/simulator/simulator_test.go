package simulator

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	callsvc "github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestTestNumbers places a call to each kind of test number through the
// real conversation engine on the memory stores (no sleeping: Sleep
// returns at once).
func TestTestNumbers(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	stores := mem.Stores()
	if err := stores.Accounts.CreateAccount(ctx, voiceops.Account{ID: "acct_a", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := stores.Accounts.CreateProject(ctx, voiceops.Project{ID: "proj_a", AccountID: "acct_a", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := agent.PutConfig(ctx, mem.AgentConfigs(), agent.DemoConfig("acct_a", "proj_a")); err != nil {
		t.Fatal(err)
	}
	metricStore := memory.NewMetrics()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	engine := convgraph.New(convgraph.Deps{Conversations: stores.Conversations, Configs: mem.AgentConfigs(),
		Metrics: metricStore, Now: time.Now, Log: log})
	calls := memory.NewCalls()
	sim := &Simulator{Calls: callsvc.New(calls, time.Now, callsvc.WithEngine(engine)), Log: log,
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}

	place := func(to string, meta map[string]any) string {
		t.Helper()
		now := time.Now().UTC()
		c := voiceops.Call{SID: voiceops.NewCallSID(), AccountID: "acct_a", ProjectID: "proj_a", ToNumber: to, Metadata: meta,
			Status: voiceops.CallQueued, CreatedAt: now, UpdatedAt: now}
		if err := calls.CreateCall(ctx, c); err != nil {
			t.Fatal(err)
		}
		if _, err := calls.MoveCall(ctx, c.SID, voiceops.CallCalling, "", now); err != nil { // the dialer's claim
			t.Fatal(err)
		}
		if err := sim.Place(ctx, telephony.CallRequest{SID: c.SID, AccountID: "acct_a", ProjectID: "proj_a", To: to, Metadata: meta}); err != nil {
			t.Fatal(err)
		}
		return c.SID
	}
	want := map[string][2]string{}
	for to, w := range map[string][2]string{
		"+14155550001": {"failure", "busy"},
		"+14155550002": {"failure", "no-answer"},
		"+14155550003": {"failure", "failed"},
		"+14155550100": {"success", ""},
	} {
		want[place(to, map[string]any{"first_name": "Ada"})] = w
	}
	sim.Wait()
	for sid, w := range want {
		c, err := calls.GetCall(ctx, sid, time.Now())
		if err != nil || string(c.Status) != w[0] || c.Reason != w[1] {
			t.Errorf("call to %s: %s %q %v, want %s %q", c.ToNumber, c.Status, c.Reason, err, w[0], w[1])
		}
	}
	// Only the answered call talked: one voice conversation, with turns,
	// ended, with the call's numbers and metadata.
	convs, err := stores.Conversations.ListConversations(ctx, "acct_a", "proj_a", time.Now().Add(-time.Hour), time.Now().Add(time.Hour), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 1 {
		t.Fatalf("%d conversations, want 1", len(convs))
	}
	conv := convs[0]
	for sid, w := range want {
		if c, _ := calls.GetCall(ctx, sid, time.Now()); (w[0] == "success") != (c.ConversationID == conv.ID) {
			t.Errorf("call to %s names conversation %q", c.ToNumber, c.ConversationID)
		}
	}
	if conv.Channel != voiceops.ChannelVoice || conv.ToNumber != "+14155550100" || conv.FromNumber != DefaultCallerID ||
		conv.IntegrationAttributes["first_name"] != "Ada" || conv.InProgress || conv.NumTurns < 3 {
		t.Errorf("conversation %+v", conv)
	}
	// It counts in call_volume.
	bs, err := metricStore.ReadBuckets(ctx, metrics.Scope{AccountID: "acct_a", ProjectID: "proj_a"}, time.Now().Add(-time.Hour), time.Now().Add(time.Minute))
	volume := int64(0)
	for _, b := range bs {
		volume += int64(b.Counts.Of(metrics.CallVolume))
	}
	if err != nil || volume != 1 {
		t.Errorf("call_volume %d %v, want 1", volume, err)
	}
}
