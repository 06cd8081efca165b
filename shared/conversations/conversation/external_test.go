package conversation

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/hooks"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// fakeRunner records the calls and answers with res or err.
type fakeRunner struct {
	mu    sync.Mutex
	calls []hooks.Call
	res   hooks.Result
	err   error
}

func (r *fakeRunner) Run(_ context.Context, _ hooks.Target, c hooks.Call) (hooks.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	return r.res, r.err
}

func TestExternalEvent(t *testing.T) {
	f := newFixture(t, map[agent.Hook]bool{agent.HookOnExternalEvent: true, agent.HookOnBridgeEnded: true})
	fn := &fakeRunner{res: hooks.Result{State: map[string]any{"payment": "ok"}, End: true}}
	f.e.Functions = fn
	ctx := context.Background()
	id := f.start().Conversation.ID
	if len(fn.calls) != 0 {
		t.Fatalf("calls before the event: %+v", fn.calls)
	}
	body := `{"ref":"` + id + `","status":"paid"}`
	c, err := f.e.ExternalEvent(ctx, "acct", "proj", ExternalEvent{ID: id, ContentType: "application/json", Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	if len(fn.calls) != 1 {
		t.Fatalf("calls %+v", fn.calls)
	}
	call := fn.calls[0]
	if call.Hook != "on_external_event" || call.Turn != nil || call.Extra["event_id"] != id ||
		call.Extra["content_type"] != "application/json" || call.Extra["body"] != body {
		t.Errorf("call %+v", call)
	}
	stored, err := f.stores.Conversations.GetConversation(ctx, "acct", "proj", id)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := stored.State["external_event"].(map[string]any)
	if stored.State["payment"] != "ok" || ev["event_id"] != id || ev["body"] != body || ev["body_stored"] != true ||
		ev["content_type"] != "application/json" || !stored.InProgress || stored.Version != c.Version {
		t.Errorf("stored %+v", stored)
	}

	// A big body is given to the function, not kept in the state.
	big := strings.Repeat("x", MaxStoredEventBody+1)
	if _, err := f.e.ExternalEvent(ctx, "acct", "proj", ExternalEvent{ID: id, ContentType: "text/plain", Body: []byte(big)}); err != nil {
		t.Fatal(err)
	}
	stored, _ = f.stores.Conversations.GetConversation(ctx, "acct", "proj", id)
	ev, _ = stored.State["external_event"].(map[string]any)
	if _, has := ev["body"]; has || ev["body_stored"] != false || fn.calls[1].Extra["body"] != big {
		t.Errorf("big event: %v", ev)
	}

	// A failing function counts a function error; the event is still stored.
	fn.err = errors.New("boom")
	before := f.counts().Counts.Of(voiceops.KindFunctionErrors)
	if _, err := f.e.ExternalEvent(ctx, "acct", "proj", ExternalEvent{ID: id, ContentType: "text/plain", Body: []byte("hi")}); err != nil {
		t.Fatal(err)
	}
	if got := f.counts().Counts.Of(voiceops.KindFunctionErrors); got != before+1 {
		t.Errorf("function errors %d, want %d", got, before+1)
	}
	stored, _ = f.stores.Conversations.GetConversation(ctx, "acct", "proj", id)
	if ev, _ := stored.State["external_event"].(map[string]any); ev["body"] != "hi" {
		t.Errorf("event after a failing function: %v", ev)
	}

	// Not bound: unknown, malformed, another project, ended.
	for _, c := range []struct{ proj, id string }{{"proj", "conv_17953416000000xxxxxxxxxxxxxxxxxxxx"}, {"proj", "nope"}, {"other", id}} {
		if _, err := f.e.ExternalEvent(ctx, "acct", c.proj, ExternalEvent{ID: c.id}); !errors.Is(err, ErrEventNotBound) {
			t.Errorf("%v: %v", c, err)
		}
	}
	if _, err := f.e.Close(ctx, "acct", "proj", id, voiceops.EndClosed); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.ExternalEvent(ctx, "acct", "proj", ExternalEvent{ID: id}); !errors.Is(err, ErrEventNotBound) {
		t.Errorf("ended conversation: %v", err)
	}
}

func TestBridgeEnded(t *testing.T) {
	f := newFixture(t, map[agent.Hook]bool{agent.HookOnBridgeEnded: true})
	fn := &fakeRunner{res: hooks.Result{State: map[string]any{"survey": "sent"}}}
	f.e.Functions = fn
	ctx := context.Background()
	id := f.start().Conversation.ID
	// A handoff ends the conversation after 30 s; the bridge ends 60 s later.
	f.now = f.now.Add(30 * time.Second)
	if _, err := f.e.Close(ctx, "acct", "proj", id, voiceops.EndHandoff); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(60 * time.Second)
	if _, err := f.e.BridgeEnded(ctx, "acct", "proj", id, Bridge{BridgeDurationSeconds: 42.5, CallDurationSeconds: 90}); err != nil {
		t.Fatal(err)
	}
	if len(fn.calls) != 1 || fn.calls[0].Hook != "on_bridge_ended" || fn.calls[0].Extra["bridge_duration_seconds"] != 42.5 ||
		fn.calls[0].Extra["call_duration_seconds"] != 90.0 {
		t.Fatalf("calls %+v", fn.calls)
	}
	if b, _ := fn.calls[0].Conversation.State["bridge"].(map[string]any); b["ended"] != true {
		t.Errorf("the function did not see the bridge: %v", fn.calls[0].Conversation.State)
	}
	stored, _ := f.stores.Conversations.GetConversation(ctx, "acct", "proj", id)
	b, _ := stored.State["bridge"].(map[string]any)
	if b["ended"] != true || b["bridge_duration_seconds"] != 42.5 || b["call_duration_seconds"] != 90.0 || stored.State["survey"] != "sent" {
		t.Errorf("state %v", stored.State)
	}
	if _, err := f.e.BridgeEnded(ctx, "acct", "other", id, Bridge{}); !errors.Is(err, ErrNoSuchConv) {
		t.Errorf("other project: %v", err)
	}
}

// conflictingStore fails the first UpdateConversation with a conflict, after
// a turn changed the conversation.
type conflictingStore struct {
	voiceops.ConversationStore
	once sync.Once
	f    *fixture
}

func (s *conflictingStore) UpdateConversation(ctx context.Context, c voiceops.Conversation, expect int64) error {
	conflict := false
	s.once.Do(func() {
		conflict = true
		s.f.say(c.ID, TurnInput{Message: "what's my balance please"})
	})
	if conflict {
		return voiceops.ErrConflictingWrite
	}
	return s.ConversationStore.UpdateConversation(ctx, c, expect)
}

func TestExternalEventRetriesAConflict(t *testing.T) {
	f := newFixture(t, map[agent.Hook]bool{agent.HookOnExternalEvent: true})
	fn := &fakeRunner{res: hooks.Result{State: map[string]any{"payment": "ok"}}}
	f.e.Functions = fn
	id := f.start().Conversation.ID
	f.e.Store = &conflictingStore{ConversationStore: f.stores.Conversations, f: f}
	if _, err := f.e.ExternalEvent(context.Background(), "acct", "proj", ExternalEvent{ID: id, ContentType: "text/plain", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	stored, _ := f.stores.Conversations.GetConversation(context.Background(), "acct", "proj", id)
	if len(fn.calls) != 1 || stored.NumTurns != 2 || stored.State["payment"] != "ok" || stored.State["balance_told"] != true {
		t.Errorf("calls %d, stored %+v", len(fn.calls), stored)
	}
}
