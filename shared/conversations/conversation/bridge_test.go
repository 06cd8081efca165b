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

// TestBridgeEndedOnceAfterHandoff: bridge-ended is
// accepted once per conversation, only after a handoff, with durations
// that fit the conversation's own times; on memory and on DynamoDB.
func TestBridgeEndedOnceAfterHandoff(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			testBridgeEndedOnce(t, newFixtureOn(t, map[agent.Hook]bool{agent.HookOnBridgeEnded: true}, b))
		})
	}
}

func testBridgeEndedOnce(t *testing.T, f *fixture) {
	ctx := context.Background()
	// A function that tries to overwrite the record.
	fn := &fakeRunner{res: hooks.Result{State: map[string]any{"bridge": "forged", "survey": "sent"}}}
	f.e.Functions = fn

	// In progress, and ended without a handoff: 409, nothing recorded.
	open := f.start().Conversation.ID
	if _, err := f.e.BridgeEnded(ctx, "acct", "proj", open, Bridge{BridgeDurationSeconds: 1, CallDurationSeconds: 1}); !errors.Is(err, ErrNotHandedOff) {
		t.Errorf("in progress: %v", err)
	}
	closed := f.start().Conversation.ID
	if _, err := f.e.Close(ctx, "acct", "proj", closed, voiceops.EndCompleted); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.BridgeEnded(ctx, "acct", "proj", closed, Bridge{}); !errors.Is(err, ErrNotHandedOff) {
		t.Errorf("completed without a handoff: %v", err)
	}
	if _, err := f.e.BridgeEnded(ctx, "acct", "proj", "conv_nosuch1234567890abcd", Bridge{}); !errors.Is(err, ErrNoSuchConv) {
		t.Errorf("no such conversation: %v", err)
	}

	// A call that talks about 20 s with the agent, hands off, and is bridged.
	id := f.start().Conversation.ID
	f.now = f.now.Add(20 * time.Second)
	if a := f.say(id, TurnInput{Message: "I want a human"}); a.Handoff == nil {
		t.Fatalf("no handoff: %+v", a)
	}
	f.now = f.now.Add(99 * time.Second) // 99 s of bridge; the call: 119 s

	for _, c := range []struct {
		b     Bridge
		field string
	}{
		{Bridge{BridgeDurationSeconds: 99, CallDurationSeconds: 1}, "bridge_duration_seconds (99) is longer than call_duration_seconds (1)"},
		{Bridge{BridgeDurationSeconds: 200, CallDurationSeconds: 119}, "bridge_duration_seconds (200) is longer than the 99 s since the conversation handed off"},
		{Bridge{BridgeDurationSeconds: 99, CallDurationSeconds: 500}, "call_duration_seconds (500) is longer than the"},
		{Bridge{BridgeDurationSeconds: 5, CallDurationSeconds: 10}, "call_duration_seconds (10) is shorter than the conversation before its handoff"},
	} {
		_, err := f.e.BridgeEnded(ctx, "acct", "proj", id, c.b)
		var e *voiceops.Error
		var msgs []string
		if errors.As(err, &e) {
			for _, fe := range e.Fields {
				msgs = append(msgs, fe.Field+" "+fe.Message)
			}
		}
		if e == nil || e.Kind != voiceops.KindInvalid || !strings.Contains(strings.Join(msgs, "; "), c.field) {
			t.Errorf("%+v: %v %q, want a 400 saying %q", c.b, err, msgs, c.field)
		}
	}
	if len(fn.calls) != 0 {
		t.Fatalf("a refused notification ran the function: %+v", fn.calls)
	}
	// Within the slack of rounding: accepted, once.
	if _, err := f.e.BridgeEnded(ctx, "acct", "proj", id, Bridge{BridgeDurationSeconds: 100, CallDurationSeconds: 120}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.BridgeEnded(ctx, "acct", "proj", id, Bridge{BridgeDurationSeconds: 50, CallDurationSeconds: 70}); !errors.Is(err, ErrBridgeRecorded) {
		t.Errorf("second notification: %v", err)
	}
	c, _ := f.e.Store.GetConversation(ctx, "acct", "proj", id)
	if b, _ := c.State["bridge"].(map[string]any); b["bridge_duration_seconds"] != 100.0 || b["call_duration_seconds"] != 120.0 || c.State["survey"] != "sent" {
		t.Errorf("state %v", c.State)
	}
	if len(fn.calls) != 1 {
		t.Errorf("the function ran %d times", len(fn.calls))
	}
}

// TestBridgeEndedRace: of notifications sent at once, exactly one is
// recorded (the write is conditional on the conversation's version).
func TestBridgeEndedRace(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			f := newFixtureOn(t, nil, b)
			id := f.start().Conversation.ID
			f.now = f.now.Add(5 * time.Second)
			if a := f.say(id, TurnInput{Message: "I want a human"}); a.Handoff == nil {
				t.Fatalf("no handoff: %+v", a)
			}
			f.now = f.now.Add(30 * time.Second)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var ok, recorded int
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := f.e.BridgeEnded(context.Background(), "acct", "proj", id, Bridge{BridgeDurationSeconds: float64(20 + i), CallDurationSeconds: 35})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						ok++
					case errors.Is(err, ErrBridgeRecorded):
						recorded++
					default:
						t.Errorf("notification %d: %v", i, err)
					}
				}()
			}
			wg.Wait()
			if ok != 1 || recorded != 7 {
				t.Errorf("%d accepted, %d refused as recorded; want 1 and 7", ok, recorded)
			}
		})
	}
}

