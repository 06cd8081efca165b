// Package evaluator decides the state of the enabled alert rules. It runs in
// two ways (docs/alerting.md):
//
//   - when metric data is stored (EvaluateScopes): the rules that watch the
//     scopes the data landed in, at the current instant. The trigger is the
//     stored data itself (the metrics table's stream deployed, the store's
//     own notification embedded), so a crash between write and evaluation
//     loses nothing;
//   - on the schedule (RunShard, Run): every enabled rule, for what time
//     alone changes (no_data, resolution as data leaves the window, failed
//     evaluations). The deployed schedule fans out one message per rule
//     shard, so shards run in parallel invocations.
//
// Either way it reads each scope's buckets once however many rules share
// them, rewrites a rule only when its state or value changes (together with
// the event its transition sends), records the unchanged ones with one
// evaluation mark per scope, and hands the events to the fan-out. Repair
// fans out events written by an earlier run that died before doing it, so
// no event is ever lost.
package evaluator

import (
	"context"
	"errors"
	"fmt"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/platform/tracing"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// maxWindow is the longest rule window: no read spans more.
const maxWindow = 60 * time.Minute

// conflictRetries bounds the re-evaluations of a rule whose write lost the
// race against another writer (the other path, a PATCH).
const conflictRetries = 3

// Evaluator runs evaluations. Fanout queues an event's deliveries; it must
// be idempotent, because the repair pass may fan out an event twice.
type Evaluator struct {
	Rules   voiceops.RuleStore
	Events  voiceops.EventStore
	Metrics buckets.Store
	// Marks records, once per scope and evaluation, that the scope's
	// rules were evaluated; with it an unchanged rule is not rewritten.
	// Without it (nil) every evaluated rule is written.
	Marks voiceops.EvaluationStore
	// Silences are read once per account and run (ActiveSilences), never
	// per rule; a covered rule's changes send no event. Nil: none.
	Silences voiceops.SilenceStore
	Fanout   func(ctx context.Context, e voiceops.AlertEvent) error
	Now      func() time.Time
	Log      *slog.Logger
	// Workers bounds the scopes evaluated at once (default 16).
	Workers int
	// AfterStateWrite, when set, runs after a rule's state and events are
	// written and before they are fanned out; a test makes it fail to
	// simulate a crash there.
	AfterStateWrite func(voiceops.AlertRule) error
	// BeforeWrite, when set, runs just before a rule's evaluation is
	// written; a test uses it to make two evaluations race.
	BeforeWrite func(voiceops.AlertRule)
	// Telemetry receives the evaluation metrics (observe.go); none when nil.
	Telemetry telemetry.Recorder
	// Rollup, when set, runs after a scheduled evaluation with its shard
	// (-1: every shard): the hourly roll-ups of the metric series
	// (series.Roller.RollShard). Its failure is logged; the next minute's
	// run catches up.
	Rollup func(ctx context.Context, shard int) error
}

// rollup runs the roll-ups of a shard after its evaluation.
func (e *Evaluator) rollup(ctx context.Context, shard int) {
	if e.Rollup == nil {
		return
	}
	if err := e.Rollup(ctx, shard); err != nil {
		e.Log.ErrorContext(ctx, "rolling up metric hours", "shard", shard, "error", err)
	}
}

// Stats tells what one run did.
type Stats struct {
	Rules       int // enabled rules found
	Scopes      int // distinct scopes read
	MetricReads int // ReadBuckets calls
	// SilenceReads are ActiveSilences calls: one per account evaluated.
	SilenceReads int
	Silenced     int // rules evaluated under a silence
	Written      int // rules whose evaluation was written (state or value changed)
	Unchanged    int // rules evaluated without a change (not rewritten)
	Marks        int // evaluation marks written (one per scope at most)
	Conflicts    int // writes another writer won first (re-evaluated)
	Events       int // events written
	Repaired     int // pending events of earlier runs fanned out
	Errors       int
	// FanoutFailures are events written whose fan-out failed: they stay
	// pending for the repair run, and the invocation that wrote them
	// reports an error, so that the function's Errors metric counts it.
	FanoutFailures int
	// FailedScopes are the scopes whose evaluation failed (metric read or
	// write error): the stream path reports their records for a retry.
	FailedScopes []metrics.Scope
}

func (s *Stats) add(o Stats) {
	s.MetricReads += o.MetricReads
	s.SilenceReads += o.SilenceReads
	s.Silenced += o.Silenced
	s.Written += o.Written
	s.Unchanged += o.Unchanged
	s.Marks += o.Marks
	s.Conflicts += o.Conflicts
	s.Events += o.Events
	s.Errors += o.Errors
	s.FanoutFailures += o.FanoutFailures
	s.FailedScopes = append(s.FailedScopes, o.FailedScopes...)
}

var errCrash = errors.New("evaluator: stopped after the state write")

// ErrInjectedCrash is what AfterStateWrite returns in tests to stop a run.
var ErrInjectedCrash = errCrash

// ScopeOf returns the scope a rule watches.
func ScopeOf(r voiceops.AlertRule) metrics.Scope {
	s := metrics.Scope{AccountID: r.AccountID}
	if r.ProjectID != nil {
		s.ProjectID = *r.ProjectID
	}
	return s
}

// Run repairs, then evaluates every enabled rule of every shard at the
// current instant (the dev server's schedule; deployed, the schedule fans
// out RunShard per shard). A failed repair does not stop the evaluation;
// its error is returned with the evaluation's.
func (e *Evaluator) Run(ctx context.Context) (Stats, error) {
	st, repairErr := e.Repair(ctx)
	now := e.Now()
	byScope := map[metrics.Scope][]voiceops.AlertRule{}
	for shard := range voiceops.RuleShards {
		if err := e.collectShard(ctx, shard, byScope, &st); err != nil {
			return st, errors.Join(repairErr, err)
		}
	}
	err := e.evaluate(ctx, byScope, now, &st)
	e.rollup(ctx, -1)
	if err == nil {
		err = fanoutError(st)
	}
	return st, errors.Join(repairErr, err)
}

// fanoutError is the error of a run that wrote events it could not fan
// out: they are safe (pending, the repair run sends them), but the run
// failed at its job, and says so.
func fanoutError(st Stats) error {
	if st.FanoutFailures == 0 {
		return nil
	}
	return fmt.Errorf("evaluator: %d events written but not fanned out (left pending for the repair run)", st.FanoutFailures)
}

// RunShard evaluates every enabled rule of one shard (of
// voiceops.RuleShards) at the current instant.
func (e *Evaluator) RunShard(ctx context.Context, shard int) (Stats, error) {
	var st Stats
	if shard < 0 || shard >= voiceops.RuleShards {
		return st, fmt.Errorf("evaluator: no shard %d (0 to %d)", shard, voiceops.RuleShards-1)
	}
	now := e.Now()
	byScope := map[metrics.Scope][]voiceops.AlertRule{}
	if err := e.collectShard(ctx, shard, byScope, &st); err != nil {
		return st, err
	}
	err := e.evaluate(ctx, byScope, now, &st)
	e.rollup(ctx, shard)
	return st, err
}

func (e *Evaluator) collectShard(ctx context.Context, shard int, byScope map[metrics.Scope][]voiceops.AlertRule, st *Stats) error {
	rules, err := e.Rules.ListEnabledRules(ctx, shard)
	if err != nil {
		return fmt.Errorf("listing the rules of shard %d: %w", shard, err)
	}
	// Rules are large: group them in place (sorted by scope, each scope a
	// run of the one slice) rather than copying each into a slice per scope.
	enabled := slices.DeleteFunc(rules, func(r voiceops.AlertRule) bool { return !r.Enabled })
	slices.SortStableFunc(enabled, func(a, b voiceops.AlertRule) int { return metrics.CompareScopes(ScopeOf(a), ScopeOf(b)) })
	for i := 0; i < len(enabled); {
		s := ScopeOf(enabled[i])
		j := i + 1
		for j < len(enabled) && ScopeOf(enabled[j]) == s {
			j++
		}
		// A full slice expression: appending to a run (another shard's
		// rules of the same scope, which sharding by account rules out)
		// copies it instead of overwriting the next run.
		if prev, ok := byScope[s]; ok {
			byScope[s] = append(prev, enabled[i:j]...)
		} else {
			byScope[s] = enabled[i:j:j]
		}
		st.Rules += j - i
		i = j
	}
	return nil
}

// EvaluateScopes evaluates, at the current instant, the enabled rules that
// watch the given scopes: a project scope's rules, and for an account's
// own scope (which holds every project's data) its account-wide rules. It
// reads each account's rules with one query. Scopes whose evaluation
// failed are in Stats.FailedScopes; the error is for what stopped it all.
func (e *Evaluator) EvaluateScopes(ctx context.Context, scopes []metrics.Scope) (Stats, error) {
	var st Stats
	now := e.Now()
	want := map[metrics.Scope]bool{}
	var accounts []string
	seen := map[string]bool{}
	for _, s := range scopes {
		want[s] = true
		if !seen[s.AccountID] {
			seen[s.AccountID] = true
			accounts = append(accounts, s.AccountID)
		}
	}
	byScope := map[metrics.Scope][]voiceops.AlertRule{}
	for _, a := range accounts {
		rules, err := e.Rules.ListRules(ctx, a)
		if err != nil {
			// The account's scopes are retried; the others go on.
			e.Log.ErrorContext(ctx, "listing an account's rules", "account_id", a, "error", err)
			st.Errors++
			for _, s := range scopes {
				if s.AccountID == a {
					st.FailedScopes = append(st.FailedScopes, s)
				}
			}
			continue
		}
		for _, r := range rules {
			if s := ScopeOf(r); r.Enabled && want[s] {
				byScope[s] = append(byScope[s], r)
				st.Rules++
			}
		}
	}
	return st, e.evaluate(ctx, byScope, now, &st)
}

// evaluate evaluates the rules of each scope at the instant now, a few
// scopes at a time.
func (e *Evaluator) evaluate(ctx context.Context, byScope map[metrics.Scope][]voiceops.AlertRule, now time.Time, st *Stats) error {
	silences := e.readSilences(ctx, byScope, now, st)
	st.Scopes += len(byScope)
	workers := e.Workers
	if workers <= 0 {
		workers = 16
	}
	type job struct {
		scope    metrics.Scope
		rules    []voiceops.AlertRule
		silences []voiceops.Silence
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var crash atomic.Bool
	for range min(workers, len(byScope)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				local := e.evaluateScope(ctx, j.scope, j.rules, j.silences, now, &crash)
				mu.Lock()
				st.add(local)
				mu.Unlock()
			}
		}()
	}
	for s, rules := range byScope {
		if crash.Load() {
			break
		}
		jobs <- job{s, rules, silences[s.AccountID]}
	}
	close(jobs)
	wg.Wait()
	if crash.Load() {
		return errCrash
	}
	return nil
}

