package storetest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// RunCalls runs the contract of voiceops.CallStore. newStore returns an
// empty store.
func RunCalls(t *testing.T, newStore func(t *testing.T) voiceops.CallStore) {
	t.Helper()
	t.Run("CreateGet", func(t *testing.T) { testCallCreateGet(t, newStore(t)) })
	t.Run("Transitions", func(t *testing.T) { testCallTransitions(t, newStore(t)) })
	t.Run("Expiry", func(t *testing.T) { testCallExpiry(t, newStore(t)) })
	t.Run("ConcurrentMoves", func(t *testing.T) { testCallConcurrentMoves(t, newStore(t)) })
	t.Run("Steps", func(t *testing.T) { testCallSteps(t, newStore(t)) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testCallConcurrentClaims(t, newStore(t)) })
	t.Run("StepInputAndStart", func(t *testing.T) { testCallStepStart(t, newStore(t)) })
}

var callT0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func newQueuedCall(accountID, projectID string) voiceops.Call {
	return voiceops.Call{SID: voiceops.NewCallSID(), AccountID: accountID, ProjectID: projectID, ToNumber: "+447700900123",
		Status: voiceops.CallQueued, CreatedAt: callT0, UpdatedAt: callT0}
}

func testCallCreateGet(t *testing.T, s voiceops.CallStore) {
	ctx := context.Background()
	c := newQueuedCall("acct_a", "proj_a1")
	c.Metadata = map[string]any{"name": "Ada", "n": 2.5, "nested": map[string]any{"ok": true, "list": []any{"x", nil}}}
	c.Encryption, c.CountryCode = "none", "GB"
	mustNil(t, "CreateCall", s.CreateCall(ctx, c))
	wantErr(t, "CreateCall twice", s.CreateCall(ctx, c), voiceops.ErrAlreadyExists)
	got, err := s.GetCall(ctx, c.SID, callT0.Add(time.Hour))
	mustNil(t, "GetCall", err)
	if !reflect.DeepEqual(got, c) {
		t.Errorf("GetCall\n got %+v\nwant %+v", got, c)
	}
	got.Metadata["name"] = "changed"
	again, _ := s.GetCall(ctx, c.SID, callT0)
	if again.Metadata["name"] != "Ada" {
		t.Errorf("the store shares the metadata map with callers")
	}
	plain := newQueuedCall("acct_a", "proj_a1")
	mustNil(t, "CreateCall", s.CreateCall(ctx, plain))
	if got, err := s.GetCall(ctx, plain.SID, callT0); err != nil || got.Metadata != nil || got.ExpiresAt != nil {
		t.Errorf("GetCall without metadata: %+v %v", got, err)
	}
	// Every field, the callback steps included, round trips.
	full := newQueuedCall("acct_a", "proj_a1")
	stepAt, exp := callT0.Add(time.Minute), callT0.Add(3*time.Hour)
	full.Status, full.Reason, full.ConversationID, full.ExpiresAt = voiceops.CallFailure, voiceops.ReasonBusy, "conv_9", &exp
	full.Steps, full.StepAt, full.StepToken = 3, &stepAt, "tok"
	full.StepInput, full.StepStarted = voiceops.CallStepInput{From: "+14155550123", Message: "yes", DTMF: "1"}, &stepAt
	full.Greeting, full.Reply = &voiceops.CallReply{Step: 1, Text: "Hi", End: true}, &voiceops.CallReply{Step: 3, Text: "Bye", End: true}
	full.Metadata, full.Encryption, full.CountryCode = map[string]any{"crm": "A-1", "n": 1.0}, "srtp", "FR"
	checkEveryFieldSet(t, "call with every field", full)
	mustNil(t, "CreateCall with every field", s.CreateCall(ctx, full))
	if got, err := s.GetCall(ctx, full.SID, callT0); err != nil || !reflect.DeepEqual(got, full) {
		t.Errorf("GetCall of a call with every field\n got %+v %v\nwant %+v", got, err, full)
	}
	_, err = s.GetCall(ctx, voiceops.NewCallSID(), callT0)
	wantErr(t, "GetCall unknown", err, voiceops.ErrNotFound)
	_, err = s.MoveCall(ctx, voiceops.NewCallSID(), voiceops.CallCalling, "", callT0)
	wantErr(t, "MoveCall unknown", err, voiceops.ErrNotFound)
}

