package httpapi

import (
	"context"
	"sync/atomic"
	"time"
)

// The request's context is its access record (access.go): it carries the
// request's ID (Value) and ends at the request's deadline, when its parent
// ends, or when the request is done, as context.WithDeadline's would. The
// deadline's context (its channel and timer) is made only when Done is
// first called (a call that waits on the network, a context derived from
// it); until then Err reads the parent and the clock, so a request that
// never waits on Done pays for neither.

// reqState is the context's state: err and done guarded by access.mu.
type reqState struct {
	// timed is the deadline's context once Done has been called; its
	// cancelCtx (Value) takes contexts derived from the request's, as a
	// context.WithDeadline's would.
	timed atomic.Pointer[timedCtx]
	done  <-chan struct{}
	err   error // before timed: sticky once set
}

type timedCtx struct {
	context.Context
	cancel context.CancelFunc
}

// closed is the channel of a context that had ended before Done was called.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Value implements context.Context: the access record under accessKey.
func (a *access) Value(key any) any {
	if key == (accessKey{}) {
		return a
	}
	if t := a.timed.Load(); t != nil {
		return t.Value(key)
	}
	return a.Context.Value(key)
}

// Deadline implements context.Context: the request's deadline, or its
// parent's when that is earlier.
func (a *access) Deadline() (time.Time, bool) {
	if d, ok := a.Context.Deadline(); ok && d.Before(a.deadline) {
		return d, true
	}
	return a.deadline, true
}

// Done implements context.Context.
func (a *access) Done() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done == nil {
		if a.endedLocked() {
			a.done = closed
		} else {
			ctx, cancel := context.WithDeadline(a.Context, a.deadline)
			a.timed.Store(&timedCtx{ctx, cancel})
			a.done = ctx.Done()
		}
	}
	return a.done
}

// Err implements context.Context.
func (a *access) Err() error {
	if t := a.timed.Load(); t != nil {
		return t.Err()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := a.timed.Load(); t != nil {
		return t.Err()
	}
	a.endedLocked()
	return a.err
}

// endedLocked ends the context if its parent has ended or its deadline has
// passed (on the monotonic clock, as a timer would tell), and reports
// whether it has ended. Only before Done.
func (a *access) endedLocked() bool {
	if a.err == nil {
		if err := a.Context.Err(); err != nil {
			a.err = err
		} else if !time.Now().Before(a.deadline) {
			a.err = context.DeadlineExceeded
		}
	}
	return a.err != nil
}

// cancel ends the context with context.Canceled when the request is done,
// unless it has ended already.
func (a *access) cancel() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := a.timed.Load(); t != nil {
		t.cancel()
	} else if a.err == nil {
		a.err = context.Canceled
	}
}