// readSilences reads the silences of each account of byScope once. An
// account whose read failed is not evaluated (an evaluation without its
// silences would deliver what they hold back): its scopes are failed, for
// the stream's retry or the next minute's run.
func (e *Evaluator) readSilences(ctx context.Context, byScope map[metrics.Scope][]voiceops.AlertRule, now time.Time, st *Stats) map[string][]voiceops.Silence {
	if e.Silences == nil {
		return nil
	}
	out := map[string][]voiceops.Silence{}
	failed := map[string]bool{}
	for s := range byScope {
		if _, done := out[s.AccountID]; done || failed[s.AccountID] {
			continue
		}
		st.SilenceReads++
		sils, err := e.Silences.ActiveSilences(ctx, s.AccountID, now)
		if err != nil {
			e.Log.ErrorContext(ctx, "reading an account's silences", "account_id", s.AccountID, "error", err)
			st.Errors++
			failed[s.AccountID] = true
			continue
		}
		out[s.AccountID] = sils
	}
	for s := range byScope {
		if failed[s.AccountID] {
			st.FailedScopes = append(st.FailedScopes, s)
			delete(byScope, s)
		}
	}
	return out
}

// evaluateScope reads the scope's buckets once and evaluates its rules at
// the instant evalAt. A rule is rewritten only when its state or value
// changes; when every rule's evaluation stands (written or unchanged) the
// scope's mark records the instant, which GET and list show as
// last_evaluated_at of the unchanged rules.
func (e *Evaluator) evaluateScope(ctx context.Context, scope metrics.Scope, rules []voiceops.AlertRule, silences []voiceops.Silence, evalAt time.Time, crash *atomic.Bool) Stats {
	var st Stats
	// One read serves every rule of the scope: the longest of their windows.
	var span time.Duration
	for _, r := range rules {
		span = max(span, min(r.Window.Duration(), maxWindow))
	}
	from, to := buckets.Window(evalAt, span)
	read, readErr := e.Metrics.ReadBuckets(ctx, scope, from, to)
	st.MetricReads++
	if readErr != nil {
		e.Log.ErrorContext(ctx, "reading metric buckets", "account_id", scope.AccountID, "project_id", scope.ProjectID, "error", readErr)
		st.FailedScopes = append(st.FailedScopes, scope)
	}
	outcome := func(r voiceops.AlertRule) voiceops.Outcome {
		silenced := voiceops.Silenced(silences, r, evalAt)
		if readErr != nil {
			return voiceops.Outcome{Failed: true, Silenced: silenced}
		}
		wFrom, wTo := buckets.Window(evalAt, r.Window.Duration())
		v, ok := buckets.Summarize(read, wFrom, wTo).Value(r.Metric)
		return voiceops.Outcome{Value: v, NoData: !ok, Silenced: silenced}
	}
	failed := false
	for _, r := range rules {
		if crash.Load() {
			return st
		}
		if voiceops.Silenced(silences, r, evalAt) {
			st.Silenced++
		}
		if !e.evaluateRule(ctx, r, outcome, evalAt, &st, crash) {
			failed = true
		}
	}
	if crash.Load() {
		return st
	}
	if failed && readErr == nil {
		st.FailedScopes = append(st.FailedScopes, scope)
	}
	// A failed read marks nothing: a firing rule that stays alert through
	// it was not evaluated (its last_evaluated_at stays).
	if e.Marks != nil && !failed && readErr == nil {
		if err := e.Marks.MarkEvaluated(ctx, scope.AccountID, scope.ProjectID, markTime(evalAt)); err != nil {
			// Only last_evaluated_at of unchanged rules lags; the next
			// evaluation marks again.
			st.Errors++
			e.Log.ErrorContext(ctx, "writing a scope's evaluation mark", "account_id", scope.AccountID, "project_id", scope.ProjectID, "error", err)
		} else {
			st.Marks++
		}
	}
	return st
}

