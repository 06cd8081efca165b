package buckets

import (
	"math"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Window returns the buckets an evaluation at the instant evalAt counts for
// a window of d: every minute that overlaps (evalAt - d, evalAt], that is
// the minutes from the one holding evalAt - d through the one holding
// evalAt, plus buckets dated up to metrics.MaxFuture ahead (a producer's
// clock a little fast: the event is stored, so it counts). An event thus
// counts from the moment it is stored, for at least d and less than d plus
// one minute (the buckets' granularity): a 5-minute rule sees an event of
// 10:00:59 until 10:06:00, and one of 10:00:00 until 10:06:00 too. Both
// ends are whole minutes, the result is in UTC, and [from, to) is what
// Summarize and buckets.Store.ReadBuckets take.
func Window(evalAt time.Time, d time.Duration) (from, to time.Time) {
	return metrics.Minute(evalAt.Add(-d)), metrics.Minute(evalAt.Add(metrics.MaxFuture)).Add(time.Minute)
}

// Summary is what a scope reported over a window.
type Summary struct {
	Counts Counts
	// Latency holds every turn latency of the window (ms); nil when none.
	Latency *Sketch
}

// Summarize sums the buckets of one scope whose minute is in [from, to):
// exact counts, and one sketch merged from theirs. The buckets are not
// changed, so one read can be summarised over several windows.
func Summarize(buckets []Bucket, from, to time.Time) Summary {
	var b Bucket
	for _, x := range buckets {
		if !x.Minute.Before(from) && x.Minute.Before(to) {
			b.merge(x)
		}
	}
	return Summary{Counts: b.Counts, Latency: b.Latency}
}

// Active reports whether the scope reported anything at all in the window:
// without activity every metric is no_data.
func (s Summary) Active() bool {
	return !s.Counts.IsZero() || (s.Latency != nil && !s.Latency.IsEmpty())
}

// Value returns the value of metric m over the window, and false (no_data)
// when nothing was reported for the scope in the window, or, for a latency
// metric, when there was no turn. With activity, a count metric is the sum
// of the window's buckets, possibly 0. A latency metric is the 50th or 95th
// percentile (nearest rank) of the window's turn latencies, rounded to the
// nearest integer millisecond, within metrics.RelativeAccuracy of the exact one.
func (s Summary) Value(m voiceops.Metric) (value int64, ok bool) {
	src, known := m.Source()
	if !known || !s.Active() {
		return 0, false
	}
	if src.Quantile > 0 { // a latency kind's: the sketch is its
		return s.percentile(src.Quantile)
	}
	return s.Counts.Of(src.Kind), true
}

// percentile returns the q-quantile of the latencies by the nearest-rank
// method: the k-th smallest of the n latencies, k = ceil(q*n), so that at
// least q of the turns took at most that long (p95 of {0, 2000} is 2000).
// DDSketch ranks by q*(n-1), rounding down; the rank is translated so that
// it lands inside the k-th latency's unit of count.
func (s Summary) percentile(q float64) (int64, bool) {
	if s.Latency == nil || s.Latency.IsEmpty() {
		return 0, false
	}
	n := s.Latency.GetCount()
	k := max(math.Ceil(q*n-1e-9), 1) // 1-based; the epsilon absorbs q*n's rounding
	sketchQ := 0.0
	if n > 1 {
		sketchQ = min((k-0.5)/(n-1), 1)
	}
	v, err := s.Latency.GetValueAtQuantile(sketchQ)
	if err != nil || math.IsNaN(v) {
		return 0, false
	}
	return int64(math.Round(v)), true
}
