package conversation

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/hooks"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// External events and bridge-ended notifications (the base host) reach a
// conversation outside of its turns: the project's function for the hook
// runs once, and its state (never its response, end or handoff: there is no
// turn to answer) is written to the conversation together with the
// notification's own record:
//
//   - An external event is bound to a conversation by its event ID, which
//     is the conversation's ID: the agent or a project function hands
//     conv.id to the external provider as its callback reference. Only a
//     conversation in progress takes events. The latest event is kept in
//     state["external_event"] = {"event_id", "content_type", "received_at",
//     "size_bytes", "body"}; "body" (the raw body as a string) is kept only
//     up to MaxStoredEventBody bytes of valid UTF-8, else it is left out and
//     "body_stored" is false. The function (on_external_event) always gets
//     the whole body in its extra data, and its state is applied after the
//     record, so it may keep what it needs. The agent reads the state at the
//     next turn.
//   - A bridge-ended notification comes after the conversation handed off
//     (a handoff ends it), once (BridgeEnded). It sets state["bridge"] =
//     {"ended": true, "bridge_duration_seconds", "call_duration_seconds"}
//     before the function (on_bridge_ended) runs, so the function sees it,
//     then applies the function's state (which cannot change "bridge").
//
// A write that races another (a turn of the same conversation) is retried
// on the fresh conversation without running the function again.

// MaxStoredEventBody is the largest external event body kept in the
// conversation's state (the function always gets the whole body).
const MaxStoredEventBody = 32 << 10

// ErrEventNotBound answers an external event whose ID names no conversation
// in progress of the project.
var ErrEventNotBound = voiceops.Errorf(voiceops.KindBadRequest, "event ID not found or not bound to an active conversation")

// ExternalEvent is an event an external provider pushed.
type ExternalEvent struct {
	// ID is the external event ID read from the request: the ID of the
	// conversation it is bound to.
	ID          string
	ContentType string // the media type of Body, without parameters
	Body        []byte
}

// Bridge is a bridge-ended notification's data.
type Bridge struct {
	BridgeDurationSeconds float64
	CallDurationSeconds   float64
}

// writeAttempts bounds the retries of a notification's write on
// ErrConflictingWrite.
const writeAttempts = 4

// ExternalEvent binds ev to the conversation in progress of the project
// whose ID is ev.ID (else ErrEventNotBound), runs the project's
// on_external_event function with extra {"event_id", "content_type",
// "body"}, and stores the event and the function's state in the
// conversation.
func (e *Engine) ExternalEvent(ctx context.Context, accountID, projectID string, ev ExternalEvent) (voiceops.Conversation, error) {
	if !voiceops.ValidConversationID(ev.ID) {
		return voiceops.Conversation{}, ErrEventNotBound
	}
	c, err := e.Store.GetConversation(ctx, accountID, projectID, ev.ID)
	if errors.Is(err, voiceops.ErrNotFound) || (err == nil && !c.InProgress) {
		return voiceops.Conversation{}, ErrEventNotBound
	}
	if err != nil {
		return voiceops.Conversation{}, err
	}
	if e.idlePast(c) {
		// Ended by its idle bound already, swept or not: not active.
		if _, err := e.endIdle(ctx, c); err != nil && !errors.Is(err, voiceops.ErrConflictingWrite) {
			return voiceops.Conversation{}, err
		}
		return voiceops.Conversation{}, ErrEventNotBound
	}
	now := e.now()
	record := map[string]any{
		"event_id": ev.ID, "content_type": ev.ContentType, "received_at": now.Format(time.RFC3339Nano),
		"size_bytes": len(ev.Body),
	}
	if len(ev.Body) <= MaxStoredEventBody && utf8.Valid(ev.Body) {
		record["body"] = string(ev.Body)
		record["body_stored"] = true
	} else {
		record["body_stored"] = false
	}
	set := map[string]any{"external_event": record}
	extra := map[string]any{"event_id": ev.ID, "content_type": ev.ContentType, "body": string(ev.Body)}
	return e.notify(ctx, c, agent.HookOnExternalEvent, extra, nil, set, nil, true)
}

