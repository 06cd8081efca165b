package twilioapi

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// handoffFixture serves the callbacks as the calls function does on
// Lambda: each claimed step is handed off (jobs receives it, as Lambda's
// queue of asynchronous invocations would) and runs only when the test
// calls RunStep, as the function's second invocation does.
func handoffFixture(t *testing.T, now func() time.Time) (*fixture, *slowAgent, *calls.Service, chan calls.StepJob) {
	agent := &slowAgent{gate: make(chan struct{})}
	t.Cleanup(agent.answer)
	jobs := make(chan calls.StepJob, 10)
	var svc *calls.Service
	f := newFixtureWith(t, func(s *calls.Service, g *Callbacks) {
		svc = s
		agent.Engine = s.Engine
		s.Engine, s.Now = agent, now
		s.Handoff = func(_ context.Context, j calls.StepJob) error { jobs <- j; return nil }
		g.Deadline = callbackDeadline
	})
	return f, agent, svc, jobs
}

// runJob runs a handed-off job in the background, as its invocation does.
func runJob(svc *calls.Service, j calls.StepJob) <-chan error {
	done := make(chan error, 1)
	go func() { done <- svc.RunStep(context.Background(), j) }()
	return done
}

// TestSlowTurnHandedOff: the turn's work runs in its own invocation, so
// the callback answers the filler within the deadline and the agent's
// answer, however late within the lease, is the result's. The job
// delivered twice (Lambda's asynchronous invocations are at least once)
// runs once: the agent is asked once and the turn committed once.
func TestSlowTurnHandedOff(t *testing.T) {
	f, agent, svc, jobs := handoffFixture(t, time.Now)
	c := f.placed(t)
	answered := make(chan int, 1)
	go func() {
		code, _ := f.timed(t, twilio.AnswerURL("", c.SID), url.Values{"From": {"+15005550006"}})
		answered <- code
	}()
	first := <-jobs
	if first.SID != c.SID || first.Step != 1 {
		t.Fatalf("answer's job: %+v", first)
	}
	if err := <-runJob(svc, first); err != nil {
		t.Fatalf("the answer's run: %v", err)
	}
	if code := <-answered; code != 200 {
		t.Fatalf("answer: %d", code)
	}
	convID := f.call(t, c.SID).ConversationID
	turn1, result1 := twilio.TurnURL("", c.SID, convID, 1), twilio.TurnResultURL("", c.SID, convID, 1)
	code, body := f.timed(t, turn1, url.Values{"SpeechResult": {"balance"}})
	if code != 200 || !strings.Contains(body, Filler) || !strings.Contains(body, "<Redirect") {
		t.Fatalf("slow turn: %d %s, want the filler and a redirect", code, body)
	}
	if got := f.call(t, c.SID).StepInput; got.Message != "balance" {
		t.Errorf("the claim keeps the callee's words for the run: %+v", got)
	}
	j := <-jobs
	if j.Step != 2 {
		t.Fatalf("turn's job: %+v", j)
	}
	a, b := runJob(svc, j), runJob(svc, j)
	run := b
	select { // the copy that lost the start returns at once
	case err := <-a:
		if !errors.Is(err, calls.ErrStepNotOurs) {
			t.Errorf("the job delivered twice ran twice: %v", err)
		}
	case err := <-b:
		if !errors.Is(err, calls.ErrStepNotOurs) {
			t.Errorf("the job delivered twice ran twice: %v", err)
		}
		run = a
	}
	if code, body := f.timed(t, result1, url.Values{}); code != 200 || !strings.Contains(body, Filler) {
		t.Errorf("result while the agent works: %d %s", code, body)
	}
	agent.answer() // "20 s" later: the run, not bound to any callback, goes on
	if err := <-run; err != nil {
		t.Fatalf("the turn's run: %v", err)
	}
	code, body = f.timed(t, result1, url.Values{})
	if code != 200 || !strings.Contains(body, "<Gather") || strings.Contains(body, Filler) {
		t.Fatalf("result once the agent answered: %d %s", code, body)
	}
	if got := f.call(t, c.SID).StepInput; got != (voiceops.CallStepInput{}) {
		t.Errorf("the callee's words are kept after the reply: %+v", got)
	}
	conv, err := f.stores.Conversations.GetConversation(context.Background(), "acct_a", "proj_a", convID)
	if err != nil || conv.NumTurns != 2 || agent.responds.Load() != 1 {
		t.Errorf("conversation of %d turns (%v), agent asked %d times; want 2 turns and 1 ask", conv.NumTurns, err, agent.responds.Load())
	}
}

