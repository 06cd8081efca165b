package conversation

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/agent"
	"github.com/voiceops/opsapi/shared/hooks"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// External events and bridge-ended notifications (doc 2) reach a
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
//   - A bridge-ended notification may arrive after the conversation ended (a
//     handoff ends it). It sets state["bridge"] = {"ended": true,
//     "bridge_duration_seconds", "call_duration_seconds"} before the function
//     (on_bridge_ended) runs, so the function sees it, then applies the
//     function's state.
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
	return e.notify(ctx, c, agent.HookOnExternalEvent, extra, nil, set, true)
}

// BridgeEnded records that the bridged call of a conversation of the
// project ended (ErrNoSuchConv if there is no such conversation; an ended
// conversation is fine) and runs the project's on_bridge_ended function with
// extra {"bridge_duration_seconds", "call_duration_seconds"}.
func (e *Engine) BridgeEnded(ctx context.Context, accountID, projectID, conversationID string, b Bridge) (voiceops.Conversation, error) {
	c, err := e.Store.GetConversation(ctx, accountID, projectID, conversationID)
	if errors.Is(err, voiceops.ErrNotFound) {
		return c, ErrNoSuchConv
	}
	if err != nil {
		return c, err
	}
	if e.idlePast(c) {
		// Its idle bound passed: it ended then, and the notification is
		// recorded on the ended conversation.
		if c, err = e.endIdle(ctx, c); err != nil {
			return c, err
		}
	}
	set := map[string]any{"bridge": map[string]any{
		"ended": true, "bridge_duration_seconds": b.BridgeDurationSeconds, "call_duration_seconds": b.CallDurationSeconds,
	}}
	extra := map[string]any{"bridge_duration_seconds": b.BridgeDurationSeconds, "call_duration_seconds": b.CallDurationSeconds}
	return e.notify(ctx, c, agent.HookOnBridgeEnded, extra, set, nil, false)
}

// notify applies `before` to the state, runs the hook's function (if the
// project has one), applies `after` and then the function's state, and
// writes the conversation, retrying a conflicting write on a fresh read.
// With live, a conversation that ended meanwhile is ErrEventNotBound.
func (e *Engine) notify(ctx context.Context, c voiceops.Conversation, hook agent.Hook, extra, before, after map[string]any, live bool) (voiceops.Conversation, error) {
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
	for attempt := 1; ; attempt++ {
		prev := c.Version
		applyState(&c, after)
		applyState(&c, fnState)
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
