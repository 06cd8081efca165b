package storetest

import (
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// RunRollups runs the contract of series.HourStore. newStores returns a
// minute store and an hour store over the same storage (the roll-ups live
// beside the minutes: a minutes read must never see them). Both use the
// system clock.
func RunRollups(t *testing.T, newStores func(t *testing.T) (buckets.Store, series.HourStore)) {
	t.Helper()
	t.Run("PutAndRead", func(t *testing.T) { testRollupsPutAndRead(t, newStores) })
	t.Run("Expiry", func(t *testing.T) { testRollupsExpiry(t, newStores) })
	t.Run("BesideMinutes", func(t *testing.T) { testRollupsBesideMinutes(t, newStores) })
	t.Run("EveryKind", func(t *testing.T) { testRollupsEveryKind(t, newStores) })
}

// hourBucket returns an hour's roll-up of scope s: n API errors and turns
// of latencies ms.
func hourBucket(s metrics.Scope, hour time.Time, n int, ms ...float64) buckets.Bucket {
	var events []metrics.Event
	for range n {
		events = append(events, metrics.Count(metrics.APIErrors, s.AccountID, s.ProjectID, hour))
	}
	for _, v := range ms {
		events = append(events, metrics.Event{AccountID: s.AccountID, ProjectID: s.ProjectID, Kind: metrics.TurnLatency, Value: v, At: hour})
	}
	for _, b := range buckets.Aggregate(events) {
		if b.Scope == s {
			return b
		}
	}
	return buckets.Bucket{Scope: s, Minute: hour} // no events: an empty roll-up
}

func testRollupsPutAndRead(t *testing.T, newStores func(t *testing.T) (buckets.Store, series.HourStore)) {
	_, hs := newStores(t)
	s, other := newScope(true), newScope(false)
	h0 := time.Now().UTC().Truncate(time.Hour).Add(-72 * time.Hour)
	put := []buckets.Bucket{
		hourBucket(s, h0, 2, 100, 300),
		hourBucket(s, h0.Add(time.Hour), 0),
		hourBucket(s, h0.Add(2*time.Hour), 5),
		hourBucket(other, h0, 7),
	}
	mustNil(t, "PutHours", hs.PutHours(ctx(t), put))
	got, err := hs.ReadHours(ctx(t), s, h0, h0.Add(2*time.Hour))
	mustNil(t, "ReadHours", err)
	wantMinutes(t, "ReadHours [h0, h0+2h)", got, h0, h0.Add(time.Hour))
	if len(got) == 2 {
		if got[0].Counts != put[0].Counts || got[0].Latency == nil || got[0].Latency.GetCount() != 2 || got[0].Scope != s {
			t.Errorf("roll-up of h0 = %+v, want %+v", got[0], put[0])
		}
		if !got[1].Counts.IsZero() || got[1].Latency != nil {
			t.Errorf("the empty roll-up read back as %+v", got[1])
		}
	}
	// Rolling an hour up again replaces it.
	mustNil(t, "PutHours again", hs.PutHours(ctx(t), []buckets.Bucket{hourBucket(s, h0, 3)}))
	got, err = hs.ReadHours(ctx(t), s, h0, h0.Add(time.Hour))
	mustNil(t, "ReadHours after a replace", err)
	if len(got) != 1 || got[0].Counts.Of(metrics.APIErrors) != 3 || got[0].Latency != nil {
		t.Errorf("after a second roll-up of h0: %+v, want 3 api errors and no latency", got)
	}
	got, err = hs.ReadHours(ctx(t), other, h0.Add(-time.Hour), h0.Add(3*time.Hour))
	mustNil(t, "ReadHours of another scope", err)
	if len(got) != 1 || got[0].Counts.Of(metrics.APIErrors) != 7 {
		t.Errorf("the other scope's roll-ups: %+v", got)
	}
	// An invalid bucket writes nothing.
	bad := []buckets.Bucket{hourBucket(s, h0.Add(5*time.Hour), 1), {Scope: s, Minute: h0.Add(30 * time.Second)}}
	if err := hs.PutHours(ctx(t), bad); err == nil {
		t.Errorf("PutHours of an untruncated hour: no error")
	}
	got, _ = hs.ReadHours(ctx(t), s, h0.Add(5*time.Hour), h0.Add(6*time.Hour))
	if len(got) != 0 {
		t.Errorf("a refused PutHours stored %+v", got)
	}
}

func testRollupsExpiry(t *testing.T, newStores func(t *testing.T) (buckets.Store, series.HourStore)) {
	_, hs := newStores(t)
	s := newScope(false)
	now := time.Now().UTC()
	old := now.Truncate(time.Hour).Add(-voiceops.MetricHourRetention - time.Hour)
	live := now.Truncate(time.Hour).Add(-voiceops.MetricHourRetention + 2*time.Hour)
	mustNil(t, "PutHours", hs.PutHours(ctx(t), []buckets.Bucket{hourBucket(s, old, 1), hourBucket(s, live, 1)}))
	got, err := hs.ReadHours(ctx(t), s, old.Add(-time.Hour), now)
	mustNil(t, "ReadHours", err)
	wantMinutes(t, "roll-ups of the last 31 days", got, live)
}

func testRollupsBesideMinutes(t *testing.T, newStores func(t *testing.T) (buckets.Store, series.HourStore)) {
	ms, hs := newStores(t)
	s := newScope(true)
	hour := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	minute := metrics.Minute(time.Now()).Add(-10 * time.Minute)
	mustRecord(t, ms, metrics.Count(metrics.APIErrors, s.AccountID, s.ProjectID, minute))
	mustNil(t, "PutHours", hs.PutHours(ctx(t), []buckets.Bucket{hourBucket(s, hour, 9)}))
	wantMinutes(t, "minutes beside a roll-up", mustRead(t, ms, s, hour.Add(-time.Hour), time.Now().Add(time.Hour)), minute)
	got, err := hs.ReadHours(ctx(t), s, hour.Add(-time.Hour), time.Now().Add(time.Hour))
	mustNil(t, "ReadHours", err)
	wantMinutes(t, "roll-ups beside minutes", got, hour)
}
