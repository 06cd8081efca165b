package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// RunMetrics runs the contract of buckets.Store. newStore is called once
// per subtest; the scopes of every subtest are fresh random IDs, so a
// store may also be shared. The stores must use the system clock: the
// buckets are dated around time.Now(), since those older than
// metrics.Retention are gone.
func RunMetrics(t *testing.T, newStore func(t *testing.T) buckets.Store) {
	t.Helper()
	t.Run("AddAndRead", func(t *testing.T) { testMetricsAddAndRead(t, newStore(t)) })
	t.Run("AddsMerge", func(t *testing.T) { testMetricsAddsMerge(t, newStore(t)) })
	t.Run("RangeIsHalfOpen", func(t *testing.T) { testMetricsRange(t, newStore(t)) })
	t.Run("ScopesAreSeparate", func(t *testing.T) { testMetricsScopes(t, newStore(t)) })
	t.Run("Expiry", func(t *testing.T) { testMetricsExpiry(t, newStore(t)) })
	t.Run("Copies", func(t *testing.T) { testMetricsCopies(t, newStore(t)) })
	t.Run("InvalidBuckets", func(t *testing.T) { testMetricsInvalid(t, newStore(t)) })
	t.Run("ManyBuckets", func(t *testing.T) { testMetricsMany(t, newStore(t)) })
	t.Run("ConcurrentRecords", func(t *testing.T) { testMetricsConcurrent(t, newStore(t)) })
	t.Run("EveryKind", func(t *testing.T) { testMetricsEveryKind(t, newStore(t)) })
}

// metricsBase is a whole minute half an hour ago: well inside the retention.
func metricsBase() time.Time { return metrics.Minute(time.Now()).Add(-30 * time.Minute) }

func newScope(project bool) metrics.Scope {
	s := metrics.Scope{AccountID: voiceops.NewID(voiceops.PrefixAccount)}
	if project {
		s.ProjectID = voiceops.NewID(voiceops.PrefixProject)
	}
	return s
}

func mustRecord(t *testing.T, st buckets.Store, events ...metrics.Event) {
	t.Helper()
	if err := (&buckets.Recorder{Store: st}).Record(ctx(t), events...); err != nil {
		t.Fatalf("Record: %v", err)
	}
}

func mustRead(t *testing.T, st buckets.Store, s metrics.Scope, from, to time.Time) []buckets.Bucket {
	t.Helper()
	bs, err := st.ReadBuckets(ctx(t), s, from, to)
	if err != nil {
		t.Fatalf("ReadBuckets(%v, %v, %v): %v", s, from, to, err)
	}
	for i, b := range bs {
		if b.Scope != s {
			t.Errorf("ReadBuckets(%v): bucket %d has scope %v", s, i, b.Scope)
		}
		if !b.Minute.Equal(metrics.Minute(b.Minute)) || b.Minute.Location() != time.UTC {
			t.Errorf("ReadBuckets(%v): bucket %d minute %v is not a whole UTC minute", s, i, b.Minute)
		}
		if b.Minute.Before(from) || !b.Minute.Before(to) {
			t.Errorf("ReadBuckets(%v, %v, %v): bucket %d minute %v is outside the range", s, from, to, i, b.Minute)
		}
		if i > 0 && !bs[i-1].Minute.Before(b.Minute) {
			t.Errorf("ReadBuckets(%v): minutes not ascending and distinct: %v then %v", s, bs[i-1].Minute, b.Minute)
		}
		if b.Latency != nil && int64(b.Latency.GetCount()) != b.Counts.Of(metrics.TurnLatency) {
			t.Errorf("ReadBuckets(%v): bucket %v: sketch count %v, turns %d", s, b.Minute, b.Latency.GetCount(), b.Counts.Of(metrics.TurnLatency))
		}
		if b.Latency == nil && b.Counts.Of(metrics.TurnLatency) != 0 {
			t.Errorf("ReadBuckets(%v): bucket %v: %d turns and no sketch", s, b.Minute, b.Counts.Of(metrics.TurnLatency))
		}
	}
	return bs
}

func minutesOf(bs []buckets.Bucket) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Minute.Format("15:04")
	}
	return out
}

func wantMinutes(t *testing.T, what string, bs []buckets.Bucket, want ...time.Time) {
	t.Helper()
	ok := len(bs) == len(want)
	for i := 0; ok && i < len(bs); i++ {
		ok = bs[i].Minute.Equal(want[i])
	}
	if !ok {
		w := make([]buckets.Bucket, len(want))
		for i, m := range want {
			w[i].Minute = m
		}
		t.Errorf("%s: minutes %v, want %v", what, minutesOf(bs), minutesOf(w))
	}
}

