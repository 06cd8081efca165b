package storetest

import (
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// EveryKind returns events of every metric kind (voiceops' table) in scope
// s, dated within the minute of at, and the counts they make in s and in
// its account's scope (the same counts). Each kind gets its own amount, so
// that a store that drops a kind, or swaps two, reads back other counts.
// The counts are worked out from the table's value types, not by
// shared/metrics/buckets.
func EveryKind(s metrics.Scope, at time.Time) ([]metrics.Event, buckets.Counts) {
	minute := metrics.Minute(at)
	var events []metrics.Event
	byKind := map[metrics.Kind]int64{}
	for i, d := range voiceops.MetricKindDefs() {
		n := i + 1 // events of the kind
		for j := range n {
			e := metrics.Event{AccountID: s.AccountID, ProjectID: s.ProjectID, Kind: d.Kind, At: minute.Add(time.Duration(i*7+j) * time.Second)}
			switch d.Value {
			case voiceops.ValueCount:
				e.Value = float64(10*(i+1) + j) // n distinct values, summed
				byKind[d.Kind] += int64(e.Value)
			case voiceops.ValueLatency:
				e.Value = float64(100 * (j + 1))
				byKind[d.Kind]++ // the latency kind counts its events
			}
			events = append(events, e)
			byKind[metrics.Activity]++ // every event is activity
		}
	}
	return events, buckets.NewCounts(byKind)
}

// testMetricsEveryKind records every kind of event, in a minute the store
// takes as closed (half an hour ago) and in the current one, and reads each
// kind's count back, in the project's scope and the account's; then every
// rule metric over them. A store that loses a kind's counts (its write,
// its read or its compaction) fails here, whatever the kind.
func testMetricsEveryKind(t *testing.T, st buckets.Store) {
	p := newScope(true)
	acct := metrics.Scope{AccountID: p.AccountID}
	now := time.Now()
	for _, at := range []time.Time{metricsBase(), now} {
		events, want := EveryKind(p, at)
		mustRecord(t, st, events...)
		minute := metrics.Minute(at)
		for _, s := range []metrics.Scope{p, acct} {
			got := mustRead(t, st, s, minute, minute.Add(time.Minute))
			if len(got) != 1 {
				t.Errorf("%v %s: %d buckets, want 1", s, minute.Format("15:04"), len(got))
				continue
			}
			for _, k := range voiceops.MetricKinds {
				if got[0].Counts.Of(k) != want.Of(k) {
					t.Errorf("%v %s: the %s count read back is %d, want %d", s, minute.Format("15:04"), k, got[0].Counts.Of(k), want.Of(k))
				}
			}
			// Every rule metric has a value: the sum of a count kind, a
			// percentile of the latencies 100 to 100*n.
			sum := buckets.Summarize(got, minute, minute.Add(time.Minute))
			for _, m := range voiceops.Metrics {
				src, _ := m.Source()
				v, ok := sum.Value(m)
				switch {
				case !ok:
					t.Errorf("%v: %s has no value", s, m)
				case src.Quantile == 0 && v != want.Of(src.Kind):
					t.Errorf("%v: %s = %d, want %d", s, m, v, want.Of(src.Kind))
				case src.Quantile > 0 && (v < 99 || v > 101*want.Of(src.Kind)):
					t.Errorf("%v: %s = %d, want a latency from 100 to %d ms", s, m, v, 100*want.Of(src.Kind))
				}
			}
		}
	}
}

// testRollupsEveryKind stores a roll-up counting every kind and reads each
// kind's count back.
func testRollupsEveryKind(t *testing.T, newStores func(t *testing.T) (buckets.Store, series.HourStore)) {
	_, hs := newStores(t)
	s := newScope(true)
	hour := time.Now().UTC().Truncate(time.Hour).Add(-5 * time.Hour)
	events, want := EveryKind(s, hour)
	var put []buckets.Bucket
	for _, b := range buckets.Aggregate(events) {
		if b.Scope == s {
			put = append(put, b)
		}
	}
	mustNil(t, "PutHours", hs.PutHours(ctx(t), put))
	got, err := hs.ReadHours(ctx(t), s, hour, hour.Add(time.Hour))
	mustNil(t, "ReadHours", err)
	if len(got) != 1 {
		t.Fatalf("%d roll-ups, want 1", len(got))
	}
	for _, k := range voiceops.MetricKinds {
		if got[0].Counts.Of(k) != want.Of(k) {
			t.Errorf("the roll-up's %s count read back is %d, want %d", k, got[0].Counts.Of(k), want.Of(k))
		}
	}
	if percentiles(got[0]) != percentiles(put[0]) {
		t.Errorf("roll-up sketch %s, want %s", percentiles(got[0]), percentiles(put[0]))
	}
}
