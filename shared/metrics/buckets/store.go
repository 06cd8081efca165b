package buckets

import (
	"context"
	"fmt"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
)

// Store keeps buckets for metrics.Retention. Implementations: shared/store/memory and
// shared/store/dynamo/metricstore, held to one contract by shared/store/storetest.RunMetrics.
type Store interface {
	// AddBuckets adds buckets to what is stored: counts add up and sketches
	// merge with those already stored for the same scope and minute.
	// Buckets older than metrics.Retention may be dropped.
	AddBuckets(ctx context.Context, buckets []Bucket) error
	// ReadBuckets returns the buckets of scope s whose minute is in
	// [from, to), one per minute (everything added for it merged), in
	// ascending order of minute. Only that scope: an account's scope holds
	// its projects' events already (metrics.Event.Scopes).
	ReadBuckets(ctx context.Context, s metrics.Scope, from, to time.Time) ([]Bucket, error)
}

// Recorder records events. It is synchronous: when Record returns nil the
// events are stored, so nothing acknowledged is lost.
type Recorder struct {
	Store Store
}

// Record checks every event (metrics.Event.Check), aggregates them into buckets and
// adds the buckets to the store in one call. An invalid event records
// nothing.
func (r *Recorder) Record(ctx context.Context, events ...metrics.Event) error {
	if len(events) == 0 {
		return nil
	}
	for i, e := range events {
		if err := e.Check(); err != nil {
			return fmt.Errorf("metrics: event %d: %w", i, err)
		}
	}
	return r.Store.AddBuckets(ctx, Aggregate(events))
}
