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
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// minLatencyMS: a latency below one microsecond counts as 0 ms. It bounds
// the sketch's range, and so the size of a stored bucket.
const minLatencyMS = 0.001

// Counts are the exact counts of a bucket or of a window.
type Counts struct {
	Activity       int64 // events of every kind: the scope reported something
	Turns          int64 // turn latencies (the sketch's count)
	APIErrors      int64
	FunctionErrors int64
	CallCrashes    int64
	CallVolume     int64
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Activity += o.Activity
	c.Turns += o.Turns
	c.APIErrors += o.APIErrors
	c.FunctionErrors += o.FunctionErrors
	c.CallCrashes += o.CallCrashes
	c.CallVolume += o.CallVolume
}

// IsZero reports whether nothing at all was counted.
func (c Counts) IsZero() bool { return c == Counts{} }

// of returns the count of a count kind.
func (c *Counts) of(k metrics.Kind) *int64 {
	switch k {
	case metrics.APIErrors:
		return &c.APIErrors
	case metrics.FunctionErrors:
		return &c.FunctionErrors
	case metrics.CallCrashes:
		return &c.CallCrashes
	case metrics.CallVolume:
		return &c.CallVolume
	}
	return nil
}

// Bucket is what one scope reported in one minute.
type Bucket struct {
	Scope  metrics.Scope
	Minute time.Time // truncated to the minute, UTC
	Counts Counts
	// Latency holds the turn latencies (ms); nil when there were none.
	Latency *Sketch
}

// add counts one event into the bucket. Values out of range are clamped:
// metrics.Event.Check refuses them before they get here.
func (b *Bucket) add(e metrics.Event) {
	b.Counts.Activity++
	switch {
	case e.Kind == metrics.TurnLatency:
		v := e.Value
		if !(v >= minLatencyMS) { // also NaN
			v = 0
		}
		v = min(v, metrics.MaxLatencyMS)
		if b.Latency == nil {
			b.Latency = NewSketch()
		}
		_ = b.Latency.Add(v) // within the sketch's range by construction
		b.Counts.Turns++
	case e.Kind.IsCount():
		if e.Value > 0 { // also false for NaN
			*b.Counts.of(e.Kind) += int64(math.Round(min(e.Value, metrics.MaxCount)))
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
