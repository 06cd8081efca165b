// Package calls is the service that owns outbound calls: their state
// machine (queued → calling → success | failure) and the answered call's
// voice conversation. Every change of a call goes through it: the trigger
// (shared/calls/outboundapi), the dialer's claim and failures (shared/calls/dialer),
// the provider's status reports, answer and turns (Twilio's callbacks in
// shared/calls/twilioapi, and the dev server's simulator, which take the same
// path from the provider's report on). Those only parse and call it.
//
// A provider's callback may arrive twice, late, or out of order; the
// service decides them all here:
//
//   - Status reports never move a call backwards (Report): a repeat, a late
//     "ringing", anything after a terminal status changes nothing.
//   - The answer and the turns of an answered call are numbered steps (1 the
//     answer, 1+k the k-th turn; voiceops.Call.Steps). A step is claimed
//     with one conditional write before the conversation engine runs, and
//     its reply is stored with the call: a replayed step gets the stored
//     reply and runs nothing. A turn's number is in its callback URL (the
//     call's own turn sequence, which the provider's signature covers);
//     a turn callback without one is refused. The answer, which has no
//     number in its URL, is step 1 and so is never a new step twice.
//   - An answer for a call already ended is refused (Reply.End with no
//     words: hang up) and starts nothing.
package calls

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Engine runs the answered call's voice conversation
// (shared/conversations/conversation.Engine implements it). The service never imports
// the engine: the dialer links this package without it.
type Engine interface {
	// StartCall starts the answered call's voice conversation (from the
	// caller ID `from` to the called number, the trigger's metadata as
	// its integration attributes) and returns it with the agent's words.
	StartCall(ctx context.Context, c voiceops.Call, from string) (conversationID string, r voiceops.CallReply, err error)
	// RespondCall answers the callee's turn; a conversation that has
	// ended answers End with no words.
	RespondCall(ctx context.Context, c voiceops.Call, message, dtmf string) (voiceops.CallReply, error)
	// EndCall ends the call's conversation (completed); one that has
	// ended or is gone is no error.
	EndCall(ctx context.Context, c voiceops.Call) error
}

// Speech is what the callee said in a turn: a transcript or DTMF digits.
type Speech struct {
	Message string
	DTMF    string
}

// Reply is what the provider tells the callee after a step.
type Reply struct {
	ConversationID string
	// Turn is the number of the next turn: the provider's next callback
	// names it (twilio.TurnURL).
	Turn int
	Text string
	// End: hang up after Text (with no Text: at once).
	End bool
}

// Hangup is the reply to a callback the call takes no more: hang up.
var Hangup = Reply{End: true}

// Errors of the callbacks (the HTTP layer maps their kinds).
var (
	// ErrStepPassed is a callback of a step the call has gone past: an
	// old turn replayed. Nothing runs.
	ErrStepPassed = voiceops.Errorf(voiceops.KindConflict, "this turn of the call was answered and followed by another")
	// ErrStepAhead is a turn the call has not reached.
	ErrStepAhead = voiceops.Errorf(voiceops.KindConflict, "the call has not reached this turn")
	// ErrPending is a step whose reply is not ready by the time the
	// callback must answer: the provider is told to wait and fetch it
	// (TurnResult, AnswerResult). It is no failure of the request.
	ErrPending = voiceops.Errorf(voiceops.KindConflict, "this step of the call is still running")
	// ErrStepLost is a step whose work died before storing its reply (its
	// claim is past StepLease): the callee is asked again, and that
	// callback takes the step over.
	ErrStepLost = voiceops.Errorf(voiceops.KindConflict, "this step of the call was lost")
	// ErrTurnNumber is a turn callback that does not number its turn.
	ErrTurnNumber = voiceops.Errorf(voiceops.KindBadRequest, "a turn callback must name its turn: a positive integer")
	// ErrStepInFlight is a step another request is still running.
	ErrStepInFlight = voiceops.Errorf(voiceops.KindConflict, "this step of the call is in progress")
)

