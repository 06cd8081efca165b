package buckets_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// t0 is a whole minute; the tests' times derive from it.
var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func ev(kind metrics.Kind, acct, proj string, value float64, at time.Time) metrics.Event {
	return metrics.Event{AccountID: acct, ProjectID: proj, Kind: kind, Value: value, At: at}
}

func TestWindow(t *testing.T) {
	for _, tc := range []struct {
		name     string
		evalAt   time.Time
		d        time.Duration
		from, to time.Time
	}{
		// Minutes t0-5m .. t0, and up to a minute ahead: [t0-5m, t0+2m).
		{"on the minute", t0, 5 * time.Minute, t0.Add(-5 * time.Minute), t0.Add(2 * time.Minute)},
		{"inside the minute", t0.Add(59*time.Second + 999*time.Millisecond), 10 * time.Minute, t0.Add(-10 * time.Minute), t0.Add(2 * time.Minute)},
		{"another zone", t0.Add(30 * time.Second).In(time.FixedZone("UTC+2", 7200)), time.Hour, t0.Add(-time.Hour), t0.Add(2 * time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to := buckets.Window(tc.evalAt, tc.d)
			if !from.Equal(tc.from) || !to.Equal(tc.to) || to.Location() != time.UTC || from.Location() != time.UTC {
				t.Errorf("Window(%v, %v) = [%v, %v), want [%v, %v) in UTC", tc.evalAt, tc.d, from, to, tc.from, tc.to)
			}
		})
	}
}

// TestWindowEdges records one event at a time and evaluates a 5-minute
// window at the instant t = t0 + 30 s: an event counts from the moment it
// is stored (even in t's own minute, even dated a little ahead) and until
// its minute ends more than 5 minutes before t.
func TestWindowEdges(t *testing.T) {
	evalAt := t0.Add(30 * time.Second)
	from, to := buckets.Window(evalAt, 5*time.Minute)
	for _, tc := range []struct {
		name string
		at   time.Time
		in   bool
	}{
		{"just now", evalAt.Add(-time.Millisecond), true},
		{"at the start of t's minute", t0, true},
		{"dated 50 s ahead (producer clock)", evalAt.Add(50 * time.Second), true},
		{"at t-5m", evalAt.Add(-5 * time.Minute), true},
		{"in the minute of t-5m, before it", t0.Add(-5 * time.Minute), true},
		{"in the minute before t-5m's", t0.Add(-5*time.Minute - time.Nanosecond), false},
		{"in the middle", t0.Add(-150 * time.Second), true},
		{"beyond the drift allowance", t0.Add(2 * time.Minute), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs := buckets.Aggregate([]metrics.Event{ev(metrics.APIErrors, "acct_a", "", 1, tc.at)})
			s := buckets.Summarize(bs, from, to)
			v, ok := s.Value(voiceops.MetricAPIErrors)
			if tc.in && (!ok || v != 1) {
				t.Errorf("event %v not counted in [%v, %v): %d, %v", tc.at, from, to, v, ok)
			}
			if !tc.in && ok {
				t.Errorf("event %v counted in [%v, %v): %d", tc.at, from, to, v)
			}
		})
	}
}

// TestEventLifetime follows one event through evaluations at every second:
// it counts from its own instant, for at least the window, and stops before
// the window plus one minute.
func TestEventLifetime(t *testing.T) {
	at := t0.Add(20*time.Second + 300*time.Millisecond)
	bs := buckets.Aggregate([]metrics.Event{ev(metrics.APIErrors, "acct_a", "p", 1, at)})
	var first, last time.Time
	for s := time.Duration(0); s < 8*time.Minute; s += time.Second {
		evalAt := at.Add(s)
		from, to := buckets.Window(evalAt, 5*time.Minute)
		if _, ok := buckets.Summarize(bs, from, to).Value(voiceops.MetricAPIErrors); ok {
			if first.IsZero() {
				first = evalAt
			}
			last = evalAt
		}
	}
	if !first.Equal(at) {
		t.Errorf("first counted at %v, want at once (%v)", first, at)
	}
	if age := last.Sub(at); age < 5*time.Minute || age >= 6*time.Minute {
		t.Errorf("last counted %v after the event, want in [5m, 6m)", age)
	}
}

