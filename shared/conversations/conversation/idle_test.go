package conversation

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/platform/telemetry/prom"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func (f *fixture) startChat() voiceops.Conversation {
	f.t.Helper()
	ans, err := f.e.Start(context.Background(), StartInput{AccountID: "acct", ProjectID: "proj", Channel: voiceops.ChannelWebchat})
	if err != nil {
		f.t.Fatal(err)
	}
	return ans.Conversation
}

func TestIdleEnd(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { testIdleEnd(t, newFixtureOn(t, map[agent.Hook]bool{agent.HookOnEnd: true}, b)) })
	}
}

func testIdleEnd(t *testing.T, f *fixture) {
	ctx := context.Background()
	reg := prom.New()
	f.e.Telemetry = reg
	get := func(id string) voiceops.Conversation {
		t.Helper()
		c, err := f.e.Store.GetConversation(ctx, "acct", "proj", id)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	chat := f.startChat()
	if want := f.now.Add(voiceops.DefaultChatIdleTimeout); !chat.IdleDue.Equal(want) {
		t.Fatalf("chat IdleDue %v, want start + 30 min %v", chat.IdleDue, want)
	}
	voice := f.start().Conversation
	quiet := f.startChat()
	// Activity moves the due: 29 minutes later a turn keeps the chat open.
	f.now = f.now.Add(29 * time.Minute)
	f.say(chat.ID, TurnInput{Message: "balance"})
	if c := get(chat.ID); !c.IdleDue.Equal(f.now.Add(voiceops.DefaultChatIdleTimeout)) {
		t.Errorf("IdleDue after a turn %v", c.IdleDue)
	}
	// Only the voice call (15 minutes) is due yet.
	if n, err := f.e.SweepIdle(ctx); n != 1 || err != nil {
		t.Fatalf("sweep at 29 min: %d %v, want the voice call", n, err)
	}
	if v := get(voice.ID); v.InProgress {
		t.Fatalf("voice call not ended")
	}
	// Past 30 minutes of silence: the quiet chat is due, the chat with a
	// turn is not.
	f.now = f.now.Add(2 * time.Minute)
	n, err := f.e.SweepIdle(ctx)
	if n != 1 || err != nil {
		t.Fatalf("sweep at 31 min ended %d (%v), want 1", n, err)
	}
	var out strings.Builder
	if err := reg.Write(&out); err != nil || !strings.Contains(out.String(), "voiceops_idle_ends_total 2\n") {
		t.Errorf("idle ends metric after two sweeps that ended one each: %v\n%s", err, out.String())
	}
	q, v, c := get(quiet.ID), get(voice.ID), get(chat.ID)
	if q.InProgress || q.EndReason != voiceops.EndTimeout || q.EndedAt == nil || !q.EndedAt.Equal(quiet.IdleDue) {
		t.Errorf("quiet chat: in progress %v, reason %q, ended %v (due %v)", q.InProgress, q.EndReason, q.EndedAt, quiet.IdleDue)
	}
	if v.InProgress || v.EndReason != voiceops.EndCrashed || !v.EndedAt.Equal(voice.IdleDue) || !voice.IdleDue.Equal(voice.StartedAt.Add(voiceops.VoiceIdleBound)) {
		t.Errorf("voice call: in progress %v, reason %q, ended %v", v.InProgress, v.EndReason, v.EndedAt)
	}
	if !c.InProgress {
		t.Errorf("the chat with recent activity was ended")
	}
	if got := f.counts().Counts.Of(voiceops.KindCallCrashes); got != 1 {
		t.Errorf("call_crashes %d, want 1 (the voice call)", got)
	}
	// The on_end function ran for both.
	f.mu.Lock()
	if len(f.fnCalls) != 2 || f.fnCalls[0] != "on_end" {
		t.Errorf("function calls %v", f.fnCalls)
	}
	f.mu.Unlock()
	// Respond and close afterwards: ended.
	if _, err := f.e.Respond(ctx, "acct", "proj", quiet.ID, TurnInput{Message: "hello?"}); !errors.Is(err, ErrEnded) {
		t.Errorf("respond after the idle end: %v", err)
	}
	if _, err := f.e.Close(ctx, "acct", "proj", voice.ID, voiceops.EndCompleted); !errors.Is(err, ErrEnded) {
		t.Errorf("close after the idle end: %v", err)
	}
	// Past its due without a sweep, respond ends the chat itself.
	f.now = f.now.Add(31 * time.Minute)
	if _, err := f.e.Respond(ctx, "acct", "proj", chat.ID, TurnInput{Message: "still there?"}); !errors.Is(err, ErrEnded) {
		t.Errorf("respond past the due: %v", err)
	}
	if c := get(chat.ID); c.InProgress || c.EndReason != voiceops.EndTimeout || c.NumTurns != 2 {
		t.Errorf("chat ended by respond: %+v", c)
	}
	if n, err := f.e.SweepIdle(ctx); n != 0 || err != nil {
		t.Errorf("sweep with nothing due: %d %v", n, err)
	}
}

// TestIdleTimeoutConfigured: the project's chat_idle_timeout_seconds wins
// over the engine's default (the dev server's flag), which wins over 30
// minutes.
func TestIdleTimeoutConfigured(t *testing.T) {
	f := newFixture(t, nil)
	f.e.ChatIdleTimeout = 4 * time.Second
	if c := f.startChat(); !c.IdleDue.Equal(f.now.Add(4 * time.Second)) {
		t.Errorf("engine default: due %v after start %v", c.IdleDue, f.now)
	}
	cfg := agent.DemoConfig("acct", "proj")
	cfg.ChatIdleTimeoutSeconds = 90
	if err := agent.PutConfig(context.Background(), f.configs, cfg); err != nil {
		t.Fatal(err)
	}
	f.e.cache = nil
	if c := f.startChat(); !c.IdleDue.Equal(f.now.Add(90 * time.Second)) {
		t.Errorf("project's timeout: due %v after start %v", c.IdleDue, f.now)
	}
	if c := f.start().Conversation; !c.IdleDue.Equal(f.now.Add(voiceops.VoiceIdleBound)) {
		t.Errorf("voice: due %v", c.IdleDue)
	}
}

// TestIdleEndBeforeNotifications: an external event for a chat past its
// idle due is not bound (the chat ends then); a bridge notification for a
// call that ended by its idle bound (it never handed off) is refused.
func TestIdleEndBeforeNotifications(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	chat := f.startChat()
	voice := f.start().Conversation
	f.now = f.now.Add(time.Hour)
	if _, err := f.e.ExternalEvent(ctx, "acct", "proj", ExternalEvent{ID: chat.ID, ContentType: "text/plain", Body: []byte("x")}); !errors.Is(err, ErrEventNotBound) {
		t.Errorf("event past the due: %v", err)
	}
	if c, _ := f.e.Store.GetConversation(ctx, "acct", "proj", chat.ID); c.InProgress || c.EndReason != voiceops.EndTimeout {
		t.Errorf("chat after a late event: %+v", c)
	}
	if _, err := f.e.BridgeEnded(ctx, "acct", "proj", voice.ID, Bridge{BridgeDurationSeconds: 3, CallDurationSeconds: 9}); !errors.Is(err, ErrNotHandedOff) {
		t.Errorf("bridge-ended for a call ended by its idle bound: %v", err)
	}
	if c, _ := f.e.Store.GetConversation(ctx, "acct", "proj", voice.ID); c.State["bridge"] != nil {
		t.Errorf("recorded: %v", c.State)
	}
}
