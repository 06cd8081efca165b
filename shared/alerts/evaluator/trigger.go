package evaluator

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
)

// CoalesceInterval is the least time between two evaluations of one scope
// driven by stored data, however many writes arrive (docs/alerting.md):
// deployed, Lambda's polls of the metrics stream, about four a second.
const CoalesceInterval = 250 * time.Millisecond

// Coalescer decides when the scopes that received data are evaluated: a
// scope is due at once unless it was evaluated less than Interval ago,
// then when that interval ends; notifications meanwhile fold into that one
// evaluation. It holds no clock: the caller passes the time, so tests
// drive it with a fake one. Not safe for concurrent use.
type Coalescer struct {
	Interval time.Duration
	pending  map[metrics.Scope]struct{}
	last     map[metrics.Scope]time.Time // when each scope was last due
}

// Add notes that data of the scopes was stored.
func (c *Coalescer) Add(scopes ...metrics.Scope) {
	if c.pending == nil {
		c.pending = map[metrics.Scope]struct{}{}
	}
	for _, s := range scopes {
		c.pending[s] = struct{}{}
	}
}

// Due removes and returns the pending scopes that may be evaluated at now
// (recording now as their evaluation), and tells when the next of the
// others is due (zero when none is pending).
func (c *Coalescer) Due(now time.Time) (due []metrics.Scope, next time.Time) {
	if c.last == nil {
		c.last = map[metrics.Scope]time.Time{}
	}
	for s := range c.pending {
		at := c.last[s].Add(c.Interval)
		if !at.After(now) {
			due = append(due, s)
			delete(c.pending, s)
			c.last[s] = now
			continue
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	// Forget scopes whose interval is over: they are due at once anyway.
	for s, t := range c.last {
		if _, ok := c.pending[s]; !ok && now.Sub(t) >= c.Interval {
			delete(c.last, s)
		}
	}
	return due, next
}

// Trigger is the in-process equivalent of the metrics table's stream and
// its event source mapping: the metric store notifies it of the scopes it
// stored data for, and it evaluates them through a Coalescer, one batch at
// a time. Scopes whose evaluation failed are notified again (the stream's
// retry).
type Trigger struct {
	Evaluate func(ctx context.Context, scopes []metrics.Scope) (Stats, error)
	// Observe, when set, hears each batch's stats and lag (the evaluator's
	// metrics, Source data).
	Observe func(st Stats, lag time.Duration)
	Now     func() time.Time
	Log     *slog.Logger
	// OnEvaluated, when set, is called after each batch (tests).
	OnEvaluated func(scopes []metrics.Scope, st Stats, err error)

	mu sync.Mutex
	c  Coalescer
	// since is when the oldest notification not yet evaluated came.
	since time.Time
	wake  chan struct{}
}

// NewTrigger returns a trigger that evaluates with e at most once per
// scope per CoalesceInterval.
func NewTrigger(e *Evaluator) *Trigger {
	return &Trigger{Evaluate: e.EvaluateScopes, Now: e.Now,
		Observe: func(st Stats, lag time.Duration) { e.Observe(SourceData, st, lag, true) }, Log: e.Log, c: Coalescer{Interval: CoalesceInterval}, wake: make(chan struct{}, 1)}
}

// Notify tells the trigger that data of the scopes was stored. It never
// blocks.
func (t *Trigger) Notify(scopes ...metrics.Scope) {
	if len(scopes) == 0 {
		return
	}
	t.mu.Lock()
	t.c.Add(scopes...)
	if t.since.IsZero() {
		t.since = t.Now()
	}
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Run evaluates notified scopes until ctx ends.
func (t *Trigger) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		t.mu.Lock()
		due, next := t.c.Due(t.Now())
		since := t.since
		if len(due) > 0 {
			t.since = time.Time{}
		}
		t.mu.Unlock()
		if len(due) > 0 {
			st, err := t.Evaluate(ctx, due)
			if t.Observe != nil && !since.IsZero() {
				t.Observe(st, t.Now().Sub(since))
			}
			if err != nil && ctx.Err() == nil {
				t.Log.ErrorContext(ctx, "evaluating stored data", "scopes", len(due), "error", err)
			}
			if len(st.FailedScopes) > 0 && ctx.Err() == nil {
				t.Notify(st.FailedScopes...)
			}
			if t.OnEvaluated != nil {
				t.OnEvaluated(due, st, err)
			}
			continue // more may have become due meanwhile
		}
		wait := time.Hour
		if !next.IsZero() {
			wait = max(next.Sub(t.Now()), 0)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}