func TestValue(t *testing.T) {
	at := t0.Add(-time.Minute)
	for _, tc := range []struct {
		name   string
		events []metrics.Event
		metric voiceops.Metric
		want   int64
		ok     bool
	}{
		{"nothing at all is no_data", nil, voiceops.MetricAPIErrors, 0, false},
		{"activity without errors is 0", []metrics.Event{ev(metrics.Activity, "acct_a", "", 0, at)}, voiceops.MetricAPIErrors, 0, true},
		{"another count is activity", []metrics.Event{ev(metrics.CallVolume, "acct_a", "", 3, at)}, voiceops.MetricCallCrashes, 0, true},
		{"a count of 0 is still activity", []metrics.Event{ev(metrics.CallVolume, "acct_a", "", 0, at)}, voiceops.MetricCallVolume, 0, true},
		{"counts add their values", []metrics.Event{
			ev(metrics.CallVolume, "acct_a", "", 3, at), ev(metrics.CallVolume, "acct_a", "", 4, at.Add(-2*time.Minute)),
		}, voiceops.MetricCallVolume, 7, true},
		{"api errors", []metrics.Event{ev(metrics.APIErrors, "acct_a", "", 1, at), ev(metrics.APIErrors, "acct_a", "", 1, at)}, voiceops.MetricAPIErrors, 2, true},
		{"function errors", []metrics.Event{ev(metrics.FunctionErrors, "acct_a", "", 5, at)}, voiceops.MetricFunctionErrors, 5, true},
		{"call crashes", []metrics.Event{ev(metrics.CallCrashes, "acct_a", "", 2, at)}, voiceops.MetricCallCrashes, 2, true},
		{"latency without turns is no_data", []metrics.Event{ev(metrics.CallVolume, "acct_a", "", 1, at)}, voiceops.MetricTurnLatencyP95, 0, false},
		{"one turn", []metrics.Event{ev(metrics.TurnLatency, "acct_a", "", 1000, at)}, voiceops.MetricTurnLatencyP50, 1000, true},
		{"a turn of 0 ms", []metrics.Event{ev(metrics.TurnLatency, "acct_a", "", 0, at)}, voiceops.MetricTurnLatencyP95, 0, true},
		{"turns are activity", []metrics.Event{ev(metrics.TurnLatency, "acct_a", "", 812, at)}, voiceops.MetricCallVolume, 0, true},
		{"an unknown metric", []metrics.Event{ev(metrics.CallVolume, "acct_a", "", 1, at)}, "cpu", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to := buckets.Window(t0, 5*time.Minute)
			s := buckets.Summarize(buckets.Aggregate(tc.events), from, to)
			v, ok := s.Value(tc.metric)
			if tc.metric == voiceops.MetricTurnLatencyP50 || tc.metric == voiceops.MetricTurnLatencyP95 {
				// Within the sketch's 1%, plus the rounding to whole ms.
				if ok == tc.ok && math.Abs(float64(v-tc.want)) <= 0.01*float64(tc.want)+0.5 {
					v = tc.want
				}
			}
			if v != tc.want || ok != tc.ok {
				t.Errorf("Value(%s) = %d, %v; want %d, %v", tc.metric, v, ok, tc.want, tc.ok)
			}
			if s.Active() != (len(tc.events) > 0) {
				t.Errorf("Active() = %v with %d events", s.Active(), len(tc.events))
			}
		})
	}
}

// exactPercentile is the nearest-rank percentile: the k-th smallest value,
// k = ceil(q*n).
func exactPercentile(sorted []float64, q float64) float64 {
	k := int(math.Ceil(q*float64(len(sorted)) - 1e-9))
	return sorted[max(k, 1)-1]
}