func testCallTransitions(t *testing.T, s voiceops.CallStore) {
	ctx := context.Background()
	for _, end := range []voiceops.CallStatus{voiceops.CallSuccess, voiceops.CallFailure} {
		c := newQueuedCall("acct_a", "proj_a1")
		mustNil(t, "CreateCall", s.CreateCall(ctx, c))
		// Not allowed from queued.
		for _, to := range []voiceops.CallStatus{voiceops.CallQueued, voiceops.CallSuccess, voiceops.CallFailure} {
			_, err := s.MoveCall(ctx, c.SID, to, "", callT0.Add(time.Second))
			wantErr(t, "queued -> "+string(to), err, voiceops.ErrCallTransition)
		}
		t1 := callT0.Add(10 * time.Second)
		got, err := s.MoveCall(ctx, c.SID, voiceops.CallCalling, "busy", t1)
		mustNil(t, "queued -> calling", err)
		if got.Status != voiceops.CallCalling || !got.UpdatedAt.Equal(t1) || !got.CreatedAt.Equal(callT0) || got.ExpiresAt != nil || got.Reason != "" {
			t.Errorf("after calling: %+v", got)
		}
		for _, to := range []voiceops.CallStatus{voiceops.CallQueued, voiceops.CallCalling} {
			_, err := s.MoveCall(ctx, c.SID, to, "", t1)
			wantErr(t, "calling -> "+string(to), err, voiceops.ErrCallTransition)
		}
		t2 := t1.Add(time.Minute)
		// The reason is kept with a failure only.
		got, err = s.MoveCall(ctx, c.SID, end, voiceops.ReasonNoAnswer, t2)
		mustNil(t, "calling -> "+string(end), err)
		wantReason := ""
		if end == voiceops.CallFailure {
			wantReason = voiceops.ReasonNoAnswer
		}
		if got.Status != end || got.Reason != wantReason || !got.UpdatedAt.Equal(t2) || got.ExpiresAt == nil || !got.ExpiresAt.Equal(t2.Add(voiceops.CallRetention)) {
			t.Errorf("after %s: %+v", end, got)
		}
		// Terminal statuses never change.
		for _, to := range voiceops.CallStatuses {
			_, err := s.MoveCall(ctx, c.SID, to, voiceops.ReasonBusy, t2.Add(time.Second))
			wantErr(t, string(end)+" -> "+string(to), err, voiceops.ErrCallTransition)
		}
		read, err := s.GetCall(ctx, c.SID, t2)
		mustNil(t, "GetCall", err)
		if read.Status != end || read.Reason != wantReason || !read.UpdatedAt.Equal(t2) {
			t.Errorf("read after %s: %+v", end, read)
		}
	}
}

func testCallExpiry(t *testing.T, s voiceops.CallStore) {
	ctx := context.Background()
	c := newQueuedCall("acct_a", "proj_a1")
	mustNil(t, "CreateCall", s.CreateCall(ctx, c))
	// A call that never ends does not expire.
	if _, err := s.GetCall(ctx, c.SID, callT0.Add(72*time.Hour)); err != nil {
		t.Errorf("queued call after 3 days: %v", err)
	}
	_, err := s.MoveCall(ctx, c.SID, voiceops.CallCalling, "", callT0.Add(time.Second))
	mustNil(t, "calling", err)
	end := callT0.Add(time.Minute)
	_, err = s.MoveCall(ctx, c.SID, voiceops.CallFailure, voiceops.ReasonFailed, end)
	mustNil(t, "failure", err)
	if _, err := s.GetCall(ctx, c.SID, end.Add(voiceops.CallRetention)); err != nil {
		t.Errorf("exactly 2 h after the end: %v", err)
	}
	_, err = s.GetCall(ctx, c.SID, end.Add(voiceops.CallRetention+time.Second))
	wantErr(t, "GetCall past retention", err, voiceops.ErrNotFound)
	_, err = s.MoveCall(ctx, c.SID, voiceops.CallSuccess, "", end.Add(3*time.Hour))
	wantErr(t, "MoveCall past retention", err, voiceops.ErrNotFound)
}

