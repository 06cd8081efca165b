package series_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/evaluator"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// errorsAt is the test's API errors per minute: quiet, a burst, quiet, a
// gap with no activity at all (-1), and a second burst.
func errorsAt(i int) int {
	switch {
	case i >= 10 && i < 14, i >= 40 && i < 43:
		return 2
	case i >= 25 && i < 33:
		return -1
	}
	return 0
}

func record(t *testing.T, rec *buckets.Recorder, s metrics.Scope, at time.Time, n int) {
	t.Helper()
	events := []metrics.Event{{AccountID: s.AccountID, ProjectID: s.ProjectID, Kind: metrics.Activity, At: at}}
	if n < 0 {
		return
	}
	for range n {
		events = append(events, metrics.Count(metrics.APIErrors, s.AccountID, s.ProjectID, at))
	}
	if err := rec.Record(context.Background(), events...); err != nil {
		t.Fatal(err)
	}
}

// TestPreviewMatchesTheEvaluator replays a rule over an hour that the real
// evaluator lived through minute by minute: every minute's state and every
// transition agree, and the evaluator's history holds the same changes.
func TestPreviewMatchesTheEvaluator(t *testing.T) {
	ctx := context.Background()
	// Events are accepted two hours old: the hour lies in the last 100 minutes.
	from := time.Now().UTC().Truncate(time.Minute).Add(-100 * time.Minute)
	to := from.Add(60 * time.Minute)
	store := memory.New()
	stores := store.Stores()
	acct := voiceops.Account{ID: "acct_p", Name: "p", CreatedAt: from}
	if err := stores.Accounts.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	proj := voiceops.Project{ID: "proj_p", AccountID: acct.ID, Name: "p", CreatedAt: from}
	if err := stores.Accounts.CreateProject(ctx, proj); err != nil {
		t.Fatal(err)
	}
	pid := proj.ID
	in := voiceops.RuleInput{Name: "errors", ProjectID: &pid, Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreaterEqual, Threshold: 4, Window: voiceops.Window5m}
	rule := voiceops.NewRule("ar_live", acct.ID, in, from)
	if err := stores.Rules.CreateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	minutes := memory.NewMetrics()
	rec := &buckets.Recorder{Store: minutes}
	now := from
	ev := &evaluator.Evaluator{
		Rules: stores.Rules, Events: stores.Events, Metrics: minutes,
		Fanout: func(context.Context, voiceops.AlertEvent) error { return nil },
		Now:    func() time.Time { return now }, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	scope := metrics.Scope{AccountID: acct.ID, ProjectID: pid}
	var live []voiceops.State
	for i := 0; i < 60; i++ {
		m := from.Add(time.Duration(i) * time.Minute)
		record(t, rec, scope, m.Add(20*time.Second), errorsAt(i))
		now = m.Add(time.Minute - time.Millisecond)
		if _, err := ev.EvaluateScopes(ctx, []metrics.Scope{scope}); err != nil {
			t.Fatal(err)
		}
		r, err := stores.Rules.GetRule(ctx, acct.ID, rule.ID)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, r.State)
	}

	reader := &series.Reader{Minutes: minutes, Hours: memory.NewRollups(), Now: time.Now}
	res, err := reader.Preview(ctx, voiceops.NewRule("ar_preview", acct.ID, in, from), from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 60 {
		t.Fatalf("%d points, want 60", len(res.Points))
	}
	for i, p := range res.Points {
		if p.State != live[i] {
			t.Errorf("minute %d: preview %s, evaluator %s", i, p.State, live[i])
		}
		if !p.At.Equal(from.Add(time.Duration(i) * time.Minute)) {
			t.Errorf("point %d at %v", i, p.At)
		}
	}
	hist, _, err := stores.History.RuleHistory(ctx, acct.ID, rule.ID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != len(res.Transitions) || len(hist) < 4 {
		t.Fatalf("evaluator history %d changes, preview %d transitions (want the same, at least 4): %+v / %+v", len(hist), len(res.Transitions), hist, res.Transitions)
	}
	for i, tr := range res.Transitions {
		h := hist[len(hist)-1-i] // history is newest first
		if !tr.At.Equal(h.At) || tr.From != h.From || tr.To != h.To || (tr.Type != "") != (h.EventID != "") {
			t.Errorf("transition %d: preview %+v, history %+v", i, tr, h)
		}
	}
}

// TestRollupsAndSeries rolls a final hour up and reads a series that spans
// the roll-ups and the recent minutes.
func TestRollupsAndSeries(t *testing.T) {
	ctx := context.Background()
	real := time.Now().UTC()
	store := memory.New()
	acct := voiceops.Account{ID: "acct_s", Name: "s", CreatedAt: real}
	if err := store.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	s := metrics.Scope{AccountID: acct.ID}
	minutes := memory.NewMetrics()
	hours := memory.NewRollups()
	rec := &buckets.Recorder{Store: minutes}
	// Minutes of a final hour (recorded while they were new enough), and
	// of the last 10 minutes. The hour before the last final one: final
	// whatever the minute of the hour the test runs in (an hour is final
	// FinalAfter past its end).
	final := series.LastFinalHour(real).Add(-2 * time.Hour)
	minutes.Now = func() time.Time { return final.Add(50 * time.Minute) }
	for i := 0; i < 3; i++ {
		if err := minutes.AddBuckets(ctx, buckets.Aggregate([]metrics.Event{metrics.Count(metrics.APIErrors, s.AccountID, "", final.Add(time.Duration(10*i)*time.Minute))})); err != nil {
			t.Fatal(err)
		}
	}
	minutes.Now = time.Now
	record(t, rec, s, real.Add(-5*time.Minute), 4)
	// An older roll-up, as an earlier run left it.
	old := real.Truncate(time.Hour).Add(-72 * time.Hour)
	if err := hours.PutHours(ctx, buckets.Aggregate([]metrics.Event{metrics.Count(metrics.APIErrors, s.AccountID, "", old)})); err != nil {
		t.Fatal(err)
	}
	roller := &series.Roller{Minutes: minutes, Hours: hours, Scopes: series.AccountScopes(store), Now: func() time.Time { return real }}
	st, err := roller.RollShard(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Scopes != 1 || st.Rolled == 0 {
		t.Fatalf("first run: %+v, want one scope and some hours rolled", st)
	}
	again, err := roller.RollShard(ctx, -1)
	if err != nil || again.Rolled != 0 {
		t.Errorf("second run: %+v %v, want nothing rolled", again, err)
	}
	got, err := hours.ReadHours(ctx, s, final, final.Add(time.Hour))
	if err != nil || len(got) != 1 || got[0].Counts.Of(metrics.APIErrors) != 3 {
		t.Fatalf("roll-up of the final hour: %+v %v, want 3 API errors", got, err)
	}
	reader := &series.Reader{Minutes: minutes, Hours: hours, Now: func() time.Time { return real }}
	from, to := series.Align(real.Add(-4*24*time.Hour), real, time.Hour)
	points, err := reader.Read(ctx, series.Query{Scope: s, Metric: voiceops.MetricAPIErrors, From: from, To: to, Step: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != int(to.Sub(from)/time.Hour) {
		t.Fatalf("%d points for %v..%v", len(points), from, to)
	}
	want := map[time.Time]int64{old: 1, real.Add(-5 * time.Minute).Truncate(time.Hour): 4}
	for _, p := range points {
		w, ok := want[p.At]
		switch {
		case p.At.Equal(final):
			if p.Value == nil || *p.Value != got[0].Counts.Of(metrics.APIErrors) {
				t.Errorf("final hour: %v, want the roll-up's %d", p.Value, got[0].Counts.Of(metrics.APIErrors))
			}
		case ok:
			if p.Value == nil || *p.Value != w {
				t.Errorf("hour %v: %v, want %d", p.At, p.Value, w)
			}
		case p.Value != nil:
			t.Errorf("hour %v: %d, want no data", p.At, *p.Value)
		}
	}
	// Minutes, 1 m steps, last 15 minutes.
	mf, mt := series.Align(real.Add(-15*time.Minute), real, time.Minute)
	mp, err := reader.Read(ctx, series.Query{Scope: s, Metric: voiceops.MetricAPIErrors, From: mf, To: mt, Step: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, p := range mp {
		if p.Value != nil {
			sum += *p.Value
		}
	}
	if len(mp) != int(mt.Sub(mf)/time.Minute) || sum != 4 {
		t.Errorf("minute series: %d points, %d errors; want %d and 4", len(mp), sum, int(mt.Sub(mf)/time.Minute))
	}
}

func TestRanges(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		from, to time.Time
		step     time.Duration
		field    string
	}{
		{"a day of minutes", now.Add(-24 * time.Hour), now, time.Minute, ""},
		{"too many points", now.Add(-25 * time.Hour), now, time.Minute, "step"},
		{"minutes past their retention", now.Add(-50 * time.Hour), now.Add(-49 * time.Hour), time.Minute, "step"},
		{"a week of hours", now.Add(-7 * 24 * time.Hour), now, time.Hour, ""},
		{"past the roll-ups", now.Add(-31 * 24 * time.Hour), now, 24 * time.Hour, "from"},
		{"backwards", now, now.Add(-time.Hour), time.Hour, "from"},
		{"one step ahead", now.Add(-24 * time.Hour), now.Add(time.Hour), time.Hour, ""},
		{"two steps ahead", now.Add(-24 * time.Hour), now.Add(2 * time.Hour), time.Hour, "to"},
		{"years ahead", now.Add(-24 * time.Hour), now.Add(4 * 365 * 24 * time.Hour), 24 * time.Hour, "to"},
	} {
		if field, _ := series.CheckRange(c.from, c.to, c.step, now); field != c.field {
			t.Errorf("%s: field %q, want %q", c.name, field, c.field)
		}
	}
	if s := series.DefaultStep(now.Add(-7*24*time.Hour), now, now); s != time.Hour {
		t.Errorf("default step of a week = %v, want 1h (minutes are kept 48 h)", s)
	}
	if s := series.DefaultStep(now.Add(-6*time.Hour), now, now); s != time.Minute {
		t.Errorf("default step of 6 h = %v, want 1m", s)
	}
}

// TestReadStopsWithItsContext: a read whose request has gone (its context
// cancelled) stops with the context's error instead of walking its range.
func TestReadStopsWithItsContext(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	r := &series.Reader{Minutes: memory.NewMetrics(), Hours: memory.NewRollups(), Now: func() time.Time { return now }}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, step := range []time.Duration{time.Minute, time.Hour} {
		from, to := series.Align(now.Add(-24*time.Hour), now, step)
		points, err := r.Read(ctx, series.Query{Scope: metrics.Scope{AccountID: "acct_c"}, Metric: voiceops.MetricAPIErrors, From: from, To: to, Step: step})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("step %v: %d points, %v; want context.Canceled", step, len(points), err)
		}
	}
}

// BenchmarkPreview24h replays a p95 latency rule over a day of minutes in
// memory: the evaluation's own cost, without the store's.
func BenchmarkPreview24h(b *testing.B) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Minute)
	ms := memory.NewMetrics()
	ms.Now = func() time.Time { return now }
	s := metrics.Scope{AccountID: "acct_b", ProjectID: "proj_b"}
	for m := now.Add(-25 * time.Hour); m.Before(now); m = m.Add(time.Minute) {
		var events []metrics.Event
		for i := range 5 {
			events = append(events, metrics.Event{AccountID: s.AccountID, ProjectID: s.ProjectID, Kind: metrics.TurnLatency, Value: float64(300 + 100*i), At: m})
		}
		ms.Now = func() time.Time { return m }
		if err := ms.AddBuckets(ctx, buckets.Aggregate(events)); err != nil {
			b.Fatal(err)
		}
	}
	ms.Now = func() time.Time { return now }
	pid := s.ProjectID
	rule := voiceops.NewRule("ar_b", s.AccountID, voiceops.RuleInput{Name: "p95", ProjectID: &pid, Metric: voiceops.MetricTurnLatencyP95,
		Operator: voiceops.OpGreater, Threshold: 650, Window: voiceops.Window60m}, now)
	r := &series.Reader{Minutes: ms, Hours: memory.NewRollups(), Now: func() time.Time { return now }}
	for b.Loop() {
		res, err := r.Preview(ctx, rule, now.Add(-24*time.Hour), now)
		if err != nil || len(res.Points) != 1440 {
			b.Fatalf("%d points, %v", len(res.Points), err)
		}
	}
}

func TestRollWindow(t *testing.T) {
	h := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var due []int
	for m := range 60 {
		if series.RollWindow(h.Add(time.Duration(m) * time.Minute)) {
			due = append(due, m)
		}
	}
	// The hour that ended at 08:00 is final (FinalAfter, 2 h 2 min) from
	// 10:02 on: the runs from 10:03 roll it up.
	if len(due) != 10 || due[0] != 3 || !series.LastFinalHour(h.Add(3*time.Minute)).Equal(h.Add(-2*time.Hour)) {
		t.Errorf("roll-up minutes %v; the last final hour at 10:03 ends %v", due, series.LastFinalHour(h.Add(3*time.Minute)))
	}
}