// markTime is the evaluation instant as the rules show it.
func markTime(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// evaluateRule evaluates one rule and writes the result when it changed.
// When another writer changed the rule first (the other evaluation path, a
// PATCH), it reads the rule again and re-evaluates that version, so the
// transition happens once, by whichever write won, and sends one event. It
// reports whether the rule's evaluation stands (false: a write failed).
func (e *Evaluator) evaluateRule(ctx context.Context, r voiceops.AlertRule, outcome func(voiceops.AlertRule) voiceops.Outcome, evalAt time.Time, st *Stats, crash *atomic.Bool) bool {
	ctx = tracing.Annotate(ctx, "rule_id", r.ID)
	for attempt := 0; ; attempt++ {
		next, ev := r.Evaluated(outcome(r), evalAt)
		if e.Marks != nil && !r.EvaluationChanged(next) {
			st.Unchanged++
			return true
		}
		var events []voiceops.AlertEvent
		if ev != nil {
			events = append(events, *ev)
		}
		if e.BeforeWrite != nil {
			e.BeforeWrite(r)
		}
		err := e.Rules.UpdateRule(ctx, next, r.Version, false, events...)
		switch {
		case errors.Is(err, voiceops.ErrConflictingWrite):
			st.Conflicts++
			if attempt == conflictRetries {
				st.Errors++
				e.Log.ErrorContext(ctx, "a rule kept changing under its evaluation", "rule_id", r.ID)
				return false
			}
			cur, err := e.Rules.GetRule(ctx, r.AccountID, r.ID)
			if errors.Is(err, voiceops.ErrNotFound) {
				return true // deleted meanwhile: nothing to evaluate
			}
			if err != nil {
				st.Errors++
				e.Log.ErrorContext(ctx, "reading a rule again", "rule_id", r.ID, "error", err)
				return false
			}
			if !cur.Enabled || ScopeOf(cur) != ScopeOf(r) {
				return true // disabled or moved meanwhile: its own scope evaluates it
			}
			r = cur
			continue
		case errors.Is(err, voiceops.ErrNotFound):
			return true // deleted meanwhile
		case err != nil:
			st.Errors++
			e.Log.ErrorContext(ctx, "writing a rule's evaluation", "rule_id", r.ID, "error", err)
			return false
		}
		st.Written++
		st.Events += len(events)
		if e.AfterStateWrite != nil {
			if err := e.AfterStateWrite(next); err != nil {
				crash.Store(true)
				return false
			}
		}
		for _, ev := range events {
			if err := e.Fanout(ctx, ev); err != nil {
				// The event stays pending; the next run's repair sends it.
				st.Errors++
				st.FanoutFailures++
				e.Log.ErrorContext(ctx, "fanning out an event", "event_id", ev.ID, "error", err)
			}
		}
		return true
	}
}

// repairBatch bounds the pending events one run fans out.
const repairBatch = 1000

// repairAge is how old a pending event must be before the repair pass takes
// it: older than the evaluation that wrote it can still be fanning it out,
// young enough that the next minute's run sends it.
const repairAge = time.Minute

// Repair fans out events that an earlier evaluation (or an API request)
// wrote but did not fan out. The schedule runs it once a minute. It
// records the age of the oldest event it leaves pending, one it could not
// fan out (0 for none: telemetry.PendingEventAge), and returns an error
// when it could not list them or could not fan one out, after trying
// every one.
func (e *Evaluator) Repair(ctx context.Context) (Stats, error) {
	var st Stats
	now := e.Now().UTC()
	pending, err := e.Events.PendingEvents(ctx, now.Add(-repairAge), repairBatch)
	if err != nil {
		return st, fmt.Errorf("listing pending events: %w", err)
	}
	var oldest time.Duration
	var errs []error
	for _, ev := range pending { // oldest first
		if err := e.Fanout(ctx, ev); err != nil {
			if st.FanoutFailures == 0 {
				oldest = max(now.Sub(ev.CreatedAt), 0)
			}
			st.Errors++
			st.FanoutFailures++
			e.Log.ErrorContext(ctx, "repairing an event", "event_id", ev.ID, "error", err)
			if len(errs) < 3 { // enough to say why; the count says how many
				errs = append(errs, err)
			}
			continue
		}
		st.Repaired++
	}
	telemetry.Or(e.Telemetry).Record(telemetry.PendingEventAge, float64(oldest.Milliseconds()), telemetry.SourceRepair)
	if st.FanoutFailures > 0 {
		return st, fmt.Errorf("repair: %d of %d pending events not fanned out: %w", st.FanoutFailures, len(pending), errors.Join(errs...))
	}
	return st, nil
}