// BridgeEnded records that the bridged call of a handed-off conversation
// of the project ended, once, and runs the project's on_bridge_ended
// function with extra {"bridge_duration_seconds", "call_duration_seconds"}.
// No such conversation is ErrNoSuchConv (404); one that did not hand off,
// or whose bridge end was already recorded, is ErrNotHandedOff or
// ErrBridgeRecorded (409); durations its own times rule out are 400 (see
// checkBridge). The record is written first, conditionally on the
// conversation's version, so of two notifications racing one is recorded
// and runs the function, the other is 409; the function's state is written
// after it (a second write, only when the function set state or metrics),
// and cannot change state["bridge"]. The record must be written before the
// function runs: written together after it, two notifications racing
// would both run the function.
func (e *Engine) BridgeEnded(ctx context.Context, accountID, projectID, conversationID string, b Bridge) (voiceops.Conversation, error) {
	record := map[string]any{"ended": true, "bridge_duration_seconds": b.BridgeDurationSeconds, "call_duration_seconds": b.CallDurationSeconds}
	var c voiceops.Conversation
	for attempt := 1; ; attempt++ {
		var err error
		c, err = e.Store.GetConversation(ctx, accountID, projectID, conversationID)
		if errors.Is(err, voiceops.ErrNotFound) {
			return c, ErrNoSuchConv
		}
		if err != nil {
			return c, err
		}
		if err := checkBridge(c.AsOf(e.now()), b, e.now()); err != nil {
			return c, err
		}
		// The record itself is not held to the state's size limit: it is
		// small, and a full state must not let a second notification in.
		prev := c.Version
		st := maps.Clone(c.State)
		if st == nil {
			st = map[string]any{}
		}
		st[bridgeKey] = record
		c.State, c.Version = st, prev+1
		err = e.Store.UpdateConversation(ctx, c, prev)
		if err == nil {
			break
		}
		if errors.Is(err, voiceops.ErrNotFound) {
			return c, ErrNoSuchConv
		}
		if !errors.Is(err, voiceops.ErrConflictingWrite) || attempt == writeAttempts {
			return c, err
		}
	}
	extra := map[string]any{"bridge_duration_seconds": b.BridgeDurationSeconds, "call_duration_seconds": b.CallDurationSeconds}
	return e.notify(ctx, c, agent.HookOnBridgeEnded, extra, nil, nil, map[string]any{bridgeKey: record}, false)
}

// bridgeKey is the key of the bridge-ended record in a conversation's state.
const bridgeKey = "bridge"

var (
	// ErrNotHandedOff answers a bridge-ended notification for a
	// conversation that did not hand off: there was no bridge.
	ErrNotHandedOff = voiceops.Errorf(voiceops.KindConflict, "the conversation was not handed off, so it has no bridge to end")
	// ErrBridgeRecorded answers a second bridge-ended notification.
	ErrBridgeRecorded = voiceops.Errorf(voiceops.KindConflict, "the end of this conversation's bridge was already recorded; it is accepted once")
)

// BridgeSlack is what a bridge's durations may exceed the conversation's
// own times by: whole-second rounding of the provider's durations, and the
// notification's way here.
const BridgeSlack = 2 * time.Second