func TestPercentilesWithinOnePercent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	uniform := make([]float64, 1000)
	for i := range uniform {
		uniform[i] = float64(i + 1) // 1..1000 ms
	}
	skewed := make([]float64, 0, 5000)
	for range 4750 {
		skewed = append(skewed, 200+rng.Float64()*100) // most turns are fast
	}
	for range 250 {
		skewed = append(skewed, 4000+rng.ExpFloat64()*3000) // a slow tail
	}
	lognormal := make([]float64, 3000)
	for i := range lognormal {
		lognormal[i] = math.Exp(6.5 + rng.NormFloat64())
	}
	constant := slices.Repeat([]float64{1234}, 100)
	withZeros := append(slices.Repeat([]float64{0}, 60), 10, 20, 30, 40)

	for _, tc := range []struct {
		name string
		data []float64
	}{
		{"uniform 1..1000 ms", uniform},
		{"skewed, 5% slow tail", skewed},
		{"log-normal", lognormal},
		{"constant", constant},
		{"mostly zeros", withZeros},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Spread the turns over the window's minutes and two projects:
			// the account-wide sketch is a merge of many sketches.
			from, to := buckets.Window(t0, 10*time.Minute)
			events := make([]metrics.Event, len(tc.data))
			for i, v := range tc.data {
				proj := []string{"proj_1", "proj_2"}[i%2]
				events[i] = ev(metrics.TurnLatency, "acct_a", proj, v, from.Add(time.Duration(i%10)*time.Minute+time.Second))
			}
			rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
			s := buckets.Summarize(bucketsOf(buckets.Aggregate(events), metrics.Scope{AccountID: "acct_a"}), from, to)
			if s.Counts.Of(metrics.TurnLatency) != int64(len(tc.data)) {
				t.Fatalf("%d turns counted, want %d", s.Counts.Of(metrics.TurnLatency), len(tc.data))
			}
			sorted := slices.Sorted(slices.Values(tc.data))
			for _, c := range []struct {
				metric voiceops.Metric
				q      float64
			}{{voiceops.MetricTurnLatencyP50, 0.50}, {voiceops.MetricTurnLatencyP95, 0.95}} {
				got, ok := s.Value(c.metric)
				want := exactPercentile(sorted, c.q)
				// 1% of the exact value, plus the rounding to whole ms.
				if !ok || math.Abs(float64(got)-want) > 0.01*want+0.5 {
					t.Errorf("%s = %d, %v; exact %.3f (allowed ±%.3f)", c.metric, got, ok, want, 0.01*want+0.5)
				}
			}
		})
	}
}

// TestPercentilesOfFewTurns: the nearest-rank method on small samples,
// where percentile definitions differ most.
func TestPercentilesOfFewTurns(t *testing.T) {
	for _, tc := range []struct {
		data     []float64
		p50, p95 float64
	}{
		{[]float64{0, 2000}, 0, 2000},
		{[]float64{100, 300}, 100, 300},
		{[]float64{100, 200, 300}, 200, 300},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5, 10},
		{slices.Repeat([]float64{0}, 19), 0, 0},
		{append(slices.Repeat([]float64{100}, 19), 5000), 100, 100},
		{append(slices.Repeat([]float64{100}, 18), 5000, 5000), 100, 5000},
	} {
		var events []metrics.Event
		for _, v := range tc.data {
			events = append(events, ev(metrics.TurnLatency, "acct_a", "", v, t0.Add(-time.Minute)))
		}
		s := buckets.Summarize(buckets.Aggregate(events), t0.Add(-5*time.Minute), t0)
		for _, c := range []struct {
			m    voiceops.Metric
			want float64
		}{{voiceops.MetricTurnLatencyP50, tc.p50}, {voiceops.MetricTurnLatencyP95, tc.p95}} {
			got, ok := s.Value(c.m)
			if !ok || math.Abs(float64(got)-c.want) > 0.01*c.want+0.5 {
				t.Errorf("%s of %v = %d, %v; want %v", c.m, tc.data, got, ok, c.want)
			}
		}
	}
}

func bucketsOf(bs []buckets.Bucket, s metrics.Scope) []buckets.Bucket {
	var out []buckets.Bucket
	for _, b := range bs {
		if b.Scope == s {
			out = append(out, b)
		}
	}
	return out
}

