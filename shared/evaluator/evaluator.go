// Package evaluator decides the state of every enabled alert rule, once a
// minute: it finds the rules through the store's evaluator index (never a
// scan), reads each scope's metric buckets once however many rules share
// them, writes each rule's new state together with the event its transition
// sends, and hands the events to the fan-out. Before that it repairs: events
// written by an earlier run that died before fanning them out are fanned out
// now, so no event is ever lost.
package evaluator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/voiceops/opsapi/shared/buckets"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// maxWindow is the longest rule window: one read of this span serves every
// rule of a scope.
const maxWindow = 60 * time.Minute

// Evaluator runs evaluations. Fanout queues an event's deliveries; it must
// be idempotent, because the repair pass may fan out an event twice.
type Evaluator struct {
	Rules   voiceops.RuleStore
	Events  voiceops.EventStore
	Metrics buckets.Store
	Fanout  func(ctx context.Context, e voiceops.AlertEvent) error
	Now     func() time.Time
	Log     *slog.Logger
	// Workers bounds the scopes evaluated at once (default 16).
	Workers int
	// AfterStateWrite, when set, runs after a rule's state and events are
	// written and before they are fanned out; a test makes it fail to
	// simulate a crash there.
	AfterStateWrite func(voiceops.AlertRule) error
}

// Stats tells what one run did.
type Stats struct {
	Rules       int // enabled rules found
	Scopes      int // distinct scopes read
	MetricReads int // ReadBuckets calls
	Written     int // rules whose evaluation was written
	Conflicts   int // rules another writer changed first (skipped)
	Events      int // events written
	Repaired    int // pending events of earlier runs fanned out
	Errors      int
}

var errCrash = errors.New("evaluator: stopped after the state write")

// ErrInjectedCrash is what AfterStateWrite returns in tests to stop a run.
var ErrInjectedCrash = errCrash

// Run evaluates every enabled rule at the current minute.
func (e *Evaluator) Run(ctx context.Context) (Stats, error) {
	var st Stats
	now := e.Now().UTC()
	evalAt := now.Truncate(time.Minute)

	if err := e.repair(ctx, now, &st); err != nil {
		return st, err
	}

	byScope := map[metrics.Scope][]voiceops.AlertRule{}
	for shard := range voiceops.RuleShards {
		rules, err := e.Rules.ListEnabledRules(ctx, shard)
		if err != nil {
			return st, fmt.Errorf("listing the rules of shard %d: %w", shard, err)
		}
		for _, r := range rules {
			if !r.Enabled {
				continue
			}
			s := metrics.Scope{AccountID: r.AccountID}
			if r.ProjectID != nil {
				s.ProjectID = *r.ProjectID
			}
			byScope[s] = append(byScope[s], r)
			st.Rules++
		}
	}
	st.Scopes = len(byScope)

	workers := e.Workers
	if workers <= 0 {
		workers = 16
	}
	type job struct {
		scope metrics.Scope
		rules []voiceops.AlertRule
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var crash atomic.Bool
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				local := e.evaluateScope(ctx, j.scope, j.rules, evalAt, &crash)
				mu.Lock()
				st.MetricReads += local.MetricReads
				st.Written += local.Written
				st.Conflicts += local.Conflicts
				st.Events += local.Events
				st.Errors += local.Errors
				mu.Unlock()
			}
		}()
	}
	for s, rules := range byScope {
		if crash.Load() {
			break
		}
		jobs <- job{s, rules}
	}
	close(jobs)
	wg.Wait()
	if crash.Load() {
		return st, errCrash
	}
	return st, nil
}

// evaluateScope reads the scope's buckets once and evaluates its rules.
func (e *Evaluator) evaluateScope(ctx context.Context, scope metrics.Scope, rules []voiceops.AlertRule, evalAt time.Time, crash *atomic.Bool) Stats {
	var st Stats
	from, to := buckets.Window(evalAt, maxWindow)
	read, readErr := e.Metrics.ReadBuckets(ctx, scope, from, to)
	st.MetricReads++
	if readErr != nil {
		e.Log.ErrorContext(ctx, "reading metric buckets", "account_id", scope.AccountID, "project_id", scope.ProjectID, "error", readErr)
	}
	for _, r := range rules {
		if crash.Load() {
			return st
		}
		var o voiceops.Outcome
		if readErr != nil {
			o.Failed = true
		} else {
			wFrom, wTo := buckets.Window(evalAt, r.Window.Duration())
			v, ok := buckets.Summarize(read, wFrom, wTo).Value(r.Metric)
			o = voiceops.Outcome{Value: v, NoData: !ok}
		}
		next, ev := r.Evaluated(o, evalAt)
		var events []voiceops.AlertEvent
		if ev != nil {
			events = append(events, *ev)
		}
		err := e.Rules.UpdateRule(ctx, next, r.Version, false, events...)
		switch {
		case errors.Is(err, voiceops.ErrConflictingWrite), errors.Is(err, voiceops.ErrNotFound):
			// An overlapping run, a PATCH or a DELETE got there first; its
			// write stands and this evaluation is dropped (no event twice).
			st.Conflicts++
			continue
		case err != nil:
			st.Errors++
			e.Log.ErrorContext(ctx, "writing a rule's evaluation", "rule_id", r.ID, "error", err)
			continue
		}
		st.Written++
		st.Events += len(events)
		if e.AfterStateWrite != nil {
			if err := e.AfterStateWrite(next); err != nil {
				crash.Store(true)
				return st
			}
		}
		for _, ev := range events {
			if err := e.Fanout(ctx, ev); err != nil {
				// The event stays pending; the next run's repair sends it.
				st.Errors++
				e.Log.ErrorContext(ctx, "fanning out an event", "event_id", ev.ID, "error", err)
			}
		}
	}
	return st
}

// repairBatch bounds the pending events one run fans out.
const repairBatch = 1000

// repairAge is how old a pending event must be before the repair pass takes
// it: older than the run that wrote it can still be fanning it out within
// the same minute, young enough that the next minute's run sends it.
const repairAge = time.Minute

// repair fans out events that an earlier run (or an API request) wrote but
// did not fan out.
func (e *Evaluator) repair(ctx context.Context, now time.Time, st *Stats) error {
	pending, err := e.Events.PendingEvents(ctx, now.Add(-repairAge), repairBatch)
	if err != nil {
		return fmt.Errorf("listing pending events: %w", err)
	}
	for _, ev := range pending {
		if err := e.Fanout(ctx, ev); err != nil {
			st.Errors++
			e.Log.ErrorContext(ctx, "repairing an event", "event_id", ev.ID, "error", err)
			continue
		}
		st.Repaired++
	}
	return nil
}
