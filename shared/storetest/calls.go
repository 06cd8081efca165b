package storetest

import (
	"context"
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
	t.Run("Conversation", func(t *testing.T) { testCallConversation(t, newStore(t)) })
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

func testCallConversation(t *testing.T, s voiceops.CallStore) {
	ctx := context.Background()
	c := newQueuedCall("acct_a", "proj_a1")
	mustNil(t, "CreateCall", s.CreateCall(ctx, c))
	wantErr(t, "unknown call", s.SetCallConversation(ctx, voiceops.NewCallSID(), "conv_1", callT0), voiceops.ErrNotFound)
	mustNil(t, "SetCallConversation", s.SetCallConversation(ctx, c.SID, "conv_1", callT0))
	wantErr(t, "twice", s.SetCallConversation(ctx, c.SID, "conv_2", callT0), voiceops.ErrAlreadyExists)
	got, err := s.GetCall(ctx, c.SID, callT0)
	if err != nil || got.ConversationID != "conv_1" {
		t.Errorf("GetCall: %+v %v", got, err)
	}
	_, err = s.MoveCall(ctx, c.SID, voiceops.CallCalling, "", callT0)
	mustNil(t, "calling", err)
	got, err = s.MoveCall(ctx, c.SID, voiceops.CallSuccess, "", callT0)
	if err != nil || got.ConversationID != "conv_1" {
		t.Errorf("MoveCall keeps the conversation: %+v %v", got, err)
	}
	other := newQueuedCall("acct_a", "proj_a1")
	mustNil(t, "CreateCall", s.CreateCall(ctx, other))
	_, _ = s.MoveCall(ctx, other.SID, voiceops.CallCalling, "", callT0)
	_, err = s.MoveCall(ctx, other.SID, voiceops.CallFailure, "busy", callT0)
	mustNil(t, "failure", err)
	wantErr(t, "expired call", s.SetCallConversation(ctx, other.SID, "conv_3", callT0.Add(3*time.Hour)), voiceops.ErrNotFound)
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