// Defaults of the in-flight handling (Service.StepWait, Service.StepLease).
const (
	// DefaultStepWait is how long a repeated callback waits for the first
	// one to store its reply (Twilio's own timeout is 15 s).
	DefaultStepWait = 10 * time.Second
	// DefaultStepLease is how long a claimed step without a reply is
	// another request's; past it, the step is taken over (its first
	// attempt died between the claim and the reply).
	DefaultStepLease = 30 * time.Second
	// DefaultStepRun bounds a detached step's work: the agent and the
	// project's functions (10 s each at most), ending before
	// DefaultStepLease, so that no takeover runs beside a live step.
	DefaultStepRun = 25 * time.Second
	// ReplyMargin is what a callback keeps, of its request's deadline,
	// to write its answer once it stops waiting for a step.
	ReplyMargin = time.Second
	stepPoll    = 100 * time.Millisecond
)

// Service owns outbound calls. Now and Sleep are injected.
type Service struct {
	Calls voiceops.CallStore
	// Dial carries each triggered call to the dialer (only the trigger uses it).
	Dial voiceops.DialQueue
	// Engine runs answered calls' conversations (nil where none is
	// answered: the dialer placing through Twilio).
	Engine Engine
	Now    func() time.Time
	// Sleep waits d or until ctx ends (for a step in flight; nil: a timer).
	Sleep     func(ctx context.Context, d time.Duration) error
	StepWait  time.Duration // default DefaultStepWait
	StepLease time.Duration // default DefaultStepLease
	// Detach runs a claimed step's work apart from the callback that
	// claimed it (a goroutine on a long-lived server), so that the work
	// outlives a callback that must answer first (Twilio's 15 s): it then
	// runs with StepRun of its own and stores its reply for the fetch of
	// the step's result (TurnResult, AnswerResult). nil: the work is bound
	// to the callback's request, and a step that overruns it is taken over
	// after StepLease.
	Detach func(work func())
	// StepRun bounds a detached step's work (default DefaultStepRun).
	StepRun time.Duration
	// Handoff, when set, carries every claimed step to a run of its own
	// elsewhere (on Lambda: an asynchronous invocation of the function,
	// whose answer would otherwise end the work), which calls RunStep; the
	// callback waits for the stored reply within its budget, as a fetch of
	// the result does. A step whose handoff fails runs bound to its
	// callback, as without Detach.
	Handoff func(ctx context.Context, j StepJob) error
	// Telemetry counts the provider's outcomes (telemetry.Dials, outcome
	// DialEnded); nil counts nothing.
	Telemetry telemetry.Recorder
}

// DialEnded is the Dials outcome of a call the provider reported ended;
// its reason is the provider's (completed, busy, no-answer, failed,
// canceled). The dialer counts the outcomes it sees itself (placed, failed).
const DialEnded = "ended"

func (s *Service) now() time.Time { return s.Now().UTC() }

func (s *Service) sleep(ctx context.Context, d time.Duration) error {
	if s.Sleep != nil {
		return s.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Trigger stores a new queued call of the draft's account and project
// (to_number, metadata, encryption, country code) and queues its dial job.
// It returns the call with its new SID.
//
// The job is sent and the call written at once (one round trip, not two),
// and the call is acknowledged only when both are done, so no
// acknowledged call misses its job. A job may reach the dialer before its
// call is written: the dialer waits for the call (dialer.orphanAge, no
// shorter than the trigger's request deadline, httpapi.DefaultDeadline,
// within which an acknowledged write has landed). When the write fails
// (an error answer), the dialer drops the job once it is that old. When
// the send fails, the call written without a job is given up (withdraw),
// so that no queued call waits for a job that never comes.
func (s *Service) Trigger(ctx context.Context, draft voiceops.Call) (voiceops.Call, error) {
	now := s.now()
	c := draft
	c.SID, c.Status, c.CreatedAt, c.UpdatedAt = voiceops.NewCallSID(), voiceops.CallQueued, now, now
	var sendErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		sendErr = s.Dial.SendDial(ctx, voiceops.DialJob{SID: c.SID, AccountID: c.AccountID, QueuedAt: now}, 0)
	})
	err := s.Calls.CreateCall(ctx, c)
	wg.Wait()
	if err != nil {
		if errors.Is(err, voiceops.ErrAlreadyExists) {
			return voiceops.Call{}, voiceops.Internal(err) // 128 random bits never collide
		}
		return voiceops.Call{}, err
	}
	if sendErr != nil {
		s.withdraw(ctx, c.SID)
		return voiceops.Call{}, sendErr
	}
	return c, nil
}

// withdrawTimeout bounds withdraw: the trigger's error answer waits for it.
const withdrawTimeout = time.Second