// TestBridgeEndedWrites: the record is the one write of a notification
// whose project runs no on_bridge_ended function, or whose function sets
// nothing (it failed); a function's state is a second write.
func TestBridgeEndedWrites(t *testing.T) {
	for _, c := range []struct {
		name   string
		hooks  map[agent.Hook]bool
		fn     *fakeRunner
		writes int64
		state  map[string]any
	}{
		{"no function", nil, nil, 1, nil},
		{"a function setting state", map[agent.Hook]bool{agent.HookOnBridgeEnded: true},
			&fakeRunner{res: hooks.Result{State: map[string]any{"survey": "sent"}}}, 2, map[string]any{"survey": "sent"}},
		{"a failing function", map[agent.Hook]bool{agent.HookOnBridgeEnded: true},
			&fakeRunner{err: errors.New("down")}, 1, nil},
	} {
		for _, b := range backends(t) { // a fixture's own stores
			t.Run(c.name+"/"+b.name, func(t *testing.T) {
				f := newFixtureOn(t, c.hooks, b)
				var fn *fakeRunner
				if c.fn != nil {
					fn = &fakeRunner{res: c.fn.res, err: c.fn.err}
					f.e.Functions = fn
				}
				id := f.start().Conversation.ID
				f.now = f.now.Add(5 * time.Second)
				a := f.say(id, TurnInput{Message: "I want a human"})
				if a.Handoff == nil {
					t.Fatalf("no handoff: %+v", a)
				}
				f.now = f.now.Add(30 * time.Second)
				ctx := context.Background()
				got, err := f.e.BridgeEnded(ctx, "acct", "proj", id, Bridge{BridgeDurationSeconds: 30, CallDurationSeconds: 35})
				if err != nil {
					t.Fatal(err)
				}
				stored, err := f.e.Store.GetConversation(ctx, "acct", "proj", id)
				if err != nil {
					t.Fatal(err)
				}
				if stored.Version != a.Conversation.Version+c.writes || got.Version != stored.Version {
					t.Errorf("version %d after the handoff's %d (answered %d): want %d write(s)", stored.Version, a.Conversation.Version, got.Version, c.writes)
				}
				if rec, _ := stored.State["bridge"].(map[string]any); rec["bridge_duration_seconds"] != 30.0 {
					t.Errorf("bridge record %v", stored.State["bridge"])
				}
				for k, v := range c.state {
					if stored.State[k] != v {
						t.Errorf("state %s = %v, want %v", k, stored.State[k], v)
					}
				}
				if _, err := f.e.BridgeEnded(ctx, "acct", "proj", id, Bridge{BridgeDurationSeconds: 30, CallDurationSeconds: 35}); !errors.Is(err, ErrBridgeRecorded) {
					t.Errorf("the same notification again: %v, want ErrBridgeRecorded", err)
				}
				if fn != nil && len(fn.calls) != 1 {
					t.Errorf("the function ran %d times", len(fn.calls))
				}
			})
		}
	}
}
