// Package testclock is a settable time source for tests: the code under
// test takes its Now (time is injected), the test moves it.
package testclock

import (
	"context"
	"sync"
	"time"
)

// Clock is a time that moves only when told. It is safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// At returns a clock showing t.
func At(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Sleep moves the clock on by d at once (a sleep the code under test
// takes), returning the context's error.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		c.Advance(d)
	}
	return ctx.Err()
}