// withdraw gives up a triggered call whose dial job could not be sent
// (the trigger answers an error): queued → calling → failure (reason
// failed), so it expires like every ended call. If the move to calling is
// refused, a dialer has claimed the call (the job reached the queue after
// all) and it is left to that dialer. Best effort, with its own bounded
// time (the request's may be what ran out): a call it fails to give up
// stays queued (or calling), unexpired, its SID never answered to anyone.
func (s *Service) withdraw(ctx context.Context, sid string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), withdrawTimeout)
	defer cancel()
	if _, err := s.Calls.MoveCall(ctx, sid, voiceops.CallCalling, "", s.now()); err != nil {
		return
	}
	_, _ = s.Calls.MoveCall(ctx, sid, voiceops.CallFailure, voiceops.ReasonFailed, s.now())
}

// Get returns the call; voiceops.ErrNotFound when it is unknown or expired.
func (s *Service) Get(ctx context.Context, sid string) (voiceops.Call, error) {
	return s.Calls.GetCall(ctx, sid, s.Now())
}

// Status returns the call of a project: one of another project is
// voiceops.ErrNotFound, like an unknown one.
func (s *Service) Status(ctx context.Context, accountID, projectID, sid string) (voiceops.Call, error) {
	c, err := s.Get(ctx, sid)
	if err == nil && (c.AccountID != accountID || c.ProjectID != projectID) {
		return voiceops.Call{}, voiceops.ErrNotFound
	}
	return c, err
}

// Move moves the call to `to` as another telephony system says (the
// internal route): only the base host's transitions, else ErrCallTransition.
func (s *Service) Move(ctx context.Context, sid string, to voiceops.CallStatus, reason string) (voiceops.Call, error) {
	c, err := s.Calls.MoveCall(ctx, sid, to, reason, s.now())
	if err == nil {
		s.endConversation(ctx, c)
	}
	return c, err
}

// Claim is the dialer's claim of a queued call (queued → calling): only one
// dialer wins it. claimed is false when another has it.
func (s *Service) Claim(ctx context.Context, sid string) (claimed bool, err error) {
	at := s.now()
	if _, err := s.Calls.MoveCall(ctx, sid, voiceops.CallCalling, "", at); err != nil {
		if !errors.Is(err, voiceops.ErrCallTransition) && !errors.Is(err, voiceops.ErrNotFound) {
			return false, err
		}
		// Refused: another dialer has the call, or the SDK retried our own
		// write after it had landed (the retry then fails its condition).
		// The claim's time tells them apart: no other dialer claims at the
		// same nanosecond.
		cur, gerr := s.Calls.GetCall(ctx, sid, s.Now())
		return gerr == nil && cur.Status == voiceops.CallCalling && cur.UpdatedAt.Equal(at), nil
	}
	return true, nil
}

// Fail ends a calling call as failure with reason; a call that has ended
// (or is gone) keeps its status. It tells whether the call moved (the
// dialer counts the failures it caused).
func (s *Service) Fail(ctx context.Context, sid, reason string) (moved bool, err error) {
	c, err := s.Calls.MoveCall(ctx, sid, voiceops.CallFailure, reason, s.now())
	if err != nil && !errors.Is(err, voiceops.ErrCallTransition) && !errors.Is(err, voiceops.ErrNotFound) {
		return false, err
	}
	if err == nil {
		s.endConversation(ctx, c)
	}
	return err == nil, nil
}

// Abandon ends a call the dialer cannot handle as failure with reason: a
// queued call goes through calling (the only way to a terminal status).
// It tells whether the call moved to failure, as Fail does.
func (s *Service) Abandon(ctx context.Context, sid, reason string) (moved bool, err error) {
	if _, err := s.Calls.MoveCall(ctx, sid, voiceops.CallCalling, "", s.now()); err != nil &&
		!errors.Is(err, voiceops.ErrCallTransition) && !errors.Is(err, voiceops.ErrNotFound) {
		return false, err
	}
	return s.Fail(ctx, sid, reason)
}

