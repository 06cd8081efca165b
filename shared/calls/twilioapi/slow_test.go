package twilioapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// slowAgent stands in for an agent that takes 20 s to answer a turn: its
// turns wait until the test opens the gate (or their context ends), then
// the real engine answers. It counts the turns it was asked.
type slowAgent struct {
	calls.Engine
	gate     chan struct{}
	open     sync.Once
	responds atomic.Int32
}

func (a *slowAgent) RespondCall(ctx context.Context, c voiceops.Call, message, dtmf string) (voiceops.CallReply, error) {
	a.responds.Add(1)
	select {
	case <-a.gate:
	case <-ctx.Done():
		return voiceops.CallReply{}, ctx.Err()
	}
	return a.Engine.RespondCall(ctx, c, message, dtmf)
}

func (a *slowAgent) answer() { a.open.Do(func() { close(a.gate) }) }

// callbackDeadline is the tests' callback deadline: twilio.CallbackDeadline
// shortened, so that "slower than the deadline" takes a moment, not 12 s.
const callbackDeadline = calls.ReplyMargin + 300*time.Millisecond

// slowFixture serves the callbacks with the slow agent, the short
// deadline, and (detach) the turns' work detached from the callbacks.
func slowFixture(t *testing.T, detach bool, now func() time.Time) (*fixture, *slowAgent) {
	agent := &slowAgent{gate: make(chan struct{})}
	t.Cleanup(agent.answer)
	f := newFixtureWith(t, func(svc *calls.Service, g *Callbacks) {
		agent.Engine = svc.Engine
		svc.Engine = agent
		svc.Now = now
		if detach {
			svc.Detach = func(work func()) { go work() }
		}
		g.Deadline = callbackDeadline
	})
	return f, agent
}

// timed posts a signed callback and fails the test if its answer took
// the callback deadline or more (Twilio would have hung up).
func (f *fixture) timed(t *testing.T, pathQuery string, form url.Values) (int, string) {
	t.Helper()
	start := time.Now()
	rec := f.post(pathQuery, form, "")
	if took := time.Since(start); took >= callbackDeadline {
		t.Errorf("POST %s answered after %v, past the callback deadline %v", pathQuery, took, callbackDeadline)
	}
	return rec.Code, rec.Body.String()
}

// TestSlowTurnKeepsTheCallAlive: the agent takes longer than the callback
// deadline. The turn's callback answers within it with a filler and a
// <Redirect> to the turn's result; fetching the result while the agent
// works gets the filler again, and Twilio's retry of the turn runs
// nothing; once the agent answers, the result is its answer. The turn is
// asked of the agent once and committed once; the result URL can neither
// run a turn nor be shifted into one.
func TestSlowTurnKeepsTheCallAlive(t *testing.T) {
	f, agent := slowFixture(t, true, time.Now)
	c := f.placed(t)
	if code, body := f.timed(t, twilio.AnswerURL("", c.SID), url.Values{"CallSid": {"CAfeed"}, "From": {"+15005550006"}}); code != 200 || !strings.Contains(body, "<Gather") {
		t.Fatalf("answer: %d %s", code, body)
	}
	convID := f.call(t, c.SID).ConversationID
	turn1 := twilio.TurnURL("", c.SID, convID, 1)
	result1 := twilio.TurnResultURL("", c.SID, convID, 1)
	speech := url.Values{"AccountSid": {twiliofake.AccountSID}, "SpeechResult": {"balance"}}
	redirect := `<Say>` + Filler + `</Say><Redirect method="POST">` + base + strings.ReplaceAll(result1, "&", "&amp;") + `</Redirect>`

	code, body := f.timed(t, turn1, speech)
	if code != 200 || !strings.Contains(body, redirect) || strings.Contains(body, "<Gather") {
		t.Fatalf("slow turn: %d %s, want the filler and a redirect to %s", code, body, result1)
	}
	// While the agent works: the result is the filler again, and Twilio's
	// retry of the turn (same URL, same speech) waits for it too.
	callForm := url.Values{"AccountSid": {twiliofake.AccountSID}, "CallSid": {"CAfeed"}}
	for _, p := range []struct {
		path string
		form url.Values
	}{{result1, callForm}, {turn1, speech}} {
		if code, body := f.timed(t, p.path, p.form); code != 200 || !strings.Contains(body, redirect) {
			t.Errorf("POST %s while the agent works: %d %s", p.path, code, body)
		}
	}
	// A shifted result URL is no turn.
	forged := url.Values{"1AccountSid": {twiliofake.AccountSID}, "CallSid": {"CAfeed"}}
	if rec := f.post(strings.TrimSuffix(result1, "1"), forged, twiliofake.Sign(token, base+result1, callForm)); rec.Code != http.StatusBadRequest {
		t.Errorf("shifted result URL: %d %s", rec.Code, rec.Body)
	}

	agent.answer() // "20 s" later
	var answer string
	for range 20 {
		if code, body = f.timed(t, result1, callForm); code != 200 {
			t.Fatalf("result: %d %s", code, body)
		}
		if !strings.Contains(body, Filler) {
			answer = body
			break
		}
	}
	if !strings.Contains(answer, "<Gather") || !strings.Contains(answer, strings.ReplaceAll(twilio.TurnURL(base, c.SID, convID, 2), "&", "&amp;")) {
		t.Fatalf("result once the agent answered: %q, want its answer and the next turn's Gather", answer)
	}
	// The result and the turn replayed: the same answer, nothing runs.
	for _, p := range []struct {
		path string
		form url.Values
	}{{result1, callForm}, {turn1, speech}} {
		if code, body := f.timed(t, p.path, p.form); code != 200 || body != answer {
			t.Errorf("POST %s replayed: %d %s, want the stored answer", p.path, code, body)
		}
	}
	conv, err := f.stores.Conversations.GetConversation(context.Background(), "acct_a", "proj_a", convID)
	if err != nil || conv.NumTurns != 2 || agent.responds.Load() != 1 {
		t.Errorf("conversation of %d turns (%v), agent asked %d times; want 2 turns and 1 ask", conv.NumTurns, err, agent.responds.Load())
	}
}