func TestAggregateMakesFewBuckets(t *testing.T) {
	// 1000 events of every kind over 3 minutes and 2 projects of one
	// account: 3 account bs and 6 project bs.
	rng := rand.New(rand.NewPCG(3, 4))
	var events []metrics.Event
	want := map[metrics.Scope]buckets.Counts{}
	for i := range 1000 {
		kind := metrics.Kinds[i%len(metrics.Kinds)]
		proj := []string{"proj_1", "proj_2"}[rng.IntN(2)]
		value := float64(rng.IntN(5))
		if kind == metrics.TurnLatency {
			value = 100 + float64(rng.IntN(900))
		}
		events = append(events, ev(kind, "acct_a", proj, value, t0.Add(time.Duration(rng.IntN(180))*time.Second)))
		for _, s := range []metrics.Scope{{AccountID: "acct_a"}, {AccountID: "acct_a", ProjectID: proj}} {
			c := want[s]
			c.Set(metrics.Activity, c.Of(metrics.Activity)+1)
			switch {
			case kind.IsLatency():
				c.Set(kind, c.Of(kind)+1)
			case kind.IsCount():
				c.Set(kind, c.Of(kind)+int64(value))
			}
			want[s] = c
		}
	}
	bs := buckets.Aggregate(events)
	if len(bs) != 9 {
		t.Fatalf("%d bs, want 9 (3 minutes x (account + 2 projects))", len(bs))
	}
	got := map[metrics.Scope]buckets.Counts{}
	for i, b := range bs {
		if i > 0 && !sortedBefore(bs[i-1], b) {
			t.Errorf("bs out of order at %d: %v %v then %v %v", i, bs[i-1].Scope, bs[i-1].Minute, b.Scope, b.Minute)
		}
		if !b.Minute.Equal(metrics.Minute(b.Minute)) || b.Minute.Location() != time.UTC || b.Minute.Before(t0) || !b.Minute.Before(t0.Add(3*time.Minute)) {
			t.Errorf("bucket minute %v", b.Minute)
		}
		if b.Latency == nil || int64(b.Latency.GetCount()) != b.Counts.Of(metrics.TurnLatency) {
			t.Errorf("bucket %v %v: sketch does not hold its %d turns", b.Scope, b.Minute, b.Counts.Of(metrics.TurnLatency))
		}
		c := got[b.Scope]
		c.Add(b.Counts)
		got[b.Scope] = c
	}
	if len(got) != len(want) {
		t.Errorf("scopes %v, want %v", got, want)
	}
	for s, w := range want {
		if got[s] != w {
			t.Errorf("scope %v: counts %+v, want %+v", s, got[s], w)
		}
	}
}

func sortedBefore(a, b buckets.Bucket) bool {
	if a.Scope != b.Scope {
		return a.Scope.AccountID < b.Scope.AccountID || (a.Scope.AccountID == b.Scope.AccountID && a.Scope.ProjectID < b.Scope.ProjectID)
	}
	return a.Minute.Before(b.Minute)
}

func TestSummarizeLeavesBucketsAlone(t *testing.T) {
	bs := buckets.Aggregate([]metrics.Event{
		ev(metrics.TurnLatency, "acct_a", "", 100, t0.Add(-2*time.Minute)),
		ev(metrics.TurnLatency, "acct_a", "", 300, t0.Add(-time.Minute)),
	})
	s := buckets.Summarize(bs, t0.Add(-time.Hour), t0)
	if s.Counts.Of(metrics.TurnLatency) != 2 {
		t.Fatalf("turns %d", s.Counts.Of(metrics.TurnLatency))
	}
	for _, b := range bs {
		if b.Latency.GetCount() != 1 {
			t.Errorf("bucket %v: sketch count %v after Summarize, want 1", b.Minute, b.Latency.GetCount())
		}
	}
}

func TestCombine(t *testing.T) {
	a := buckets.Aggregate([]metrics.Event{ev(metrics.TurnLatency, "acct_a", "p", 100, t0), ev(metrics.CallVolume, "acct_a", "p", 2, t0)})
	b := buckets.Aggregate([]metrics.Event{ev(metrics.TurnLatency, "acct_a", "p", 300, t0.Add(time.Second))})
	out, err := buckets.Combine(append(a, b...))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 {
		t.Fatalf("%d bs, want 2 (account and project)", len(out))
	}
	for _, x := range out {
		if x.Counts != (buckets.NewCounts(map[metrics.Kind]int64{metrics.Activity: 3, metrics.TurnLatency: 2, metrics.CallVolume: 2})) || x.Latency.GetCount() != 2 {
			t.Errorf("%v: %+v, sketch count %v", x.Scope, x.Counts, x.Latency.GetCount())
		}
	}
	if a[0].Latency.GetCount() != 1 || b[0].Latency.GetCount() != 1 {
		t.Error("Combine changed its input")
	}
	for _, bad := range []buckets.Bucket{
		{Scope: metrics.Scope{AccountID: ""}, Minute: t0},
		{Scope: metrics.Scope{AccountID: "acct_a", ProjectID: "a#b"}, Minute: t0},
		{Scope: metrics.Scope{AccountID: "acct_a"}, Minute: t0.Add(time.Second)},
		{Scope: metrics.Scope{AccountID: "acct_a"}},
	} {
		if _, err := buckets.Combine([]buckets.Bucket{bad}); err == nil {
			t.Errorf("Combine accepted %+v", bad)
		}
	}
}

// fakeStore records what it is given.
type fakeStore struct {
	added [][]buckets.Bucket
	err   error
}

func (f *fakeStore) AddBuckets(_ context.Context, bs []buckets.Bucket) error {
	if f.err != nil {
		return f.err
	}
	f.added = append(f.added, bs)
	return nil
}