// Report applies one provider status report. Reports arrive at least once
// and in any order: a report that would not move the call forward (a
// repeat, a late "ringing", anything after a terminal status) changes
// nothing and is no error; a status the service does not know is ignored.
// A terminal report for a call still queued (its report overtook the
// dialer's own write) moves it through calling first. The end of an
// answered call ends its conversation. It returns the call as it is
// afterwards; voiceops.ErrNotFound when the call is unknown or expired.
func (s *Service) Report(ctx context.Context, sid string, st telephony.Status) (voiceops.Call, error) {
	at := s.now()
	to, reason, ok := Outcome(st)
	if !ok {
		return s.Calls.GetCall(ctx, sid, at)
	}
	if to.Terminal() {
		if _, err := s.Calls.MoveCall(ctx, sid, voiceops.CallCalling, "", at); err != nil && !errors.Is(err, voiceops.ErrCallTransition) {
			return voiceops.Call{}, err
		}
	}
	c, err := s.Calls.MoveCall(ctx, sid, to, reason, at)
	if err == nil && to.Terminal() {
		// Counted once: a repeated or late report fails the transition.
		if reason == "" {
			reason = string(telephony.StatusCompleted)
		}
		telemetry.Or(s.Telemetry).Record(telemetry.Dials, 1, DialEnded, reason)
	}
	if errors.Is(err, voiceops.ErrCallTransition) {
		c, err = s.Calls.GetCall(ctx, sid, at)
	}
	if err != nil {
		return voiceops.Call{}, err
	}
	// Also on a repeated terminal report: the conversation may have been
	// recorded after the first one (an answer that was in flight).
	if err := s.endConversation(ctx, c); err != nil {
		return voiceops.Call{}, err
	}
	return c, nil
}

// endConversation ends the conversation of a call that has ended.
func (s *Service) endConversation(ctx context.Context, c voiceops.Call) error {
	if !c.Status.Terminal() || c.ConversationID == "" || s.Engine == nil {
		return nil
	}
	return s.Engine.EndCall(ctx, c)
}

// Answer is the provider's answer of call c (read by the caller, who
// checked the provider's signature with its account): the call's voice
// conversation starts, from the caller ID `from`, and the agent's
// greeting is the reply. A replayed answer gets the same reply and starts
// nothing; an answer for a call that has ended gets Hangup. token is the
// request's idempotency token ("" when none).
func (s *Service) Answer(ctx context.Context, c voiceops.Call, from, token string) (Reply, error) {
	return s.step(ctx, c, 1, token, voiceops.CallStepInput{From: from})
}

// Turn is the callee's turn of call c's conversation conversationID; turn
// is the turn's number from its callback URL (ErrTurnNumber unless
// positive). A replayed turn gets the stored reply and runs nothing.
func (s *Service) Turn(ctx context.Context, c voiceops.Call, conversationID string, turn int, token string, in Speech) (Reply, error) {
	if c.ConversationID == "" || conversationID != c.ConversationID {
		return Reply{}, voiceops.ErrNotFound
	}
	if turn <= 0 {
		// Without its number a callback would be a new step each time it
		// is sent: one captured request could add turns at will.
		return Reply{}, ErrTurnNumber
	}
	return s.step(ctx, c, turn+1, token, voiceops.CallStepInput{Message: in.Message, DTMF: in.DTMF})
}

// work is step n's work on its input: the answer starts the
// conversation, a turn answers the callee's words.
func (s *Service) work(n int, in voiceops.CallStepInput) stepWork {
	if n == 1 {
		return func(ctx context.Context, c voiceops.Call) (string, voiceops.CallReply, error) {
			return s.Engine.StartCall(ctx, c, in.From)
		}
	}
	return func(ctx context.Context, c voiceops.Call) (string, voiceops.CallReply, error) {
		r, err := s.Engine.RespondCall(ctx, c, in.Message, in.DTMF)
		return c.ConversationID, r, err
	}
}

// AnswerResult is the fetch of the answer's reply after ErrPending: the
// stored reply once the answer's work stored it; ErrPending while it still
// runs (until the request's budget); ErrStepLost when it died. It never
// runs anything.
func (s *Service) AnswerResult(ctx context.Context, c voiceops.Call) (Reply, error) {
	return s.result(ctx, c, 1)
}

// TurnResult is the fetch of turn `turn`'s reply after ErrPending, as
// AnswerResult is of the answer's.
func (s *Service) TurnResult(ctx context.Context, c voiceops.Call, conversationID string, turn int) (Reply, error) {
	if c.ConversationID == "" || conversationID != c.ConversationID {
		return Reply{}, voiceops.ErrNotFound
	}
	if turn <= 0 {
		return Reply{}, ErrTurnNumber
	}
	return s.result(ctx, c, turn+1)
}