// TestSlowTurnBoundToItsRequest: where the work cannot outlive the
// callback (no Detach: a Lambda invocation), the callback still answers
// within the deadline with the filler; the fetch of the result keeps the
// call until the step's lease has passed, then asks the callee again,
// and the turn said again is taken over and committed once.
func TestSlowTurnBoundToItsRequest(t *testing.T) {
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	f, agent := slowFixture(t, false, now)
	c := f.placed(t)
	if code, body := f.timed(t, twilio.AnswerURL("", c.SID), url.Values{"From": {"+15005550006"}}); code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	convID := f.call(t, c.SID).ConversationID
	turn1 := twilio.TurnURL("", c.SID, convID, 1)
	result1 := twilio.TurnResultURL("", c.SID, convID, 1)
	speech := url.Values{"SpeechResult": {"balance"}}
	if code, body := f.timed(t, turn1, speech); code != 200 || !strings.Contains(body, "<Redirect") {
		t.Fatalf("slow turn: %d %s", code, body)
	}
	if code, body := f.timed(t, result1, url.Values{"CallSid": {"CAfeed"}}); code != 200 || !strings.Contains(body, "<Redirect") {
		t.Errorf("result within the lease: %d %s", code, body)
	}
	skew.Store(int64(calls.DefaultStepLease + time.Second))
	code, body := f.timed(t, result1, url.Values{"CallSid": {"CAfeed"}})
	if code != 200 || !strings.Contains(body, SayAgain) || !strings.Contains(body, strings.ReplaceAll(twilio.TurnURL(base, c.SID, convID, 1), "&", "&amp;")) {
		t.Fatalf("result past the lease: %d %s, want the turn asked again", code, body)
	}
	agent.answer()
	if code, body := f.timed(t, turn1, speech); code != 200 || !strings.Contains(body, "<Gather") || strings.Contains(body, Filler) {
		t.Fatalf("the turn said again: %d %s", code, body)
	}
	conv, err := f.stores.Conversations.GetConversation(context.Background(), "acct_a", "proj_a", convID)
	if err != nil || conv.NumTurns != 2 {
		t.Errorf("conversation of %d turns (%v), want 2", conv.NumTurns, err)
	}
}

// TestCallbacksHaveTwiliosDeadline: every callback route answers within
// twilio.CallbackDeadline, under Twilio's limit.
func TestCallbacksHaveTwiliosDeadline(t *testing.T) {
	if twilio.CallbackDeadline+calls.ReplyMargin > twilio.FirstByteLimit-2*time.Second {
		t.Errorf("callback deadline %v leaves too little of Twilio's %v", twilio.CallbackDeadline, twilio.FirstByteLimit)
	}
	for _, rt := range (&Callbacks{}).Routes() {
		if rt.Deadline != twilio.CallbackDeadline {
			t.Errorf("%s: deadline %v, want %v", rt.Pattern(), rt.Deadline, twilio.CallbackDeadline)
		}
	}
}
