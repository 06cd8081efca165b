package queue_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/queue"
)

func msg(id string, attempt int) queue.Message {
	return queue.Message{AccountID: "acct_a", EndpointID: "whe_a", EventID: "evt_" + id, DeliveryID: "dlv_" + id, Attempt: attempt}
}

func drain(t *testing.T, q *queue.Memory) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := q.Drain(ctx); err != nil {
		t.Fatalf("Drain: %v (still %d messages)", err, q.Len())
	}
}

// recorder is a handler that records what it receives.
type recorder struct {
	mu   sync.Mutex
	got  []queue.Message
	at   []time.Time
	fail func(m queue.Message, receive int) error
	seen map[string]int
}

func (r *recorder) handle(_ context.Context, m queue.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]int{}
	}
	r.seen[m.DeliveryID]++
	r.got = append(r.got, m)
	r.at = append(r.at, time.Now())
	if r.fail != nil {
		return r.fail(m, r.seen[m.DeliveryID])
	}
	return nil
}

func (r *recorder) count(deliveryID string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[deliveryID]
}

func TestMemoryDelays(t *testing.T) {
	var r recorder
	q := queue.NewMemory(r.handle, queue.MemoryOptions{})
	defer q.Close()
	start := time.Now()
	if err := q.Send(t.Context(), msg("late", 1), 80*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := q.Send(t.Context(), msg("now", 1), 0); err != nil {
		t.Fatal(err)
	}
	drain(t, q)
	if len(r.got) != 2 {
		t.Fatalf("received %d messages, want 2", len(r.got))
	}
	for i, m := range r.got {
		if m.DeliveryID == "dlv_late" && r.at[i].Sub(start) < 80*time.Millisecond {
			t.Errorf("a message delayed 80ms arrived after %v", r.at[i].Sub(start))
		}
	}
	if r.got[1].DeliveryID != "dlv_late" {
		t.Errorf("the delayed message arrived first")
	}
}

func TestMemoryRedeliversThenDeadLetters(t *testing.T) {
	boom := errors.New("store unavailable")
	r := recorder{fail: func(m queue.Message, receive int) error {
		switch {
		case m.DeliveryID == "dlv_poison":
			return boom
		case m.DeliveryID == "dlv_flaky" && receive == 1:
			return boom
		}
		return nil
	}}
	var deadErr atomic.Value
	q := queue.NewMemory(r.handle, queue.MemoryOptions{
		Visibility: 5 * time.Millisecond, MaxReceives: 3,
		OnDeadLetter: func(_ queue.Message, err error) { deadErr.Store(err) },
	})
	defer q.Close()
	for _, id := range []string{"ok", "flaky", "poison"} {
		if err := q.Send(t.Context(), msg(id, 1), 0); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, q)
	for id, want := range map[string]int{"dlv_ok": 1, "dlv_flaky": 2, "dlv_poison": 3} {
		if got := r.count(id); got != want {
			t.Errorf("%s received %d times, want %d", id, got, want)
		}
	}
	dead := q.DeadLetters()
	if len(dead) != 1 || dead[0].DeliveryID != "dlv_poison" {
		t.Errorf("dead letters: want [dlv_poison], got %+v", dead)
	}
	if err, _ := deadErr.Load().(error); !errors.Is(err, boom) {
		t.Errorf("OnDeadLetter heard %v, want %v", err, boom)
	}
}

func TestMemoryPanicIsAFailedReceive(t *testing.T) {
	var calls atomic.Int32
	q := queue.NewMemory(func(context.Context, queue.Message) error {
		if calls.Add(1) == 1 {
			panic("bug")
		}
		return nil
	}, queue.MemoryOptions{Visibility: time.Millisecond})
	defer q.Close()
	if err := q.Send(t.Context(), msg("a", 1), 0); err != nil {
		t.Fatal(err)
	}
	drain(t, q)
	if calls.Load() != 2 || len(q.DeadLetters()) != 0 {
		t.Errorf("calls %d, dead letters %d: want 2 and 0", calls.Load(), len(q.DeadLetters()))
	}
}

func TestMemoryConcurrencyBound(t *testing.T) {
	var running, most atomic.Int32
	release := make(chan struct{})
	q := queue.NewMemory(func(context.Context, queue.Message) error {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		<-release
		return nil
	}, queue.MemoryOptions{Concurrency: 3})
	defer q.Close()
	for i := range 10 {
		if err := q.Send(t.Context(), msg(string(rune('a'+i)), 1), 0); err != nil {
			t.Fatal(err)
		}
	}
	for running.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	drain(t, q)
	if most.Load() != 3 {
		t.Errorf("at most %d handlers ran at once, want 3", most.Load())
	}
}

func TestMemoryClose(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	q := queue.NewMemory(func(_ context.Context, m queue.Message) error {
		if m.DeliveryID == "dlv_later" {
			t.Error("a message still waiting for its delay was handled after Close")
		}
		close(started)
		<-release
		finished.Store(true)
		return nil
	}, queue.MemoryOptions{})
	if err := q.Send(t.Context(), msg("now", 1), 0); err != nil {
		t.Fatal(err)
	}
	if err := q.Send(t.Context(), msg("later", 1), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	<-started
	closed := make(chan struct{})
	go func() { q.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a handler was running")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-closed
	if !finished.Load() {
		t.Error("Close returned before the handler finished")
	}
	if err := q.Send(t.Context(), msg("after", 1), 0); !errors.Is(err, queue.ErrClosed) {
		t.Errorf("Send after Close: want ErrClosed, got %v", err)
	}
	time.Sleep(80 * time.Millisecond) // the dropped message's delay passes
}

func TestMemoryRefusesInvalidMessages(t *testing.T) {
	q := queue.NewMemory(func(context.Context, queue.Message) error { return nil }, queue.MemoryOptions{})
	defer q.Close()
	if err := q.Send(t.Context(), queue.Message{}, 0); !errors.Is(err, queue.ErrMalformed) {
		t.Errorf("Send of an empty message: want ErrMalformed, got %v", err)
	}
}

// TestDrainDoesNotWaitForCheckCopies: a check copy waiting for its delay
// (a claim's lease) does not hold Drain; it is still handed out when due,
// and anything else still waiting does hold Drain.
func TestDrainDoesNotWaitForCheckCopies(t *testing.T) {
	r := &recorder{}
	q := queue.NewMemory(r.handle, queue.MemoryOptions{})
	t.Cleanup(q.Close)
	check := msg("c", 1)
	check.Check = true
	if err := q.Send(t.Context(), check, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := q.Send(t.Context(), check, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := q.Send(t.Context(), msg("a", 1), 30*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	drain(t, q)
	r.mu.Lock()
	got := len(r.got)
	r.mu.Unlock()
	if got < 1 {
		t.Errorf("Drain returned before the regular message was handled (%d handled)", got)
	}
	if q.Len() != 1 {
		t.Errorf("Len = %d, want 1 (the check copy due in an hour)", q.Len())
	}
}