func (f *fakeStore) ReadBuckets(context.Context, metrics.Scope, time.Time, time.Time) ([]buckets.Bucket, error) {
	return nil, nil
}

var _ buckets.Store = (*fakeStore)(nil)

func TestRecorder(t *testing.T) {
	ctx := context.Background()
	f := &fakeStore{}
	r := &buckets.Recorder{Store: f}
	events := make([]metrics.Event, 1000)
	for i := range events {
		events[i] = metrics.Count(metrics.APIErrors, "acct_a", "proj_1", t0.Add(time.Duration(i)*50*time.Millisecond))
	}
	if err := r.Record(ctx, events...); err != nil {
		t.Fatal(err)
	}
	if len(f.added) != 1 || len(f.added[0]) != 2 {
		t.Fatalf("AddBuckets calls %d, bs %v; want one call with 2 buckets", len(f.added), f.added)
	}
	for _, b := range f.added[0] {
		if b.Counts.Of(metrics.APIErrors) != 1000 || b.Counts.Of(metrics.Activity) != 1000 {
			t.Errorf("%v: %+v", b.Scope, b.Counts)
		}
	}
	if err := r.Record(ctx); err != nil || len(f.added) != 1 {
		t.Errorf("recording nothing: %v, %d calls", err, len(f.added))
	}
	bad := append(slices.Clone(events[:3]), metrics.Event{AccountID: "acct_a", Kind: "cpu", At: t0})
	if err := r.Record(ctx, bad...); err == nil || len(f.added) != 1 {
		t.Errorf("an invalid event: %v, %d calls; want an error and nothing stored", err, len(f.added))
	}
	f.err = errors.New("store down")
	if err := r.Record(ctx, events[0]); !errors.Is(err, f.err) {
		t.Errorf("store failure: got %v", err)
	}
}

func TestBucketCheckRefusesForeignSketches(t *testing.T) {
	tiny := buckets.NewSketch()
	_ = tiny.Add(1e-9) // below the range of latencies: no bucket of Aggregate holds it
	b := buckets.Bucket{Scope: metrics.Scope{AccountID: "acct_a"}, Minute: t0, Latency: tiny}
	if err := b.Check(); err == nil {
		t.Errorf("Check accepted the sketch")
	}
	ok := buckets.NewSketch()
	_ = ok.Add(0)
	_ = ok.Add(metrics.MaxLatencyMS)
	if err := (buckets.Bucket{Scope: metrics.Scope{AccountID: "acct_a"}, Minute: t0, Latency: ok}).Check(); err != nil {
		t.Errorf("Check refused the range's ends: %v", err)
	}
}

// TestScopes: an account-wide summary sees every project; a project's
// summary sees its own events only; accounts never mix.
func TestScopes(t *testing.T) {
	at := t0.Add(-time.Minute)
	events := []metrics.Event{
		ev(metrics.APIErrors, "acct_a", "proj_1", 2, at),
		ev(metrics.APIErrors, "acct_a", "proj_2", 3, at),
		ev(metrics.APIErrors, "acct_a", "", 4, at), // no project: the account only
		ev(metrics.APIErrors, "acct_b", "proj_1", 100, at),
		ev(metrics.Activity, "acct_a", "proj_3", 0, at),
	}
	bs := buckets.Aggregate(events)
	from, to := buckets.Window(t0, 5*time.Minute)
	for _, tc := range []struct {
		scope metrics.Scope
		want  int64
		ok    bool
	}{
		{metrics.Scope{AccountID: "acct_a"}, 9, true},
		{metrics.Scope{AccountID: "acct_a", ProjectID: "proj_1"}, 2, true},
		{metrics.Scope{AccountID: "acct_a", ProjectID: "proj_2"}, 3, true},
		{metrics.Scope{AccountID: "acct_a", ProjectID: "proj_3"}, 0, true},
		{metrics.Scope{AccountID: "acct_a", ProjectID: "proj_4"}, 0, false},
		{metrics.Scope{AccountID: "acct_b"}, 100, true},
		{metrics.Scope{AccountID: "acct_b", ProjectID: "proj_1"}, 100, true},
		{metrics.Scope{AccountID: "acct_c"}, 0, false},
	} {
		t.Run(tc.scope.String(), func(t *testing.T) {
			v, ok := buckets.Summarize(bucketsOf(bs, tc.scope), from, to).Value(voiceops.MetricAPIErrors)
			if v != tc.want || ok != tc.ok {
				t.Errorf("api_errors = %d, %v; want %d, %v", v, ok, tc.want, tc.ok)
			}
		})
	}
}