// percentiles returns p50 and p95 of a bucket's sketch.
func percentiles(b buckets.Bucket) string {
	if b.Latency == nil {
		return "none"
	}
	p50, err := b.Latency.GetValueAtQuantile(0.5)
	if err != nil {
		return err.Error()
	}
	p95, _ := b.Latency.GetValueAtQuantile(0.95)
	return fmt.Sprintf("p50=%v p95=%v", p50, p95)
}

func testMetricsAddAndRead(t *testing.T, st buckets.Store) {
	base := metricsBase()
	p := newScope(true)
	acct := metrics.Scope{AccountID: p.AccountID}
	var events []metrics.Event
	for i := range 5 {
		at := base.Add(time.Duration(i)*time.Minute + time.Duration(i)*7*time.Second)
		events = append(events,
			metrics.Count(metrics.APIErrors, p.AccountID, p.ProjectID, at),
			metrics.Event{AccountID: p.AccountID, ProjectID: p.ProjectID, Kind: metrics.CallVolume, Value: float64(i), At: at},
			metrics.Event{AccountID: p.AccountID, Kind: metrics.FunctionErrors, Value: 2, At: at}, // account only
			metrics.Event{AccountID: p.AccountID, ProjectID: p.ProjectID, Kind: metrics.TurnLatency, Value: float64(100 * (i + 1)), At: at},
			metrics.Event{AccountID: p.AccountID, ProjectID: p.ProjectID, Kind: metrics.TurnLatency, Value: 0, At: at},
		)
	}
	events = append(events, metrics.Count(metrics.CallCrashes, p.AccountID, p.ProjectID, base.Add(2*time.Minute)))
	want := buckets.Aggregate(events)
	mustRecord(t, st, events...)

	for _, s := range []metrics.Scope{acct, p} {
		got := mustRead(t, st, s, base, base.Add(5*time.Minute))
		var w []buckets.Bucket
		for _, b := range want {
			if b.Scope == s {
				w = append(w, b)
			}
		}
		if len(got) != len(w) {
			t.Fatalf("%v: %d buckets (%v), want %d", s, len(got), minutesOf(got), len(w))
		}
		for i := range got {
			if !got[i].Minute.Equal(w[i].Minute) || got[i].Counts != w[i].Counts || percentiles(got[i]) != percentiles(w[i]) {
				t.Errorf("%v bucket %d: %v %+v %s; want %v %+v %s", s, i,
					got[i].Minute, got[i].Counts, percentiles(got[i]), w[i].Minute, w[i].Counts, percentiles(w[i]))
			}
		}
	}
	// A read that includes nothing.
	if got := mustRead(t, st, p, base.Add(-10*time.Minute), base); len(got) != 0 {
		t.Errorf("read before the data: %v", minutesOf(got))
	}
	if got := mustRead(t, st, p, base, base); len(got) != 0 {
		t.Errorf("empty range: %v", minutesOf(got))
	}
}

func testMetricsAddsMerge(t *testing.T, st buckets.Store) {
	base := metricsBase()
	s := newScope(false)
	latency := func(v float64, sec int) metrics.Event {
		return metrics.Event{AccountID: s.AccountID, Kind: metrics.TurnLatency, Value: v, At: base.Add(time.Duration(sec) * time.Second)}
	}
	// Three adds to one minute, the last with two buckets of that minute.
	mustRecord(t, st, latency(100, 1), metrics.Count(metrics.APIErrors, s.AccountID, "", base))
	mustRecord(t, st, latency(200, 59))
	b1 := buckets.Aggregate([]metrics.Event{latency(300, 30)})
	b2 := buckets.Aggregate([]metrics.Event{latency(400, 31), metrics.Count(metrics.APIErrors, s.AccountID, "", base)})
	if err := st.AddBuckets(ctx(t), append(b1, b2...)); err != nil {
		t.Fatal(err)
	}
	got := mustRead(t, st, s, base, base.Add(time.Minute))
	if len(got) != 1 {
		t.Fatalf("%d buckets, want 1: %v", len(got), minutesOf(got))
	}
	if want := (buckets.NewCounts(map[metrics.Kind]int64{metrics.Activity: 6, metrics.TurnLatency: 4, metrics.APIErrors: 2})); got[0].Counts != want {
		t.Errorf("counts %+v, want %+v", got[0].Counts, want)
	}
	all := buckets.Aggregate([]metrics.Event{latency(100, 1), latency(200, 59), latency(300, 30), latency(400, 31)})
	if percentiles(got[0]) != percentiles(all[0]) {
		t.Errorf("merged sketch %s, want %s", percentiles(got[0]), percentiles(all[0]))
	}
}

