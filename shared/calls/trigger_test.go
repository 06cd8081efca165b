package calls_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// rendezvous is a call store and a dial queue whose CreateCall and SendDial
// each wait until the other has started (or a second has passed: then they
// fail), so a trigger that does them one after the other fails.
type rendezvous struct {
	voiceops.CallStore
	created, sent       chan struct{}
	createOnce, sendOne sync.Once

	mu      sync.Mutex
	sid     string        // the SID of the call written
	jobs    int           // the jobs sent
	sendErr error         // SendDial's answer
	onSend  func(string)  // run by SendDial once the call is written
	wait    time.Duration // how long each waits for the other
}

func newRendezvous() *rendezvous {
	return &rendezvous{CallStore: memory.NewCalls(), created: make(chan struct{}), sent: make(chan struct{}), wait: time.Second}
}

func (r *rendezvous) meet(mine, theirs chan struct{}, once *sync.Once) error {
	once.Do(func() { close(mine) })
	select {
	case <-theirs:
		return nil
	case <-time.After(r.wait):
		return errors.New("the trigger did not overlap the send and the write")
	}
}

func (r *rendezvous) CreateCall(ctx context.Context, c voiceops.Call) error {
	r.mu.Lock()
	r.sid = c.SID
	r.mu.Unlock()
	if err := r.meet(r.created, r.sent, &r.createOnce); err != nil {
		return err
	}
	return r.CallStore.CreateCall(ctx, c)
}

func (r *rendezvous) SendDial(_ context.Context, j voiceops.DialJob, _ time.Duration) error {
	if err := r.meet(r.sent, r.created, &r.sendOne); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.onSend != nil {
		r.onSend(j.SID)
	}
	if r.sendErr != nil {
		return r.sendErr
	}
	r.jobs++
	return nil
}

func (r *rendezvous) call(t *testing.T) voiceops.Call {
	t.Helper()
	r.mu.Lock()
	sid := r.sid
	r.mu.Unlock()
	c, err := r.CallStore.GetCall(context.Background(), sid, time.Now())
	if err != nil {
		t.Fatalf("the call %q: %v", sid, err)
	}
	return c
}

// TestTriggerOverlapsSendAndWrite: the trigger sends the dial job while it
// writes the call (one round trip), answers only when both are done, and
// gives up a call whose job could not be sent.
func TestTriggerOverlapsSendAndWrite(t *testing.T) {
	ctx := context.Background()
	draft := voiceops.Call{AccountID: "acct_a", ProjectID: "proj_a1", ToNumber: "+14155550100"}

	t.Run("both done", func(t *testing.T) {
		r := newRendezvous()
		c, err := calls.New(r, time.Now, calls.WithDial(r)).Trigger(ctx, draft)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.call(t); got.SID != c.SID || got.Status != voiceops.CallQueued || r.jobs != 1 {
			t.Errorf("stored %s %s with %d job(s); answered %s", got.SID, got.Status, r.jobs, c.SID)
		}
	})

	t.Run("the send fails", func(t *testing.T) {
		r := newRendezvous()
		r.sendErr = errors.New("sqs down")
		if _, err := calls.New(r, time.Now, calls.WithDial(r)).Trigger(ctx, draft); !errors.Is(err, r.sendErr) {
			t.Fatalf("answer %v, want the send's error", err)
		}
		// Written without a job: given up, and it expires.
		if c := r.call(t); c.Status != voiceops.CallFailure || c.Reason != voiceops.ReasonFailed || c.ExpiresAt == nil {
			t.Errorf("the call without a job: %s %q expires %v", c.Status, c.Reason, c.ExpiresAt)
		}
	})

	t.Run("the send fails after a dialer claimed the call", func(t *testing.T) {
		// The job reached the queue although its send answered an error,
		// and a dialer claimed the call: it is the dialer's.
		r := newRendezvous()
		r.sendErr = errors.New("answer lost")
		r.onSend = func(sid string) {
			for {
				if _, err := r.CallStore.MoveCall(ctx, sid, voiceops.CallCalling, "", time.Now()); err == nil {
					return
				}
				time.Sleep(time.Millisecond) // until the write lands
			}
		}
		if _, err := calls.New(r, time.Now, calls.WithDial(r)).Trigger(ctx, draft); err == nil {
			t.Fatal("answered success")
		}
		if c := r.call(t); c.Status != voiceops.CallCalling {
			t.Errorf("the claimed call is %s %q, want calling (left to its dialer)", c.Status, c.Reason)
		}
	})

	t.Run("the write fails", func(t *testing.T) {
		r := newRendezvous()
		failing := &failingCreate{r}
		if _, err := calls.New(failing, time.Now, calls.WithDial(r)).Trigger(ctx, draft); err == nil {
			t.Fatal("answered success")
		}
		// The job was sent: the dialer finds no call and drops it.
		if r.jobs != 1 {
			t.Errorf("%d jobs", r.jobs)
		}
	})
}

// failingCreate fails every CreateCall once the dial job's send started.
type failingCreate struct{ *rendezvous }

func (f *failingCreate) CreateCall(context.Context, voiceops.Call) error {
	if err := f.meet(f.created, f.sent, &f.createOnce); err != nil {
		return err
	}
	return errors.New("dynamodb down")
}
