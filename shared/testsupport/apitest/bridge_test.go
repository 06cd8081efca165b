package apitest

import (
	"strings"
	"testing"
	"time"
)

// TestBridgeEndedOnceAfterHandoff: over HTTP, in the base host's
// shapes: 409 for a conversation that did not hand off and for a
// second notification, 400 for durations the conversation's times rule
// out; nothing is recorded by a refused one.
func TestBridgeEndedOnceAfterHandoff(t *testing.T) {
	h := newEventsHarness(t)
	const path = "/internal/v1/agentic-dial/bridge-ended"
	post := func(conv string, bridge, call float64, status int) string {
		t.Helper()
		body := map[string]any{"conversation_id": conv, "bridge_duration_seconds": bridge, "call_duration_seconds": call}
		res := h.doWith("POST", path, h.events, body, "application/json").Expect(t, status)
		msg, _ := res.JSON(t)["error_message"].(string)
		return msg
	}
	// In progress: no handoff yet.
	if msg := post(h.conv, 1, 1, 409); !strings.Contains(msg, "not handed off") {
		t.Errorf("in progress: %q", msg)
	}
	// Ended without a handoff (closed).
	closed := h.chat("POST", "/v1/acct_a/proj_a1/chat/create", h.keyA, h.agent, `{}`).Expect(t, 200).JSON(t)["conversation_id"].(string)
	h.chat("PUT", "/v1/acct_a/proj_a1/chat/close", h.keyA, h.agent, `{"conversation_id":"`+closed+`"}`).Expect(t, 200)
	if msg := post(closed, 1, 1, 409); !strings.Contains(msg, "not handed off") {
		t.Errorf("closed: %q", msg)
	}
	// A conversation that talks 1 s, hands off, and is bridged 30 s.
	h.clock.Advance(time.Second)
	h.chat("POST", "/v1/acct_a/proj_a1/chat/respond", h.keyA, h.agent, `{"conversation_id":"`+h.conv+`","message":"I want a human"}`).Expect(t, 200)
	h.clock.Advance(30 * time.Second)
	for _, c := range []struct {
		bridge, call float64
		want         string
	}{
		{99, 1, "bridge_duration_seconds (99) is longer than call_duration_seconds (1)"},
		{99, 99, "bridge_duration_seconds (99) is longer than the 30 s since the conversation handed off"},
		{30, 600, "call_duration_seconds (600) is longer than the 31 s since the conversation started"},
	} {
		if msg := post(h.conv, c.bridge, c.call, 400); !strings.Contains(msg, c.want) {
			t.Errorf("%g/%g: %q, want %q", c.bridge, c.call, msg, c.want)
		}
	}
	if st := h.state(t, "proj_a1", h.conv); st["bridge"] != nil {
		t.Errorf("a refused notification recorded %v", st["bridge"])
	}
	post(h.conv, 30, 31, 200)
	if msg := post(h.conv, 30, 31, 409); !strings.Contains(msg, "already recorded") {
		t.Errorf("second: %q", msg)
	}
	if n := len(h.fn.calls); n != 1 {
		t.Errorf("the function ran %d times, want once", n)
	}
}
