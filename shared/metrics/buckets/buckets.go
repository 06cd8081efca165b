// Package buckets aggregates metric events (shared/metrics) into one-minute
// buckets per scope, with exact counts and a DDSketch of the turn latencies,
// and summarizes a window of them for the evaluator. It is apart from
// shared/metrics because it links sketches-go and protobuf: a function that
// only reports events (or counts) never pays for them.
package buckets

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// minLatencyMS: a latency below one microsecond counts as 0 ms. It bounds
// the sketch's range, and so the size of a stored bucket.
const minLatencyMS = 0.001

// Counts are the exact counts of a bucket or of a window: one per metric
// kind, in the order of voiceops.MetricKinds (the table they derive from,
// so a new kind is counted without a change here). A count kind's is the
// sum of its values; a latency kind's is how many latencies (turns); that
// of activity is how many events of any kind (the scope reported
// something). Counts are comparable with ==.
type Counts struct {
	n [voiceops.NumMetricKinds]int64
}

// NewCounts returns the counts byKind; it panics on an unknown kind (it is
// for counts written in code).
func NewCounts(byKind map[metrics.Kind]int64) Counts {
	var c Counts
	for k, n := range byKind {
		if !c.Set(k, n) {
			panic(fmt.Sprintf("buckets.NewCounts: unknown metric kind %q", k))
		}
	}
	return c
}

// Of returns the count of kind k (0 for an unknown kind).
func (c Counts) Of(k metrics.Kind) int64 {
	if i, ok := k.Index(); ok {
		return c.n[i]
	}
	return 0
}

// Set sets the count of kind k; false (and nothing set) for an unknown
// kind.
func (c *Counts) Set(k metrics.Kind, n int64) bool {
	i, ok := k.Index()
	if ok {
		c.n[i] = n
	}
	return ok
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	for i := range c.n {
		c.n[i] += o.n[i]
	}
}

// IsZero reports whether nothing at all was counted.
func (c Counts) IsZero() bool { return c == Counts{} }

// String lists the non-zero counts, such as "activity=3 turn_latency=2"
// (test failures print it).
func (c Counts) String() string {
	var b strings.Builder
	for i, k := range voiceops.MetricKinds {
		if c.n[i] != 0 {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%s=%d", k, c.n[i])
		}
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// activity is the index of the activity count, which every event adds to.
var activity, _ = metrics.Activity.Index()

// Bucket is what one scope reported in one minute.
type Bucket struct {
	Scope  metrics.Scope
	Minute time.Time // truncated to the minute, UTC
	Counts Counts
	// Latency holds the turn latencies (ms), the latency kind's values
	// (one such kind: voiceops' table); nil when there were none.
	Latency *Sketch
}

// add counts one event into the bucket, as its kind's value says. Values
// out of range are clamped: metrics.Event.Check refuses them before they
// get here.
func (b *Bucket) add(e metrics.Event) {
	b.Counts.n[activity]++
	i, value := e.Kind.Lookup()
	switch value {
	case voiceops.ValueLatency: // the one latency kind: the sketch is its
		v := e.Value
		if !(v >= minLatencyMS) { // also NaN
			v = 0
		}
		v = min(v, metrics.MaxLatencyMS)
		if b.Latency == nil {
			b.Latency = NewSketch()
		}
		_ = b.Latency.Add(v) // within the sketch's range by construction
		b.Counts.n[i]++
	case voiceops.ValueCount:
		if e.Value > 0 { // also false for NaN
			b.Counts.n[i] += int64(math.Round(min(e.Value, metrics.MaxCount)))
		}
	}
}

// merge adds o into b; b's sketch becomes its own copy if it had none.
func (b *Bucket) merge(o Bucket) {
	b.Counts.Add(o.Counts)
	if o.Latency == nil || o.Latency.IsEmpty() {
		return
	}
	if b.Latency == nil {
		b.Latency = o.Latency.Copy()
		return
	}
	// Every sketch here has the one mapping (Check), so merging cannot fail.
	_ = b.Latency.MergeWith(o.Latency)
}

// MergeFrom adds o's counts and latencies to b in place: b's sketch
// changes and takes in a copy of o's (o stays its caller's). Both must
// have passed Check and share scope and minute; a store merges a new
// bucket into its own so, without copying what it holds.
func (b *Bucket) MergeFrom(o Bucket) { b.merge(o) }

// Clone returns a deep copy of b.
func (b Bucket) Clone() Bucket {
	if b.Latency != nil {
		b.Latency = b.Latency.Copy()
	}
	return b
}

// Check reports whether b can be stored: an account, a minute that is
// truncated and non-zero, and a sketch (if any) of this package's accuracy
// holding latencies from 0 to metrics.MaxLatencyMS only (as Aggregate makes them).
func (b Bucket) Check() error {
	switch {
	case !voiceops.ValidTenantID(b.Scope.AccountID):
		return fmt.Errorf("metrics: bucket with account ID %q", b.Scope.AccountID)
	case b.Scope.ProjectID != "" && !voiceops.ValidTenantID(b.Scope.ProjectID):
		return fmt.Errorf("metrics: bucket with project ID %q", b.Scope.ProjectID)
	case b.Minute.IsZero() || !b.Minute.Equal(metrics.Minute(b.Minute)):
		return fmt.Errorf("metrics: bucket minute %v is not truncated to the minute", b.Minute)
	case b.Latency != nil:
		if err := checkSketch(b.Latency); err != nil {
			return fmt.Errorf("metrics: bucket sketch: %w", err)
		}
	}
	return nil
}

// Aggregate merges events into one bucket per scope and minute: a batch of
// a thousand events becomes a handful of buckets, which is what the stores
// write. The buckets are ordered by scope, then minute.
func Aggregate(events []metrics.Event) []Bucket {
	type key struct {
		scope  metrics.Scope
		minute int64
	}
	index := map[key]int{}
	var out []Bucket
	for _, e := range events {
		minute := metrics.Minute(e.At)
		for _, s := range e.Scopes() {
			k := key{s, minute.Unix()}
			i, ok := index[k]
			if !ok {
				i = len(out)
				index[k] = i
				out = append(out, Bucket{Scope: s, Minute: minute})
			}
			out[i].add(e)
		}
	}
	sortBuckets(out)
	return out
}

// Combine merges buckets of the same scope and minute, ordered by scope
// then minute. It never changes its input: the result shares no sketch with
// it. It fails when a bucket does not pass Check.
func Combine(buckets []Bucket) ([]Bucket, error) {
	type key struct {
		scope  metrics.Scope
		minute int64
	}
	index := map[key]int{}
	var out []Bucket
	for _, b := range buckets {
		if err := b.Check(); err != nil {
			return nil, err
		}
		k := key{b.Scope, b.Minute.Unix()}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, Bucket{Scope: b.Scope, Minute: b.Minute.UTC()})
		}
		out[i].merge(b)
	}
	sortBuckets(out)
	return out, nil
}

func sortBuckets(bs []Bucket) {
	slices.SortFunc(bs, func(a, b Bucket) int {
		return cmp.Or(metrics.CompareScopes(a.Scope, b.Scope), a.Minute.Compare(b.Minute))
	})
}