// checkBridge holds a bridge-ended notification to the conversation c (as
// of now): handed off, not recorded yet, and durations that fit its times.
// The bridge starts at the handoff (which ends the conversation, at
// EndedAt) and the call at StartedAt or before, so: bridge <= call, the
// bridge no longer than the time since the handoff, the call no longer
// than the time since the start, and no shorter than the conversation
// before the handoff.
func checkBridge(c voiceops.Conversation, b Bridge, now time.Time) error {
	if c.InProgress || c.EndedAt == nil || (!c.Handoff && c.EndReason != voiceops.EndHandoff) {
		return ErrNotHandedOff
	}
	if _, ok := c.State[bridgeKey]; ok {
		return ErrBridgeRecorded
	}
	secs := func(d time.Duration) float64 { return d.Seconds() }
	slack := secs(BridgeSlack)
	var fields []voiceops.FieldError
	fail := func(field, format string, args ...any) {
		fields = append(fields, voiceops.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	sinceHandoff, sinceStart, before := secs(now.Sub(*c.EndedAt)), secs(now.Sub(c.StartedAt)), secs(c.EndedAt.Sub(c.StartedAt))
	if b.BridgeDurationSeconds > b.CallDurationSeconds {
		fail("bridge_duration_seconds", "(%g) is longer than call_duration_seconds (%g): the bridge is part of the call", b.BridgeDurationSeconds, b.CallDurationSeconds)
	}
	if b.BridgeDurationSeconds > sinceHandoff+slack {
		fail("bridge_duration_seconds", "(%g) is longer than the %.0f s since the conversation handed off", b.BridgeDurationSeconds, sinceHandoff)
	}
	if b.CallDurationSeconds > sinceStart+slack {
		fail("call_duration_seconds", "(%g) is longer than the %.0f s since the conversation started", b.CallDurationSeconds, sinceStart)
	}
	if b.CallDurationSeconds+slack < before {
		fail("call_duration_seconds", "(%g) is shorter than the conversation before its handoff (%.0f s)", b.CallDurationSeconds, before)
	}
	if len(fields) > 0 {
		return voiceops.Invalid(fields...)
	}
	return nil
}

// holds reports whether state has every key of want with its value.
func holds(state, want map[string]any) bool {
	for k, v := range want {
		if got, ok := state[k]; !ok || !reflect.DeepEqual(got, v) {
			return false
		}
	}
	return true
}

// notify applies `before` to the state, runs the hook's function (if the
// project has one), applies `after`, then the function's state, then
// `reserved` (keys the function cannot change), and writes the
// conversation, retrying a conflicting write on a fresh read. When that
// changes nothing (no function ran or it set nothing, and the conversation
// has ended, so no idle due moves) there is no write.
// With live, a conversation that ended meanwhile is ErrEventNotBound.
func (e *Engine) notify(ctx context.Context, c voiceops.Conversation, hook agent.Hook, extra, before, after, reserved map[string]any, live bool) (voiceops.Conversation, error) {
	cfg, _, _, err := e.project(ctx, c.AccountID, c.ProjectID, c.VariantID)
	if err != nil && !errors.Is(err, ErrNoVariant) && !errors.Is(err, ErrNoAgent) {
		return c, err
	}
	applyState(&c, before)
	var fnState map[string]any
	var fnMetrics []voiceops.CustomMetric
	ferrs := 0
	if spec, ok := cfg.Functions[hook]; ok {
		res, err := e.Functions.Run(ctx, target(cfg, spec), hooks.Call{Hook: string(hook), Conversation: c, Extra: extra})
		if err != nil {
			ferrs++
			e.Log.WarnContext(ctx, "project function failed", "conversation_id", c.ID, "hook", hook, "error", err)
		} else {
			fnState, fnMetrics = res.State, res.Metrics
		}
	}
	if len(before) == 0 && len(after) == 0 && len(fnState) == 0 && len(fnMetrics) == 0 && !c.InProgress && holds(c.State, reserved) {
		// Nothing to write: a bridge-ended notification whose project runs
		// no function (or one that set nothing) is done with its record.
		e.recordEvents(ctx, c, ferrs, nil)
		return c, nil
	}
	for attempt := 1; ; attempt++ {
		prev := c.Version
		applyState(&c, after)
		if !applyState(&c, fnState) || len(reserved) > 0 {
			// reserved is set even past the state's size limit: it is small.
			st := maps.Clone(c.State)
			if st == nil {
				st = map[string]any{}
			}
			maps.Copy(st, reserved)
			c.State = st
		}
		e.logMetrics(ctx, &c, fnMetrics)
		if c.InProgress {
			c.IdleDue = e.idleDue(cfg, c, e.now()) // an event is activity
		}
		c.Version = prev + 1
		err := e.Store.UpdateConversation(ctx, c, prev)
		if err == nil {
			break
		}
		switch {
		case errors.Is(err, voiceops.ErrNotFound) && live:
			return c, ErrEventNotBound
		case errors.Is(err, voiceops.ErrNotFound):
			return c, ErrNoSuchConv
		}
		if !errors.Is(err, voiceops.ErrConflictingWrite) || attempt == writeAttempts {
			return c, err
		}
		c, err = e.Store.GetConversation(ctx, c.AccountID, c.ProjectID, c.ID)
		switch {
		case errors.Is(err, voiceops.ErrNotFound) && live:
			return c, ErrEventNotBound
		case errors.Is(err, voiceops.ErrNotFound):
			return c, ErrNoSuchConv
		case err != nil:
			return c, err
		}
		if live && !c.InProgress {
			return c, ErrEventNotBound
		}
		applyState(&c, before)
	}
	e.recordEvents(ctx, c, ferrs, nil)
	return c, nil
}