// result waits for step n's stored reply, within the request's budget
// (its deadline less ReplyMargin). It claims nothing: a fetch replayed
// any number of times reads, and never adds a step.
func (s *Service) result(ctx context.Context, c voiceops.Call, n int) (Reply, error) {
	wait, stop := budget(ctx)
	defer stop()
	for {
		if r, ok := replay(c, n); ok {
			return r, nil
		}
		switch {
		case n < c.Steps:
			return Reply{}, ErrStepPassed
		case c.Status.Terminal():
			return Hangup, nil
		case n > c.Steps:
			return Reply{}, ErrStepAhead // never claimed: nothing to fetch
		case c.StepAt != nil && c.StepAt.Before(s.Now().Add(-orDefault(s.StepLease, DefaultStepLease))):
			return Reply{}, ErrStepLost
		}
		select {
		case <-wait:
			return Reply{}, ErrPending
		default:
		}
		if err := s.sleep(ctx, stepPoll); err != nil {
			return Reply{}, ErrPending
		}
		var err error
		if c, err = s.Calls.GetCall(ctx, c.SID, s.Now()); err != nil {
			return Reply{}, err
		}
	}
}

// budget is closed when a callback must stop waiting to answer in time:
// ReplyMargin before its request's deadline (never, without one).
func budget(ctx context.Context) (<-chan struct{}, func()) {
	end, ok := ctx.Deadline()
	if !ok {
		return nil, func() {}
	}
	bctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), end.Add(-ReplyMargin))
	return bctx.Done(), cancel
}

// step runs callback step n of the call once: run is called only by the
// request that claims the step; any other gets the stored reply, waiting
// for it while the step is in flight (up to StepWait).
func (s *Service) step(ctx context.Context, c voiceops.Call, n int, token string, in voiceops.CallStepInput) (Reply, error) {
	waitUntil := s.Now().Add(orDefault(s.StepWait, DefaultStepWait))
	answerBy, stop := budget(ctx)
	defer stop()
	for {
		if r, ok := replay(c, n); ok {
			return r, nil
		}
		switch {
		case n < c.Steps:
			return Reply{}, ErrStepPassed
		case n == c.Steps: // in flight: wait for its reply, then take it over
		case c.Status.Terminal():
			return Hangup, nil
		case n > c.Steps+1 || c.InFlight():
			return Reply{}, ErrStepAhead // the step before it has no reply yet
		}
		at := s.now()
		claimed, err := s.Calls.ClaimCallStep(ctx, c.SID, n, token, in, at, at.Add(-orDefault(s.StepLease, DefaultStepLease)))
		if err == nil {
			if s.Handoff != nil {
				if err := s.Handoff(ctx, StepJob{SID: c.SID, Step: n, ClaimedAt: at}); err == nil {
					return s.result(ctx, claimed, n)
				}
			}
			return s.runClaimed(ctx, claimed, n, s.work(n, in))
		}
		if !errors.Is(err, voiceops.ErrCallTransition) {
			return Reply{}, err
		}
		// Refused: another request claimed it (or the call ended): look
		// again, after a pause unless the state moved on.
		prev := c
		if c, err = s.Calls.GetCall(ctx, c.SID, s.Now()); err != nil {
			return Reply{}, err
		}
		if c.Steps == prev.Steps && c.Status == prev.Status && c.InFlight() == prev.InFlight() {
			if !s.Now().Before(waitUntil) {
				return Reply{}, ErrStepInFlight
			}
			select {
			case <-answerBy: // the callback must answer: the result is fetched later
				return Reply{}, ErrPending
			default:
			}
			if err := s.sleep(ctx, stepPoll); err != nil {
				return Reply{}, err
			}
		}
	}
}

// StepJob names a claimed step for its run elsewhere (Handoff, RunStep):
// the call, the step and the claim's time, never what the callee said
// (read from the claim: voiceops.Call.StepInput).
type StepJob struct {
	SID       string    `json:"sid"`
	Step      int       `json:"step"`
	ClaimedAt time.Time `json:"claimed_at"`
}

// Outcomes of RunStep that are no failure: the job's claim is no longer
// the call's to work (answered, taken over, ended, started by a copy of
// the job), or it came too late to finish before the claim's lease ends.
var (
	ErrStepNotOurs = errors.New("the step's claim is no longer this job's")
	ErrStepLate    = errors.New("the step's job came too late to finish within its lease")
)

