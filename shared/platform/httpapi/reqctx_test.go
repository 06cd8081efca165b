package httpapi

import (
	"context"
	"errors"
	"testing"
	"time"
)

type parentKey struct{}

func newAccess(parent context.Context, d time.Duration) *access {
	start := time.Now()
	return &access{Context: parent, id: "req_1", start: start, deadline: start.Add(d)}
}

// waitDone reports whether ctx's Done closes within a second.
func waitDone(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	case <-time.After(time.Second):
		return false
	}
}

// TestRequestContextEndsAsWithDeadlines: the request's context ends at its
// deadline whether Done was called before (its channel closes) or not (Err
// reads the clock), with its parent, and when the request is done; a
// context derived from it ends with it.
func TestRequestContextEndsAsWithDeadlines(t *testing.T) {
	parent := context.WithValue(context.Background(), parentKey{}, "p")

	a := newAccess(parent, 30*time.Millisecond)
	if a.Err() != nil || a.Value(accessKey{}) != a || a.Value(parentKey{}) != "p" || RequestID(a) != "req_1" {
		t.Fatalf("fresh context: err %v, values %v %v", a.Err(), a.Value(accessKey{}), a.Value(parentKey{}))
	}
	if d, ok := a.Deadline(); !ok || !d.Equal(a.deadline) {
		t.Errorf("deadline %s %v, want %s", d, ok, a.deadline)
	}
	time.Sleep(40 * time.Millisecond)
	if !errors.Is(a.Err(), context.DeadlineExceeded) || !waitDone(a) || !errors.Is(a.Err(), context.DeadlineExceeded) {
		t.Errorf("past its deadline without Done: %v", a.Err())
	}
	a.cancel()
	if !errors.Is(a.Err(), context.DeadlineExceeded) {
		t.Errorf("the request done after its deadline: %v, want the deadline's error to stay", a.Err())
	}

	a = newAccess(parent, 30*time.Millisecond)
	child, stop := context.WithCancel(a)
	defer stop()
	if !waitDone(a) || !errors.Is(a.Err(), context.DeadlineExceeded) || !waitDone(child) || !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Errorf("Done called before the deadline: %v, derived %v", a.Err(), child.Err())
	}
	if a.Value(parentKey{}) != "p" || a.Value(accessKey{}) != a {
		t.Errorf("values after Done: %v %v", a.Value(parentKey{}), a.Value(accessKey{}))
	}

	for _, early := range []bool{false, true} {
		p, cancelParent := context.WithCancel(parent)
		a = newAccess(p, time.Hour)
		if early {
			a.Done()
		}
		cancelParent()
		if !waitDone(a) || !errors.Is(a.Err(), context.Canceled) {
			t.Errorf("parent canceled (Done called before: %v): %v", early, a.Err())
		}
	}

	pd, cancelPD := context.WithDeadline(parent, time.Now().Add(time.Minute))
	defer cancelPD()
	a = newAccess(pd, time.Hour)
	if d, _ := a.Deadline(); !d.Before(time.Now().Add(2 * time.Minute)) {
		t.Errorf("deadline %s, want the parent's earlier one", d)
	}

	for _, early := range []bool{false, true} {
		a = newAccess(parent, time.Hour)
		if early {
			a.Done()
		}
		child, stop := context.WithCancel(a)
		a.cancel()
		if !waitDone(a) || !errors.Is(a.Err(), context.Canceled) || !waitDone(child) || !errors.Is(child.Err(), context.Canceled) {
			t.Errorf("the request done (Done called before: %v): %v, derived %v", early, a.Err(), child.Err())
		}
		stop()
	}
}