func testMetricsRange(t *testing.T, st buckets.Store) {
	base := metricsBase()
	s := newScope(true)
	var events []metrics.Event
	for _, d := range []time.Duration{-time.Minute, 0, 4 * time.Minute, 5 * time.Minute, 6 * time.Minute} {
		events = append(events, metrics.Count(metrics.CallVolume, s.AccountID, s.ProjectID, base.Add(d)))
	}
	mustRecord(t, st, events...)
	m := func(n int) time.Time { return base.Add(time.Duration(n) * time.Minute) }
	wantMinutes(t, "[base, base+5m)", mustRead(t, st, s, m(0), m(5)), m(0), m(4))
	wantMinutes(t, "[base-1m, base+6m)", mustRead(t, st, s, m(-1), m(6)), m(-1), m(0), m(4), m(5))
	wantMinutes(t, "[base+30s, base+5m+30s)", mustRead(t, st, s, m(0).Add(30*time.Second), m(5).Add(30*time.Second)), m(4), m(5))
	wantMinutes(t, "[base+4m, base+4m+1ns)", mustRead(t, st, s, m(4), m(4).Add(time.Nanosecond)), m(4))
	wantMinutes(t, "[base+1m, base+4m)", mustRead(t, st, s, m(1), m(4)))
	// Times in another zone name the same instants.
	zone := time.FixedZone("UTC-5", -5*3600)
	wantMinutes(t, "[base, base+5m) in UTC-5", mustRead(t, st, s, m(0).In(zone), m(5).In(zone)), m(0), m(4))
}

func testMetricsScopes(t *testing.T, st buckets.Store) {
	base := metricsBase()
	a := newScope(false)
	// Similar IDs: one is a prefix of the other.
	p1 := metrics.Scope{AccountID: a.AccountID, ProjectID: "proj_1"}
	p11 := metrics.Scope{AccountID: a.AccountID, ProjectID: "proj_11"}
	b := metrics.Scope{AccountID: a.AccountID + "1"}
	bp1 := metrics.Scope{AccountID: b.AccountID, ProjectID: "proj_1"}
	add := func(s metrics.Scope, n int) {
		events := make([]metrics.Event, n)
		for i := range events {
			events[i] = metrics.Count(metrics.APIErrors, s.AccountID, s.ProjectID, base)
		}
		mustRecord(t, st, events...)
	}
	add(p1, 1)
	add(p11, 2)
	add(a, 4)
	add(bp1, 8)
	for _, tc := range []struct {
		s    metrics.Scope
		want int64
	}{
		{a, 7}, {p1, 1}, {p11, 2}, {b, 8}, {bp1, 8},
		{metrics.Scope{AccountID: a.AccountID, ProjectID: "proj_2"}, 0},
		{metrics.Scope{AccountID: voiceops.NewID(voiceops.PrefixAccount)}, 0},
	} {
		got := mustRead(t, st, tc.s, base, base.Add(time.Minute))
		var n int64
		for _, x := range got {
			n += x.Counts.Of(metrics.APIErrors)
		}
		if n != tc.want || (tc.want == 0) != (len(got) == 0) {
			t.Errorf("scope %v: %d api_errors in %d buckets, want %d", tc.s, n, len(got), tc.want)
		}
	}
}

func testMetricsExpiry(t *testing.T, st buckets.Store) {
	now := time.Now()
	s := newScope(false)
	old := metrics.Minute(now.Add(-metrics.Retention - time.Minute))
	oldest := metrics.Minute(now.Add(-3 * time.Hour))
	live := metrics.Minute(now.Add(-metrics.Retention + 5*time.Minute))
	mustRecord(t, st,
		metrics.Count(metrics.CallVolume, s.AccountID, "", oldest),
		metrics.Count(metrics.CallVolume, s.AccountID, "", old),
		metrics.Count(metrics.CallVolume, s.AccountID, "", live),
	)
	wantMinutes(t, "the last 4 hours", mustRead(t, st, s, now.Add(-4*time.Hour), now.Add(time.Minute)), live)
}