// TestHandedOffStepLost: a job that never runs (its invocation failed)
// and one that comes too late to finish within the lease run nothing;
// past the lease the callee is asked again, and the turn said again is a
// new claim whose run commits it once.
func TestHandedOffStepLost(t *testing.T) {
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	f, agent, svc, jobs := handoffFixture(t, now)
	agent.answer() // the agent is quick: only the runs are lost
	c := f.placed(t)
	go func() { _ = <-runJob(svc, <-jobs) }()
	if code, _ := f.timed(t, twilio.AnswerURL("", c.SID), url.Values{"From": {"+15005550006"}}); code != 200 {
		t.Fatalf("answer: %d", code)
	}
	convID := f.call(t, c.SID).ConversationID
	turn1, result1 := twilio.TurnURL("", c.SID, convID, 1), twilio.TurnResultURL("", c.SID, convID, 1)
	speech := url.Values{"SpeechResult": {"balance"}}
	if code, body := f.timed(t, turn1, speech); code != 200 || !strings.Contains(body, Filler) {
		t.Fatalf("turn whose run is lost: %d %s", code, body)
	}
	lost := <-jobs
	skew.Store(int64(calls.DefaultStepLease - calls.ReplyMargin))
	if err := svc.RunStep(context.Background(), lost); !errors.Is(err, calls.ErrStepLate) {
		t.Errorf("a run that cannot end within the lease: %v, want ErrStepLate", err)
	}
	skew.Store(int64(calls.DefaultStepLease + time.Second))
	code, body := f.timed(t, result1, url.Values{})
	if code != 200 || !strings.Contains(body, SayAgain) {
		t.Fatalf("result past the lease: %d %s, want the turn asked again", code, body)
	}
	go func() { _ = <-runJob(svc, <-jobs) }()
	if code, body := f.timed(t, turn1, speech); code != 200 || !strings.Contains(body, "<Gather") || strings.Contains(body, Filler) {
		t.Fatalf("the turn said again: %d %s", code, body)
	}
	if err := svc.RunStep(context.Background(), lost); !errors.Is(err, calls.ErrStepLate) && !errors.Is(err, calls.ErrStepNotOurs) {
		t.Errorf("the lost job delivered after the takeover: %v", err)
	}
	conv, err := f.stores.Conversations.GetConversation(context.Background(), "acct_a", "proj_a", convID)
	if err != nil || conv.NumTurns != 2 || agent.responds.Load() != 1 {
		t.Errorf("conversation of %d turns (%v), agent asked %d times; want 2 turns and 1 ask", conv.NumTurns, err, agent.responds.Load())
	}
}

// TestHandoffRefusedRunsInline: when the handoff itself fails, the step
// runs bound to its callback, as it would without one.
func TestHandoffRefusedRunsInline(t *testing.T) {
	f := newFixtureWith(t, func(s *calls.Service, g *Callbacks) {
		s.Handoff = func(context.Context, calls.StepJob) error { return errors.New("TooManyRequestsException") }
		g.Deadline = callbackDeadline
	})
	c := f.placed(t)
	if code, body := f.timed(t, twilio.AnswerURL("", c.SID), url.Values{"From": {"+15005550006"}}); code != 200 || !strings.Contains(body, "<Gather") {
		t.Fatalf("answer: %d %s, want the greeting", code, body)
	}
}
