package evaluator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/alerting"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

type fixture struct {
	t       testing.TB
	store   *memory.Store
	stores  voiceops.Stores
	metrics *countingMetrics
	rec     buckets.Recorder
	now     time.Time
	mu      sync.Mutex
	fanned  map[string]int // event ID -> fan-outs
	events  []voiceops.AlertEvent
}

// countingMetrics counts ReadBuckets calls and can fail them.
type countingMetrics struct {
	buckets.Store
	mu    sync.Mutex
	reads int
	fail  error
}

func (c *countingMetrics) ReadBuckets(ctx context.Context, s metrics.Scope, from, to time.Time) ([]buckets.Bucket, error) {
	c.mu.Lock()
	c.reads++
	fail := c.fail
	c.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	return c.Store.ReadBuckets(ctx, s, from, to)
}

func newFixture(t testing.TB) *fixture {
	// The memory metric store keeps two hours before its own clock's now,
	// so the fixture's clock starts at the present.
	start := time.Now().UTC().Truncate(time.Minute).Add(30 * time.Second)
	f := &fixture{t: t, store: memory.New(), now: start, fanned: map[string]int{}}
	f.stores = f.store.Stores()
	f.metrics = &countingMetrics{Store: memory.NewMetrics()}
	f.rec = buckets.Recorder{Store: f.metrics.Store}
	ctx := context.Background()
	for _, a := range []string{"acct_a", "acct_b"} {
		if err := f.stores.Accounts.CreateAccount(ctx, voiceops.Account{ID: a, CreatedAt: f.now}); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"p1", "p2"} {
			if err := f.stores.Accounts.CreateProject(ctx, voiceops.Project{ID: p, AccountID: a, CreatedAt: f.now}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

func (f *fixture) evaluator() *Evaluator {
	return &Evaluator{
		Rules: f.stores.Rules, Events: f.stores.Events, Metrics: f.metrics, Marks: f.stores.Evaluations, Silences: f.stores.Silences,
		Fanout: func(ctx context.Context, e voiceops.AlertEvent) error {
			f.mu.Lock()
			f.fanned[e.ID]++
			f.events = append(f.events, e)
			f.mu.Unlock()
			return f.stores.Events.MarkFannedOut(ctx, e.AccountID, e.ID)
		},
		Now: func() time.Time { return f.now }, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func (f *fixture) rule(acct string, project string, m voiceops.Metric, op voiceops.Operator, th int64, w voiceops.Window) voiceops.AlertRule {
	f.t.Helper()
	var pid *string
	if project != "" {
		pid = &project
	}
	r := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), acct, voiceops.RuleInput{Name: string(m), ProjectID: pid, Metric: m, Operator: op, Threshold: th, Window: w}, f.now)
	if err := f.stores.Rules.CreateRule(context.Background(), r); err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fixture) record(acct, project string, kind metrics.Kind, value float64, ago time.Duration) {
	f.t.Helper()
	if err := f.rec.Record(context.Background(), metrics.Event{AccountID: acct, ProjectID: project, Kind: kind, Value: value, At: f.now.Add(-ago)}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) get(r voiceops.AlertRule) voiceops.AlertRule {
	f.t.Helper()
	got, err := f.stores.Rules.GetRule(context.Background(), r.AccountID, r.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return got
}

func (f *fixture) run() Stats {
	f.t.Helper()
	st, err := f.evaluator().Run(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

func TestEvaluateStatesAndEvents(t *testing.T) {
	f := newFixture(t)
	errors5m := f.rule("acct_a", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 3, voiceops.Window5m)
	acctWide := f.rule("acct_a", "", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 5, voiceops.Window5m)
	p95 := f.rule("acct_a", "p1", voiceops.MetricTurnLatencyP95, voiceops.OpGreater, 1000, voiceops.Window10m)
	volume := f.rule("acct_a", "p2", voiceops.MetricCallVolume, voiceops.OpLess, 1, voiceops.Window60m)
	other := f.rule("acct_b", "", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)

	// acct_a/p1: 3 errors in the window; acct_a/p2: 3 more (account-wide sees 6).
	for i := 0; i < 3; i++ {
		f.record("acct_a", "p1", metrics.APIErrors, 1, time.Minute)
		f.record("acct_a", "p2", metrics.APIErrors, 1, 2*time.Minute)
	}
	// Turn latencies 1..100 ms plus a slow tail in p1.
	for i := 1; i <= 100; i++ {
		ms := float64(i)
		if i > 90 {
			ms = 5000
		}
		f.record("acct_a", "p1", metrics.TurnLatency, ms, 3*time.Minute)
	}
	st := f.run()
	if st.Rules != 5 || st.Written != 5 {
		t.Errorf("stats %+v", st)
	}
	for _, c := range []struct {
		r     voiceops.AlertRule
		state voiceops.State
		value *int64
	}{
		{errors5m, voiceops.StateAlert, ptr(int64(3))},
		{acctWide, voiceops.StateAlert, ptr(int64(6))},
		{p95, voiceops.StateAlert, ptr(int64(5000))},
		{volume, voiceops.StateOK, ptr(int64(0))}, // activity in p2, no calls: 0, not no_data; 0 < 1 is a breach? no: OpLess 1 -> 0 < 1
		{other, voiceops.StateNoData, nil},
	} {
		got := f.get(c.r)
		want := c.state
		if c.r.ID == volume.ID {
			want = voiceops.StateAlert // 0 calls < 1
		}
		if got.State != want {
			t.Errorf("%s: state %s, want %s", c.r.Name, got.State, want)
		}
		if (got.CurrentValue == nil) != (c.value == nil) || (c.value != nil && !within1pct(*got.CurrentValue, *c.value)) {
			t.Errorf("%s: current_value %v, want %v", c.r.Name, deref(got.CurrentValue), deref(c.value))
		}
		if got.LastEvaluatedAt == nil || !got.LastEvaluatedAt.Equal(f.now) { // the instant itself
			t.Errorf("%s: last_evaluated_at %v", c.r.Name, got.LastEvaluatedAt)
		}
	}
	if len(f.events) != 4 {
		t.Fatalf("%d events fanned out, want 4 triggered", len(f.events))
	}
	for _, e := range f.events {
		if e.Type != voiceops.EventTriggered {
			t.Errorf("event %s is %s", e.ID, e.Type)
		}
	}
	// Ten minutes later the errors are out of the 5-minute window: resolved.
	f.now = f.now.Add(10 * time.Minute)
	f.record("acct_a", "p1", metrics.Activity, 0, time.Minute)
	f.events = nil
	f.run()
	if got := f.get(errors5m); got.State != voiceops.StateOK || *got.CurrentValue != 0 {
		t.Errorf("errors rule after the window: %s %v", got.State, deref(got.CurrentValue))
	}
	resolved := 0
	for _, e := range f.events {
		if e.Type == voiceops.EventResolved {
			resolved++
		}
	}
	if resolved < 2 {
		t.Errorf("%d resolved events, want at least 2: %v", resolved, f.events)
	}
}

// TestWindowEdges evaluates between minute boundaries: an event counts
// from the moment it is stored, and stops counting once its minute ends
// more than the window before the evaluation.
func TestWindowEdges(t *testing.T) {
	f := newFixture(t)
	f.now = f.now.Truncate(time.Minute).Add(40*time.Second + 123*time.Millisecond) // t = hh:mm:40.123
	r := f.rule("acct_a", "p1", voiceops.MetricCallCrashes, voiceops.OpGreaterEqual, 2, voiceops.Window5m)
	f.record("acct_a", "p1", metrics.CallCrashes, 1, 6*time.Minute) // the minute before t-5m's: out
	f.record("acct_a", "p1", metrics.Activity, 0, 0)
	f.run()
	if got := f.get(r); got.State != voiceops.StateOK || *got.CurrentValue != 0 {
		t.Errorf("edges: %s %v, want ok 0", got.State, deref(got.CurrentValue))
	}
	f.record("acct_a", "p1", metrics.CallCrashes, 1, 5*time.Minute+30*time.Second) // in t-5m's minute, 5m30s old: in
	f.record("acct_a", "p1", metrics.CallCrashes, 1, time.Millisecond)             // just stored: in
	f.now = f.now.Add(time.Millisecond)
	f.run()
	if got := f.get(r); got.State != voiceops.StateAlert || *got.CurrentValue != 2 {
		t.Errorf("edges: %s %v, want alert 2", got.State, deref(got.CurrentValue))
	}
	if got := f.get(r); !got.Since.Equal(f.now) || !got.LastEvaluatedAt.Equal(f.now) {
		t.Errorf("since %v, last_evaluated_at %v; want the instant %v", got.Since, got.LastEvaluatedAt, f.now)
	}
	// 20 s later the older crash's minute has left the window: resolved, at that instant.
	f.now = f.now.Add(20 * time.Second)
	f.run()
	if got := f.get(r); got.State != voiceops.StateOK || *got.CurrentValue != 1 || !got.Since.Equal(f.now) {
		t.Errorf("after the edge: %s %v since %v", got.State, deref(got.CurrentValue), got.Since)
	}
}

func TestOneMetricReadPerScope(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 4; i++ {
		f.rule("acct_a", "p1", voiceops.Metrics[i], voiceops.OpGreater, 1, voiceops.Windows[i%3])
	}
	for i := 0; i < 3; i++ {
		f.rule("acct_a", "", voiceops.Metrics[i], voiceops.OpGreater, 1, voiceops.Window5m)
	}
	f.rule("acct_b", "p2", voiceops.MetricCallVolume, voiceops.OpGreater, 1, voiceops.Window60m)
	st := f.run()
	if st.Scopes != 3 || f.metrics.reads != 3 || st.MetricReads != 3 {
		t.Errorf("scopes %d, reads %d (stats %d), want 3 for 8 rules in 3 scopes", st.Scopes, f.metrics.reads, st.MetricReads)
	}
}

func TestDisabledRulesAreNotEvaluated(t *testing.T) {
	f := newFixture(t)
	r := f.rule("acct_a", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 0, voiceops.Window5m)
	cur := f.get(r)
	off := false
	next, _ := voiceops.RulePatch{Enabled: &off}.Apply(cur, f.now)
	next.Version = cur.Version + 1
	if err := f.stores.Rules.UpdateRule(context.Background(), next, cur.Version, false); err != nil {
		t.Fatal(err)
	}
	if st := f.run(); st.Rules != 0 {
		t.Errorf("evaluated %d rules, want 0", st.Rules)
	}
	if got := f.get(r); got.LastEvaluatedAt != nil || got.State != voiceops.StateUnknown {
		t.Errorf("disabled rule: %+v", got)
	}
}

func TestFailedReadsMakeUnknownButKeepAlerts(t *testing.T) {
	f := newFixture(t)
	firing := f.rule("acct_a", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	quiet := f.rule("acct_a", "p2", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	f.record("acct_a", "p1", metrics.APIErrors, 1, time.Minute)
	f.record("acct_a", "p2", metrics.Activity, 0, time.Minute)
	f.run()
	f.events = nil
	f.metrics.fail = errors.New("throttled")
	f.now = f.now.Add(time.Minute)
	f.run()
	if got := f.get(firing); got.State != voiceops.StateAlert {
		t.Errorf("firing rule became %s on a failed read", got.State)
	}
	if got := f.get(quiet); got.State != voiceops.StateUnknown {
		t.Errorf("quiet rule became %s on a failed read, want unknown", got.State)
	}
	if len(f.events) != 0 {
		t.Errorf("failed evaluations sent %d events", len(f.events))
	}
}

// TestCrashAfterStateWriteLosesNothing kills the run between the state
// write and the fan-out; the next run must send the event, once.
func TestCrashAfterStateWriteLosesNothing(t *testing.T) {
	f := newFixture(t)
	r := f.rule("acct_a", "p1", voiceops.MetricCallCrashes, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	f.record("acct_a", "p1", metrics.CallCrashes, 2, time.Minute)
	ev := f.evaluator()
	ev.AfterStateWrite = func(voiceops.AlertRule) error { return ErrInjectedCrash }
	if _, err := ev.Run(context.Background()); !errors.Is(err, ErrInjectedCrash) {
		t.Fatalf("crashed run: %v", err)
	}
	if got := f.get(r); got.State != voiceops.StateAlert {
		t.Fatalf("state not written before the crash: %s", got.State)
	}
	if len(f.events) != 0 {
		t.Fatalf("event fanned out before the crash")
	}
	pending, err := f.stores.Events.PendingEvents(context.Background(), f.now, 10)
	if err != nil || len(pending) != 1 || pending[0].Type != voiceops.EventTriggered {
		t.Fatalf("pending after the crash: %v %v", pending, err)
	}
	f.now = f.now.Add(time.Minute)
	st := f.run()
	if st.Repaired != 1 || len(f.events) != 1 || f.events[0].ID != pending[0].ID {
		t.Fatalf("repair: stats %+v, events %v", st, f.events)
	}
	f.now = f.now.Add(time.Minute)
	f.run()
	if f.fanned[pending[0].ID] != 1 {
		t.Errorf("event fanned out %d times, want once", f.fanned[pending[0].ID])
	}
}

// TestOverlappingRunsSendEachEventOnce runs evaluators concurrently: the
// conditional write on the rule version lets one of them win each rule.
func TestOverlappingRunsSendEachEventOnce(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 8; i++ {
		f.rule("acct_a", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
	}
	f.record("acct_a", "p1", metrics.APIErrors, 1, time.Minute)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.evaluator().Run(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.events) != 8 {
		t.Errorf("%d events for 8 rules triggering once", len(f.events))
	}
	for id, n := range f.fanned {
		if n != 1 {
			t.Errorf("event %s fanned out %d times", id, n)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// within1pct allows the sketches' relative error (exact for counts).
func within1pct(got, want int64) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	return d*100 <= want
}

func deref(p *int64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// TestSteadyStateWritesOneMarkPerScope: with nothing changing, a run
// rewrites no rule; it writes one mark per scope, and GET shows the new
// instant as last_evaluated_at.
func TestSteadyStateWritesOneMarkPerScope(t *testing.T) {
	f := newFixture(t)
	var rules []voiceops.AlertRule
	for i := range 6 {
		project := []string{"p1", "p2", ""}[i%3]
		rules = append(rules, f.rule("acct_a", project, voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 100, voiceops.Window60m))
	}
	f.record("acct_a", "p1", metrics.APIErrors, 1, time.Minute)
	f.record("acct_a", "p2", metrics.APIErrors, 1, time.Minute)
	if st := f.run(); st.Written != 6 || st.Marks != 3 {
		t.Fatalf("first run: %+v, want 6 written (ok, 1) and 3 marks", st)
	}
	f.now = f.now.Add(time.Minute + 250*time.Millisecond)
	st := f.run()
	if st.Written != 0 || st.Unchanged != 6 || st.Marks != 3 || st.Events != 0 {
		t.Fatalf("steady run: %+v, want 0 written, 6 unchanged, 3 marks", st)
	}
	api := alerting.WithMarks(f.stores.Rules, f.stores.Evaluations) // what GET and list read
	for _, r := range rules {
		if got, err := api.GetRule(context.Background(), r.AccountID, r.ID); err != nil || got.LastEvaluatedAt == nil || !got.LastEvaluatedAt.Equal(f.now) {
			t.Errorf("%s: last_evaluated_at %v (%v), want the steady run's %v", r.ID, got.LastEvaluatedAt, err, f.now)
		}
	}
	list, err := api.ListRules(context.Background(), "acct_a")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if r.LastEvaluatedAt == nil || !r.LastEvaluatedAt.Equal(f.now) {
			t.Errorf("list %s: last_evaluated_at %v", r.ID, r.LastEvaluatedAt)
		}
	}
	// A new value is a write, of that rule only.
	f.record("acct_a", "p1", metrics.APIErrors, 1, 0)
	f.now = f.now.Add(time.Second)
	if st := f.run(); st.Written != 4 { // p1's two rules and the two account-wide ones
		t.Errorf("after new data: %+v, want 4 written", st)
	}
}

// TestStreamAndScheduleRaceMakeOneTransition makes the stream path
// (EvaluateScopes) and the schedule (Run) evaluate the same breaching rule
// at the same moment: both reach the write with the same version; one
// wins, the other re-reads the rule, finds it already firing, and writes
// nothing. One transition, one alerts.triggered.
func TestStreamAndScheduleRaceMakeOneTransition(t *testing.T) {
	for range 20 {
		f := newFixture(t)
		r := f.rule("acct_a", "p1", voiceops.MetricAPIErrors, voiceops.OpGreaterEqual, 1, voiceops.Window5m)
		f.record("acct_a", "p1", metrics.APIErrors, 1, 0)
		var arrived sync.WaitGroup
		arrived.Add(2)
		barrier := func(voiceops.AlertRule) {
			arrived.Done()
			arrived.Wait() // both evaluations hold the same version here
		}
		stream, schedule := f.evaluator(), f.evaluator()
		stream.BeforeWrite, schedule.BeforeWrite = onlyFirst(barrier), onlyFirst(barrier)
		var wg sync.WaitGroup
		var stStream, stSchedule Stats
		wg.Add(2)
		go func() {
			defer wg.Done()
			var err error
			stStream, err = stream.EvaluateScopes(context.Background(), []metrics.Scope{{AccountID: "acct_a", ProjectID: "p1"}})
			if err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			var err error
			stSchedule, err = schedule.Run(context.Background())
			if err != nil {
				t.Error(err)
			}
		}()
		wg.Wait()
		if got := f.get(r); got.State != voiceops.StateAlert {
			t.Fatalf("state %s", got.State)
		}
		if n := len(f.snapshotEvents()); n != 1 {
			t.Fatalf("%d events, want one alerts.triggered", n)
		}
		if stStream.Conflicts+stSchedule.Conflicts != 1 || stStream.Events+stSchedule.Events != 1 {
			t.Fatalf("stream %+v, schedule %+v: want one conflict and one event between them", stStream, stSchedule)
		}
		pending, err := f.stores.Events.PendingEvents(context.Background(), f.now.Add(time.Hour), 10)
		if err != nil || len(pending) != 0 {
			t.Fatalf("pending events %v %v", pending, err)
		}
	}
}

// onlyFirst runs f on the first call only (the re-evaluation after the
// conflict must not wait for a partner that never comes).
func onlyFirst(f func(voiceops.AlertRule)) func(voiceops.AlertRule) {
	var once sync.Once
	return func(r voiceops.AlertRule) { once.Do(func() { f(r) }) }
}