func testMetricsCopies(t *testing.T, st buckets.Store) {
	base := metricsBase()
	s := newScope(false)
	buckets := buckets.Aggregate([]metrics.Event{{AccountID: s.AccountID, Kind: metrics.TurnLatency, Value: 100, At: base}})
	if err := st.AddBuckets(ctx(t), buckets); err != nil {
		t.Fatal(err)
	}
	// The caller changes what it passed, and what it read.
	_ = buckets[0].Latency.Add(5000)
	buckets[0].Counts.Set(metrics.TurnLatency, 99)
	got := mustRead(t, st, s, base, base.Add(time.Minute))
	if len(got) != 1 || got[0].Latency.GetCount() != 1 {
		t.Fatalf("the store shares the sketch it was given: %+v", got)
	}
	_ = got[0].Latency.Add(5000)
	again := mustRead(t, st, s, base, base.Add(time.Minute))
	if len(again) != 1 || again[0].Latency.GetCount() != 1 || again[0].Counts.Of(metrics.TurnLatency) != 1 {
		t.Errorf("the store shares the sketch it returned: %+v", again)
	}
}

func testMetricsInvalid(t *testing.T, st buckets.Store) {
	base := metricsBase()
	s := newScope(false)
	good := buckets.Aggregate([]metrics.Event{metrics.Count(metrics.APIErrors, s.AccountID, "", base)})
	for name, bad := range map[string]buckets.Bucket{
		"no account":             {Minute: base},
		"minute not whole":       {Scope: s, Minute: base.Add(time.Second)},
		"no minute":              {Scope: s},
		"malformed project":      {Scope: metrics.Scope{AccountID: s.AccountID, ProjectID: "a#b"}, Minute: base},
		"malformed account":      {Scope: metrics.Scope{AccountID: "M#x"}, Minute: base},
		"latencies out of range": {Scope: s, Minute: base, Latency: tinySketch()},
	} {
		if err := st.AddBuckets(ctx(t), append(append([]buckets.Bucket{}, good...), bad)); err == nil {
			t.Errorf("%s: AddBuckets accepted an invalid bucket", name)
		}
	}
	if got := mustRead(t, st, s, base, base.Add(time.Minute)); len(got) != 0 {
		t.Errorf("a refused AddBuckets stored %v", minutesOf(got))
	}
}

// tinySketch holds a value below the range of latencies (Bucket.Check).
func tinySketch() *buckets.Sketch {
	s := buckets.NewSketch()
	_ = s.Add(1e-9)
	return s
}

func testMetricsMany(t *testing.T, st buckets.Store) {
	base := metrics.Minute(time.Now()).Add(-90 * time.Minute)
	s := newScope(true)
	var events []metrics.Event
	for i := range 90 {
		at := base.Add(time.Duration(i) * time.Minute)
		events = append(events,
			metrics.Event{AccountID: s.AccountID, ProjectID: s.ProjectID, Kind: metrics.TurnLatency, Value: float64(10 + i), At: at},
			metrics.Count(metrics.CallVolume, s.AccountID, s.ProjectID, at.Add(30*time.Second)))
	}
	mustRecord(t, st, events...) // 180 buckets in one call
	for _, sc := range []metrics.Scope{s, {AccountID: s.AccountID}} {
		got := mustRead(t, st, sc, base, base.Add(90*time.Minute))
		if len(got) != 90 {
			t.Fatalf("%v: %d buckets, want 90", sc, len(got))
		}
		sum := buckets.Summarize(got, base, base.Add(90*time.Minute))
		if want := (buckets.NewCounts(map[metrics.Kind]int64{metrics.Activity: 180, metrics.TurnLatency: 90, metrics.CallVolume: 90})); sum.Counts != want {
			t.Errorf("%v: counts %+v, want %+v", sc, sum.Counts, want)
		}
		if p50, ok := sum.Value(voiceops.MetricTurnLatencyP50); !ok || p50 < 53 || p50 > 55 {
			t.Errorf("%v: p50 %d, %v; want about 54", sc, p50, ok)
		}
	}
}

func testMetricsConcurrent(t *testing.T, st buckets.Store) {
	base := metricsBase()
	s := newScope(true)
	const writers, each = 20, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			events := make([]metrics.Event, each)
			for i := range events {
				events[i] = metrics.Event{AccountID: s.AccountID, ProjectID: s.ProjectID, Kind: metrics.TurnLatency,
					Value: float64(w*each + i), At: base.Add(time.Duration(i) * time.Second)}
			}
			errs <- (&buckets.Recorder{Store: st}).Record(context.Background(), events...)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Record: %v", err)
		}
	}
	for _, sc := range []metrics.Scope{s, {AccountID: s.AccountID}} {
		got := mustRead(t, st, sc, base, base.Add(time.Minute))
		if len(got) != 1 || got[0].Counts.Of(metrics.TurnLatency) != writers*each || got[0].Counts.Of(metrics.Activity) != writers*each {
			t.Errorf("%v: %d concurrent events recorded as %+v", sc, writers*each, got)
		}
	}
}