// testCallConcurrentMoves races success against failure from calling:
// exactly one wins, the other is a refused transition.
func testCallConcurrentMoves(t *testing.T, s voiceops.CallStore) {
	ctx := context.Background()
	c := newQueuedCall("acct_a", "proj_a1")
	mustNil(t, "CreateCall", s.CreateCall(ctx, c))
	_, err := s.MoveCall(ctx, c.SID, voiceops.CallCalling, "", callT0.Add(time.Second))
	mustNil(t, "calling", err)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			to := voiceops.CallSuccess
			if i%2 == 1 {
				to = voiceops.CallFailure
			}
			_, errs[i] = s.MoveCall(ctx, c.SID, to, voiceops.ReasonBusy, callT0.Add(2*time.Second))
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else if voiceops.KindOf(err) != voiceops.KindConflict {
			t.Errorf("losing move: %v", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d moves won, want exactly 1", wins)
	}
}

// testCallSteps runs a call's callback steps: the answer claimed once
// (a second claim, a claim on a terminal call, a reply out of turn are
// refused), its reply recording the conversation, the turns in sequence,
// a dead attempt taken over only once stale, and the whole record read
// back as it was written.
func testCallSteps(t *testing.T, s voiceops.CallStore) {
	ctx := context.Background()
	c := newQueuedCall("acct_a", "proj_a1")
	mustNil(t, "CreateCall", s.CreateCall(ctx, c))
	t1 := callT0.Add(time.Second)
	stale := callT0 // nothing claimed before callT0 is stale
	_, err := s.ClaimCallStep(ctx, voiceops.NewCallSID(), 1, "", voiceops.CallStepInput{}, t1, stale)
	wantErr(t, "claim of an unknown call", err, voiceops.ErrNotFound)
	_, err = s.ClaimCallStep(ctx, c.SID, 2, "", voiceops.CallStepInput{}, t1, stale)
	wantErr(t, "turn before the answer", err, voiceops.ErrCallTransition)
	_, err = s.MoveCall(ctx, c.SID, voiceops.CallCalling, "", t1)
	mustNil(t, "calling", err)

	got, err := s.ClaimCallStep(ctx, c.SID, 1, "tok-1", voiceops.CallStepInput{}, t1, stale)
	mustNil(t, "claim the answer", err)
	if got.Steps != 1 || got.StepToken != "tok-1" || got.StepAt == nil || !got.StepAt.Equal(t1) || !got.InFlight() || got.Reply != nil {
		t.Errorf("after the answer's claim: %+v", got)
	}
	_, err = s.ClaimCallStep(ctx, c.SID, 1, "tok-1", voiceops.CallStepInput{}, t1, stale)
	wantErr(t, "the answer claimed twice", err, voiceops.ErrCallTransition)
	_, err = s.ClaimCallStep(ctx, c.SID, 2, "", voiceops.CallStepInput{}, t1, stale)
	wantErr(t, "a turn while the answer is in flight", err, voiceops.ErrCallTransition)
	_, err = s.ReplyCallStep(ctx, c.SID, "conv_1", voiceops.CallReply{Step: 2, Text: "no"}, t1)
	wantErr(t, "reply to a step not claimed", err, voiceops.ErrCallTransition)

	greeting := voiceops.CallReply{Step: 1, Text: "Hello, how can I help?"}
	got, err = s.ReplyCallStep(ctx, c.SID, "conv_1", greeting, t1)
	mustNil(t, "reply to the answer", err)
	if got.ConversationID != "conv_1" || got.Greeting == nil || *got.Greeting != greeting || got.Reply == nil || *got.Reply != greeting || got.InFlight() {
		t.Errorf("after the answer's reply: %+v", got)
	}
	_, err = s.ReplyCallStep(ctx, c.SID, "conv_2", voiceops.CallReply{Step: 1, Text: "again"}, t1)
	wantErr(t, "the answer replied twice", err, voiceops.ErrCallTransition)
	_, err = s.ClaimCallStep(ctx, c.SID, 1, "", voiceops.CallStepInput{}, t1, t1.Add(time.Hour))
	wantErr(t, "an answered step taken over", err, voiceops.ErrCallTransition)

	// Turn 1 (step 2), claimed without a token; its first attempt dies.
	t2 := t1.Add(10 * time.Second)
	got, err = s.ClaimCallStep(ctx, c.SID, 2, "", voiceops.CallStepInput{}, t2, stale)
	mustNil(t, "claim turn 1", err)
	if got.Steps != 2 || got.StepToken != "" || !got.InFlight() || got.Reply == nil || got.Reply.Step != 1 {
		t.Errorf("after turn 1's claim: %+v", got)
	}
	_, err = s.ClaimCallStep(ctx, c.SID, 2, "", voiceops.CallStepInput{}, t2.Add(time.Second), t2)
	wantErr(t, "a fresh claim taken over", err, voiceops.ErrCallTransition)
	t3 := t2.Add(time.Minute)
	got, err = s.ClaimCallStep(ctx, c.SID, 2, "tok-2", voiceops.CallStepInput{}, t3, t2.Add(time.Millisecond))
	mustNil(t, "a stale claim taken over", err)
	if got.Steps != 2 || got.StepToken != "tok-2" || !got.StepAt.Equal(t3) {
		t.Errorf("after the takeover: %+v", got)
	}
	turn := voiceops.CallReply{Step: 2, Text: "Goodbye.", End: true}
	_, err = s.ReplyCallStep(ctx, c.SID, "", turn, t3)
	mustNil(t, "reply to turn 1", err)
	_, err = s.MoveCall(ctx, c.SID, voiceops.CallSuccess, "", t3)
	mustNil(t, "success", err)
	_, err = s.ClaimCallStep(ctx, c.SID, 3, "", voiceops.CallStepInput{}, t3, stale)
	wantErr(t, "a turn after the end", err, voiceops.ErrCallTransition)

	read, err := s.GetCall(ctx, c.SID, t3)
	mustNil(t, "GetCall", err)
	want := c
	exp := t3.Add(voiceops.CallRetention)
	want.Status, want.UpdatedAt, want.ExpiresAt = voiceops.CallSuccess, t3, &exp
	want.ConversationID, want.Steps, want.StepAt, want.StepToken = "conv_1", 2, &t3, "tok-2"
	want.Greeting, want.Reply = &greeting, &turn
	if !reflect.DeepEqual(read, want) {
		t.Errorf("GetCall after the steps\n got %+v\nwant %+v", read, want)
	}

	// An answer for a call that ended before it was answered is refused.
	ended := newQueuedCall("acct_a", "proj_a1")
	mustNil(t, "CreateCall", s.CreateCall(ctx, ended))
	_, _ = s.MoveCall(ctx, ended.SID, voiceops.CallCalling, "", callT0)
	_, err = s.MoveCall(ctx, ended.SID, voiceops.CallFailure, voiceops.ReasonBusy, callT0)
	mustNil(t, "failure", err)
	_, err = s.ClaimCallStep(ctx, ended.SID, 1, "", voiceops.CallStepInput{}, t1, stale)
	wantErr(t, "an answer after the end", err, voiceops.ErrCallTransition)
	_, err = s.ClaimCallStep(ctx, ended.SID, 1, "", voiceops.CallStepInput{}, callT0.Add(3*time.Hour), stale)
	wantErr(t, "an answer after the retention", err, voiceops.ErrNotFound)
}

// testCallConcurrentClaims races 8 claims of the answer: exactly one wins.
// testCallStepStart: a claim keeps its input until its reply, and is
// started once; a takeover's claim is a new one to start.
func testCallStepStart(t *testing.T, s voiceops.CallStore) {
	ctx := context.Background()
	c := newQueuedCall("acct_a", "proj_a1")
	mustNil(t, "CreateCall", s.CreateCall(ctx, c))
	t1, t2, t3 := callT0.Add(time.Second), callT0.Add(2*time.Second), callT0.Add(time.Minute)
	_, err := s.MoveCall(ctx, c.SID, voiceops.CallCalling, "", t1)
	mustNil(t, "calling", err)
	_, err = s.StartCallStep(ctx, c.SID, 1, t1, t1)
	wantErr(t, "start of an unclaimed step", err, voiceops.ErrCallTransition)
	_, err = s.StartCallStep(ctx, voiceops.NewCallSID(), 1, t1, t1)
	wantErr(t, "start on an unknown call", err, voiceops.ErrNotFound)

	answer := voiceops.CallStepInput{From: "+14155550123"}
	_, err = s.ClaimCallStep(ctx, c.SID, 1, "", answer, t1, callT0)
	mustNil(t, "claim the answer", err)
	got, err := s.GetCall(ctx, c.SID, t1)
	mustNil(t, "GetCall", err)
	if got.StepInput != answer || got.StepStarted != nil {
		t.Errorf("after the claim: input %+v, started %v; want %+v, nil", got.StepInput, got.StepStarted, answer)
	}
	_, err = s.StartCallStep(ctx, c.SID, 1, t2, t2)
	wantErr(t, "start of another claim", err, voiceops.ErrCallTransition)
	got, err = s.StartCallStep(ctx, c.SID, 1, t1, t2)
	mustNil(t, "start", err)
	if got.StepStarted == nil || !got.StepStarted.Equal(t2) || got.StepInput != answer {
		t.Errorf("after the start: %+v", got)
	}
	_, err = s.StartCallStep(ctx, c.SID, 1, t1, t2)
	wantErr(t, "a claim started twice", err, voiceops.ErrCallTransition)

	// Taken over: the new claim has its own input and is not started.
	again := voiceops.CallStepInput{From: "+14155550199"}
	got, err = s.ClaimCallStep(ctx, c.SID, 1, "", again, t3, t2)
	mustNil(t, "takeover", err)
	if got.StepInput != again || got.StepStarted != nil {
		t.Errorf("after the takeover: input %+v, started %v", got.StepInput, got.StepStarted)
	}
	_, err = s.ReplyCallStep(ctx, c.SID, "conv_1", voiceops.CallReply{Step: 1, Text: "Hello"}, t3)
	mustNil(t, "reply", err)
	_, err = s.StartCallStep(ctx, c.SID, 1, t3, t3)
	wantErr(t, "start of an answered step", err, voiceops.ErrCallTransition)
	turn := voiceops.CallStepInput{Message: "my order", DTMF: "12"}
	_, err = s.ClaimCallStep(ctx, c.SID, 2, "", turn, t3, callT0)
	mustNil(t, "claim turn 1", err)
	if got, err = s.GetCall(ctx, c.SID, t3); err != nil || got.StepInput != turn {
		t.Errorf("turn 1's input: %+v, %v", got.StepInput, err)
	}
	_, err = s.ReplyCallStep(ctx, c.SID, "", voiceops.CallReply{Step: 2, Text: "Noted"}, t3)
	mustNil(t, "reply to turn 1", err)
	if got, err = s.GetCall(ctx, c.SID, t3); err != nil || got.StepInput != (voiceops.CallStepInput{}) {
		t.Errorf("after the reply the input is kept: %+v, %v", got.StepInput, err)
	}
}

func testCallConcurrentClaims(t *testing.T, s voiceops.CallStore) {
	ctx := context.Background()
	c := newQueuedCall("acct_a", "proj_a1")
	mustNil(t, "CreateCall", s.CreateCall(ctx, c))
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.ClaimCallStep(ctx, c.SID, 1, "", voiceops.CallStepInput{}, callT0.Add(time.Second), callT0)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else if !errors.Is(err, voiceops.ErrCallTransition) {
			t.Errorf("losing claim: %v", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d claims won, want exactly 1", wins)
	}
}

// PacerStore is a pacer the operator can set rates on.
type PacerStore interface {
	voiceops.Pacer
	SetRate(ctx context.Context, accountID string, rate float64) error
}

// RunPacer runs the contract of voiceops.Pacer. newStore returns an empty
// pacer.
func RunPacer(t *testing.T, newStore func(t *testing.T) PacerStore) {
	t.Helper()
	t.Run("Slots", func(t *testing.T) { testPacerSlots(t, newStore(t)) })
	t.Run("Concurrent", func(t *testing.T) { testPacerConcurrent(t, newStore(t)) })
}

func testPacerSlots(t *testing.T, p PacerStore) {
	ctx := context.Background()
	reserve := func(acct string, now time.Time, want time.Time) {
		t.Helper()
		got, err := p.ReserveSlot(ctx, acct, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ReserveSlot(%s, %s) = %s, %v; want %s", acct, now.Format(time.StampMilli), got.Format(time.StampMilli), err, want.Format(time.StampMilli))
		}
	}
	// The default rate: one call a second; a free account starts now.
	reserve("acct_a", callT0, callT0)
	reserve("acct_a", callT0, callT0.Add(time.Second))
	reserve("acct_a", callT0.Add(500*time.Millisecond), callT0.Add(2*time.Second))
	// Accounts are paced apart.
	reserve("acct_b", callT0, callT0)
	// An idle account starts at once again.
	reserve("acct_a", callT0.Add(time.Minute), callT0.Add(time.Minute))
	// The operator's rate: 5 a second.
	mustNil(t, "SetRate", p.SetRate(ctx, "acct_b", 5))
	reserve("acct_b", callT0.Add(time.Minute), callT0.Add(time.Minute))
	reserve("acct_b", callT0.Add(time.Minute), callT0.Add(time.Minute+200*time.Millisecond))
	reserve("acct_b", callT0.Add(time.Minute), callT0.Add(time.Minute+400*time.Millisecond))
	// Back to the default.
	mustNil(t, "SetRate", p.SetRate(ctx, "acct_b", 0))
	reserve("acct_b", callT0.Add(time.Minute), callT0.Add(time.Minute+600*time.Millisecond))
	reserve("acct_b", callT0.Add(time.Minute), callT0.Add(time.Minute+1600*time.Millisecond))
}

// testPacerConcurrent: dialers racing for one account's slots each get a
// different one, and together they take consecutive slots.
func testPacerConcurrent(t *testing.T, p PacerStore) {
	ctx := context.Background()
	const n = 6
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[time.Time]bool{}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := p.ReserveSlot(ctx, "acct_c", callT0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("ReserveSlot: %v", err)
				return
			}
			got[s] = true
		}()
	}
	wg.Wait()
	for i := range n {
		if !got[callT0.Add(time.Duration(i)*time.Second)] {
			t.Errorf("slot %d s not handed out; got %v", i, got)
		}
	}
}
