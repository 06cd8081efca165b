package conversation

import (
	"context"
	"errors"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Conversations end by themselves. Every write of a conversation in
// progress sets its IdleDue: the last activity (start, turn, external
// event, bridge notification) plus the idle bound of its channel. The
// stores index the conversations in progress by IdleDue
// (DueConversations: a sparse index on DynamoDB), and the sweep, run on a
// schedule, ends those past it: a chat with end reason timeout, a voice
// call as crashed (its end was never reported; it counts in call_crashes).
// The end time is the IdleDue itself, not the moment of the sweep, so a
// late sweep does not lengthen the conversation. Respond and Close also
// end a conversation found past its IdleDue (and answer ErrEnded), so the
// timeout holds to the instant whatever the sweep's period.

// idleDue is when c ends for want of activity, counted from now.
func (e *Engine) idleDue(cfg agent.Config, c voiceops.Conversation, now time.Time) time.Time {
	if c.Channel == voiceops.ChannelVoice {
		return now.Add(voiceops.VoiceIdleBound)
	}
	d := time.Duration(cfg.ChatIdleTimeoutSeconds) * time.Second
	if d <= 0 {
		d = e.ChatIdleTimeout
	}
	if d <= 0 {
		d = voiceops.DefaultChatIdleTimeout
	}
	return now.Add(d)
}

// idlePast reports whether c, in progress, is past its IdleDue.
func (e *Engine) idlePast(c voiceops.Conversation) bool {
	return c.InProgress && !c.IdleDue.IsZero() && !e.Now().Before(c.IdleDue)
}

// idleReason is how an idle conversation ends.
func idleReason(c voiceops.Conversation) voiceops.EndReason {
	if c.Channel == voiceops.ChannelVoice {
		return voiceops.EndCrashed
	}
	return voiceops.EndTimeout
}

// endIdle ends c, past its IdleDue, at its IdleDue.
func (e *Engine) endIdle(ctx context.Context, c voiceops.Conversation) (voiceops.Conversation, error) {
	return e.closeAs(ctx, c, idleReason(c), c.IdleDue.UTC().Truncate(time.Millisecond), true)
}

// Sweep bounds: conversations read per DueConversations call, rounds per
// Sweep (the next run goes on), and ends in flight at once (each may run
// the project's on_end function).
const (
	sweepBatch    = 100
	sweepRounds   = 20
	sweepInFlight = 8
)

// SweepIdle ends the conversations past their IdleDue: reads the due ones
// in batches, reads each again (the index may lag), and ends it if it is
// still in progress and past its IdleDue. A conversation written meanwhile
// (a turn arrived) is left alone. It returns how many it ended; an error
// of one conversation is reported after the others were tried.
func (e *Engine) SweepIdle(ctx context.Context) (int, error) {
	ended := 0
	var errs []error
	for range sweepRounds {
		due, err := e.Store.DueConversations(ctx, e.Now(), sweepBatch)
		if err != nil {
			return ended, err
		}
		n, roundErrs := e.endAll(ctx, due)
		ended += n
		errs = append(errs, roundErrs...)
		if len(due) < sweepBatch || n == 0 {
			break // nothing more due, or only what cannot be ended now
		}
	}
	if ended > 0 {
		telemetry.Or(e.Telemetry).Record(telemetry.IdleEnds, float64(ended))
	}
	return ended, errors.Join(errs...)
}

func (e *Engine) endAll(ctx context.Context, due []voiceops.Conversation) (int, []error) {
	var mu sync.Mutex
	ended := 0
	var errs []error
	sem := make(chan struct{}, sweepInFlight)
	var wg sync.WaitGroup
	for _, d := range due {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ok, err := e.sweepOne(ctx, d)
			mu.Lock()
			defer mu.Unlock()
			if ok {
				ended++
			}
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	return ended, errs
}

// sweepOne ends one conversation the index says is due, if it is.
func (e *Engine) sweepOne(ctx context.Context, d voiceops.Conversation) (bool, error) {
	c, err := e.Store.GetConversation(ctx, d.AccountID, d.ProjectID, d.ID)
	if errors.Is(err, voiceops.ErrNotFound) {
		return false, nil // its retention ended
	}
	if err != nil {
		return false, err
	}
	if !e.idlePast(c) {
		return false, nil
	}
	_, err = e.endIdle(ctx, c)
	if errors.Is(err, voiceops.ErrConflictingWrite) || errors.Is(err, voiceops.ErrNotFound) {
		return false, nil // written meanwhile: the next sweep looks again
	}
	if err != nil {
		e.Log.ErrorContext(ctx, "ending an idle conversation", "conversation_id", c.ID, "error", err)
		return false, err
	}
	e.Log.InfoContext(ctx, "idle conversation ended", "conversation_id", c.ID, "account_id", c.AccountID,
		"project_id", c.ProjectID, "reason", idleReason(c))
	return true, nil
}
