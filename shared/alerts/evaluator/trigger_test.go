package evaluator

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestCoalescerAtMostOncePerScopePerInterval(t *testing.T) {
	a, b := metrics.Scope{AccountID: "acct_a"}, metrics.Scope{AccountID: "acct_a", ProjectID: "p1"}
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	c := Coalescer{Interval: time.Second}
	c.Add(a, b, a)
	due, next := c.Due(t0)
	slices.SortFunc(due, metrics.CompareScopes)
	if !slices.Equal(due, []metrics.Scope{a, b}) || !next.IsZero() {
		t.Fatalf("first data: due %v next %v; want both at once", due, next)
	}
	// Many writes of a within the second: one evaluation, when it ends.
	for i := range 100 {
		c.Add(a)
		if due, next := c.Due(t0.Add(time.Duration(i) * 5 * time.Millisecond)); len(due) != 0 || !next.Equal(t0.Add(time.Second)) {
			t.Fatalf("write %d: due %v next %v", i, due, next)
		}
	}
	if due, _ := c.Due(t0.Add(time.Second)); !slices.Equal(due, []metrics.Scope{a}) {
		t.Fatalf("after the interval: due %v, want a once", due)
	}
	if due, next := c.Due(t0.Add(1500 * time.Millisecond)); len(due) != 0 || !next.IsZero() {
		t.Fatalf("nothing pending: due %v next %v", due, next)
	}
	// b has been quiet for long: due at once, the interval forgotten.
	c.Add(b)
	if due, _ := c.Due(t0.Add(3 * time.Second)); !slices.Equal(due, []metrics.Scope{b}) || len(c.last) != 1 {
		t.Fatalf("quiet scope: due %v, %d remembered", due, len(c.last))
	}
}

// TestTriggerEvaluatesStoredData wires the memory metric store's
// notification to a trigger: recording a breach fires the rule without any
// scheduled run, and a burst of writes makes a single evaluation.
func TestTriggerEvaluatesStoredData(t *testing.T) {
	f := newFixture(t)
	r := f.rule("acct_a", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 3, voiceops.Window5m)
	acctWide := f.rule("acct_a", "", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 3, voiceops.Window5m)
	other := f.rule("acct_b", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	ev := f.evaluator()
	ev.Now = time.Now // the trigger's coalescing runs on a real timer
	tr := NewTrigger(ev)
	var mu sync.Mutex
	var batches [][]metrics.Scope
	done := make(chan struct{}, 10)
	tr.OnEvaluated = func(s []metrics.Scope, _ Stats, err error) {
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		batches = append(batches, s)
		mu.Unlock()
		done <- struct{}{}
	}
	f.metrics.Store.(interface {
		OnAdd(func([]metrics.Scope))
	}).OnAdd(func(s []metrics.Scope) { tr.Notify(s...) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tr.Run(ctx)

	// Three events in one write: one evaluation of the two scopes it touched.
	for range 3 {
		f.record("acct_a", "p1", metrics.APIErrors, 1, 0)
	}
	deadline := time.After(10 * time.Second)
	for !slices.ContainsFunc(f.snapshotEvents(), func(e voiceops.AlertEvent) bool { return e.RuleID == acctWide.ID }) ||
		!slices.ContainsFunc(f.snapshotEvents(), func(e voiceops.AlertEvent) bool { return e.RuleID == r.ID }) {
		select {
		case <-done:
		case <-deadline:
			t.Fatalf("no alert after the data was stored: events %v", f.snapshotEvents())
		}
	}
	if got := f.get(r); got.State != voiceops.StateAlert {
		t.Errorf("project rule %s", got.State)
	}
	if got := f.get(other); got.LastEvaluatedAt != nil {
		t.Errorf("a rule of another account was evaluated: %+v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	seen := map[metrics.Scope]int{}
	for _, b := range batches {
		for _, s := range b {
			seen[s]++
		}
	}
	// The three writes came within far less than a second of the first
	// evaluation or fold into one more; never one evaluation per write.
	for s, n := range seen {
		if n > 2 {
			t.Errorf("scope %v evaluated %d times for 3 writes", s, n)
		}
	}
}

func (f *fixture) snapshotEvents() []voiceops.AlertEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// TestTriggerRetriesFailedScopes: a scope whose evaluation failed (the
// metric store down) is notified again, like a stream record reported as a
// failure, and evaluated once the store is back.
func TestTriggerRetriesFailedScopes(t *testing.T) {
	f := newFixture(t)
	r := f.rule("acct_a", "p1", voiceops.MetricCallCrashes, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	f.record("acct_a", "p1", metrics.CallCrashes, 1, 0)
	f.metrics.mu.Lock()
	f.metrics.fail = errors.New("throttled")
	f.metrics.mu.Unlock()
	ev := f.evaluator()
	ev.Now = time.Now
	tr := NewTrigger(ev)
	batches := make(chan Stats, 10)
	tr.OnEvaluated = func(_ []metrics.Scope, st Stats, _ error) {
		f.metrics.mu.Lock()
		f.metrics.fail = nil // back after the first failure
		f.metrics.mu.Unlock()
		batches <- st
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tr.Run(ctx)
	tr.Notify(metrics.Scope{AccountID: "acct_a", ProjectID: "p1"})
	first := <-batches
	if len(first.FailedScopes) != 1 {
		t.Fatalf("first evaluation: %+v, want the scope failed", first)
	}
	select {
	case second := <-batches:
		if len(second.FailedScopes) != 0 || second.Events != 1 {
			t.Errorf("retry: %+v, want one event", second)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the failed scope was not evaluated again")
	}
	if got := f.get(r); got.State != voiceops.StateAlert {
		t.Errorf("state %s after the retry", got.State)
	}
}