// RunStep runs the step of a handed-off job (Handoff) and stores its
// reply. It starts the claim first (voiceops.CallStore.StartCallStep), so
// that a job delivered twice runs once, and bounds the work by StepRun and
// by the claim's lease, so that it has ended before another callback may
// take the step over: a run that fails or never comes leaves the lease's
// takeover to ask the callee again.
func (s *Service) RunStep(ctx context.Context, j StepJob) error {
	now := s.now()
	end := j.ClaimedAt.Add(orDefault(s.StepLease, DefaultStepLease) - ReplyMargin)
	if run := now.Add(orDefault(s.StepRun, DefaultStepRun)); run.Before(end) {
		end = run
	}
	if !now.Before(end) {
		return ErrStepLate
	}
	c, err := s.Calls.StartCallStep(ctx, j.SID, j.Step, j.ClaimedAt, now)
	if errors.Is(err, voiceops.ErrCallTransition) || errors.Is(err, voiceops.ErrNotFound) {
		return ErrStepNotOurs
	}
	if err != nil {
		return err
	}
	if c.Status.Terminal() {
		return ErrStepNotOurs
	}
	wctx, cancel := context.WithTimeout(ctx, end.Sub(now))
	defer cancel()
	_, err = s.run(wctx, c, j.Step, s.work(j.Step, c.StepInput))
	return err
}

// stepWork is a step's work: the conversation engine's part.
type stepWork func(ctx context.Context, c voiceops.Call) (conversationID string, r voiceops.CallReply, err error)

// runClaimed runs a claimed step and returns its reply, or ErrPending when
// the request's budget ends first: the work goes on (detached, or until
// the request ends) and stores its reply for the result's fetch.
func (s *Service) runClaimed(ctx context.Context, c voiceops.Call, n int, work stepWork) (Reply, error) {
	type outcome struct {
		rep Reply
		err error
	}
	done := make(chan outcome, 1)
	detach := s.Detach
	if detach == nil {
		if _, ok := ctx.Deadline(); !ok {
			return s.run(ctx, c, n, work) // no deadline: nothing to answer before
		}
		detach = func(f func()) { go f() }
	}
	wctx, cancel := s.workContext(ctx)
	detach(func() {
		defer cancel()
		rep, err := s.run(wctx, c, n, work)
		done <- outcome{rep, err}
	})
	wait, stop := budget(ctx)
	defer stop()
	select {
	case o := <-done:
		return o.rep, o.err
	case <-wait:
		return Reply{}, ErrPending
	}
}

// workContext is the context of a claimed step's work: detached, its own
// (StepRun from now, whatever the request does); else the request's.
func (s *Service) workContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.Detach == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), orDefault(s.StepRun, DefaultStepRun))
}

// run runs a claimed step and stores its reply.
func (s *Service) run(ctx context.Context, c voiceops.Call, n int, work stepWork) (Reply, error) {
	convID, r, err := work(ctx, c)
	if err != nil {
		return Reply{}, err // the claim stays: a retry takes it over after StepLease
	}
	r.Step = n
	stored, err := s.Calls.ReplyCallStep(ctx, c.SID, convID, r, s.now())
	if errors.Is(err, voiceops.ErrCallTransition) {
		// A takeover stored its reply first: its answer is the call's.
		cur, gerr := s.Calls.GetCall(ctx, c.SID, s.Now())
		if gerr == nil {
			if rep, ok := replay(cur, n); ok {
				if n == 1 && cur.ConversationID != convID {
					c.ConversationID = convID
					_ = s.Engine.EndCall(ctx, c) // ours is nobody's
				}
				return rep, nil
			}
		}
	}
	if err != nil {
		return Reply{}, err
	}
	// The call may have ended while the step ran (a status report that
	// found no conversation yet): end the conversation too.
	if err := s.endConversation(ctx, stored); err != nil {
		return Reply{}, err
	}
	return toReply(stored, r), nil
}

// replay returns the stored reply of step n, if it has one.
func replay(c voiceops.Call, n int) (Reply, bool) {
	switch {
	case n == 1 && c.Greeting != nil:
		return toReply(c, *c.Greeting), true
	case n > 1 && c.Reply != nil && c.Reply.Step == n:
		return toReply(c, *c.Reply), true
	}
	return Reply{}, false
}

// toReply is step r.Step's reply: the next turn is number r.Step (step
// r.Step+1).
func toReply(c voiceops.Call, r voiceops.CallReply) Reply {
	return Reply{ConversationID: c.ConversationID, Turn: r.Step, Text: r.Text, End: r.End}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
