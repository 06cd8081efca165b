package metricstore_test

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/testsupport/capacity"
)

// TestMetricsCapacity is the metric half of the capacity test: what a
// metric event costs to write, and what an evaluation of a scope with a
// 60-minute window costs to read, with 1, 100 and 10,000 events in the
// window, each event a write of its own (the worst case: nothing batched),
// their latencies spread as turn latencies are (about 80 sketch bins a
// minute). Request units are computed from item sizes as DynamoDB bills
// them (shared/testsupport/capacity; moto reports none). The evaluator
// reads as the stream wakes it: at least once a minute while data comes
// (each read compacts the minutes closed since the last), so the figures
// are of a read in a steady stream of them. Bounds: the items an
// evaluation reads are at most the window's minutes plus the shards of
// the open minutes, whatever the number of events.
func TestMetricsCapacity(t *testing.T) {
	c := client(t)
	rec := capacity.New(c, tables.PK, tables.SK)
	const window = 60 * time.Minute
	maxItems := int(window/time.Minute) + 2 + 3*dynamo.MetricShards // the window's minutes, the edge minutes, open shards
	const counted1 = 30                                             // events written one by one through the recording client
	for _, n := range []int{1, 100, 10_000} {
		table := newTable(t, c)
		start := metrics.Minute(time.Now()).Add(-80 * time.Minute)
		now := start
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		setNow := func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }
		s := newMetricScope()
		plain := &buckets.Recorder{Store: metricstore.NewWithClock(c, table, clock)}
		counted := &buckets.Recorder{Store: metricstore.NewWithClock(rec, table, clock)}
		reader := metricstore.NewWithClock(rec, table, clock)
		rnd := rand.New(rand.NewPCG(uint64(n), 7))
		event := func(at time.Time) metrics.Event {
			ms := math.Exp(6.7 + 0.5*rnd.NormFloat64()) // about 800 ms, a factor 1.6 either way
			return metrics.Event{AccountID: s.AccountID, ProjectID: s.ProjectID, Kind: metrics.TurnLatency, Value: ms, At: at}
		}
		// The events, evenly over the window's 60 minutes, read every
		// third minute (the stream's evaluations read at least once a
		// minute; fewer reads here keep moto's part short).
		var writes capacity.Tally
		counting := 0
		for m := range 60 {
			minute := start.Add(time.Duration(m) * time.Minute)
			k := n*(m+1)/60 - n*m/60
			var batch []metrics.Event
			for i := range k {
				batch = append(batch, event(minute.Add(time.Duration(i)*time.Minute/time.Duration(k+1))))
			}
			// The first 30 events are written through the recording
			// client, one by one. Past them, moto's speed (about 20 ms a
			// write here) makes 10,000 single writes too slow, and moto
			// loses about 1 in 3,000 concurrent updates of one partition
			// (it does not isolate them; DynamoDB's UpdateItem is atomic),
			// so the rest go uncounted, in 2 writes a minute: the items a
			// read finds hold the same sums however the minute's events
			// were written, so the read measured is the same.
			var rest []metrics.Event
			for _, e := range batch {
				setNow(e.At)
				if counting < counted1 {
					counting++
					if err := counted.Record(t.Context(), e); err != nil {
						t.Fatal(err)
					}
					continue
				}
				rest = append(rest, e)
			}
			for q := range 2 {
				part := rest[len(rest)*q/2 : len(rest)*(q+1)/2]
				if len(part) == 0 {
					continue
				}
				setNow(part[len(part)-1].At)
				if err := plain.Record(t.Context(), part...); err != nil {
					t.Fatal(err)
				}
			}
			if m == 0 || counting <= counted1 {
				writes = add(writes, rec.Take())
			}
			if m%3 != 2 {
				continue
			}
			setNow(minute.Add(59 * time.Second))
			from, to := buckets.Window(clock(), window)
			if _, err := reader.ReadBuckets(t.Context(), s, from, to); err != nil {
				t.Fatal(err)
			}
			rec.Take()
		}
		// The evaluation measured: a read at the end of the stream (after one
		// at the same instant), and one a minute later, which compacts the
		// minute closed meanwhile.
		evalAt := start.Add(60*time.Minute + 5*time.Second)
		setNow(evalAt)
		from, to := buckets.Window(evalAt, window)
		if _, err := reader.ReadBuckets(t.Context(), s, from, to); err != nil {
			t.Fatal(err) // it compacts minute 58, closed at 60:00
		}
		rec.Take()
		got, err := reader.ReadBuckets(t.Context(), s, from, to)
		if err != nil {
			t.Fatal(err)
		}
		steady := rec.Take()
		setNow(evalAt.Add(time.Minute))
		from2, to2 := buckets.Window(clock(), window)
		if _, err := reader.ReadBuckets(t.Context(), s, from2, to2); err != nil {
			t.Fatal(err)
		}
		closing := rec.Take()
		if sum := buckets.Summarize(got, from, to); sum.Counts.Of(metrics.TurnLatency) != int64(n) {
			t.Errorf("%d events: the evaluation counts %d turns", n, sum.Counts.Of(metrics.TurnLatency))
		}
		perEvent := writes.WRU / float64(min(n, counted1)) / 2 // two scopes per event
		t.Logf("%6d events: write %.2f WRU per event and scope (%d calls); evaluation %d items, %.1f RRU, %d calls; with a compaction %d items, %.1f RRU, %.0f WRU",
			n, perEvent, writes.Calls, steady.ItemsRead, steady.RRU, steady.Calls, closing.ItemsRead, closing.RRU, closing.WRU)
		if steady.ItemsRead > maxItems || closing.ItemsRead > maxItems {
			t.Errorf("%d events: an evaluation read %d and %d items, want at most %d", n, steady.ItemsRead, closing.ItemsRead, maxItems)
		}
		if steady.Calls > 2 || closing.Calls > 3 {
			t.Errorf("%d events: %d and %d calls, want 2 Queries (and a compaction)", n, steady.Calls, closing.Calls)
		}
		if steady.RRU > 32 || closing.RRU > 32 {
			t.Errorf("%d events: %.1f and %.1f RRU, want at most 32 (60 minutes of about 1.5 KB, strongly consistent)", n, steady.RRU, closing.RRU)
		}
		if perEvent > 2 {
			t.Errorf("%d events: %.2f WRU per event and scope, want at most 2", n, perEvent)
		}
	}
}

func add(a, b capacity.Tally) capacity.Tally {
	return capacity.Tally{Calls: a.Calls + b.Calls, ItemsRead: a.ItemsRead + b.ItemsRead, ItemsWrote: a.ItemsWrote + b.ItemsWrote, RRU: a.RRU + b.RRU, WRU: a.WRU + b.WRU}
}
