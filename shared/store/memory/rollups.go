package memory

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Rollups is the in-memory store of the hourly roll-ups (the series.HourStore
// that storetest.RunRollups holds it to):
// one bucket per scope and hour, dropped after MetricHourRetention.
type Rollups struct {
	// Now is the clock that decides which roll-ups have expired.
	Now func() time.Time

	mu    sync.Mutex
	hours map[metrics.Scope]map[int64]buckets.Bucket
}

// NewRollups returns an empty roll-up store on the system clock.
func NewRollups() *Rollups {
	return &Rollups{Now: time.Now, hours: map[metrics.Scope]map[int64]buckets.Bucket{}}
}

func hourExpired(hour, now time.Time) bool { return !hour.Add(voiceops.MetricHourRetention).After(now) }

// PutHours replaces the stored roll-ups of the buckets' scopes and hours.
func (r *Rollups) PutHours(_ context.Context, hs []buckets.Bucket) error {
	for _, h := range hs {
		if err := h.Check(); err != nil {
			return err
		}
	}
	now := r.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range hs {
		if hourExpired(h.Minute, now) {
			continue
		}
		byHour := r.hours[h.Scope]
		if byHour == nil {
			byHour = map[int64]buckets.Bucket{}
			r.hours[h.Scope] = byHour
		}
		h.Minute = h.Minute.UTC()
		byHour[h.Minute.Unix()] = h.Clone()
	}
	return nil
}

// ReadHours returns copies of the live roll-ups of s in [from, to).
func (r *Rollups) ReadHours(_ context.Context, s metrics.Scope, from, to time.Time) ([]buckets.Bucket, error) {
	now := r.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []buckets.Bucket{}
	for _, h := range r.hours[s] {
		if !h.Minute.Before(from) && h.Minute.Before(to) && !hourExpired(h.Minute, now) {
			out = append(out, h.Clone())
		}
	}
	slices.SortFunc(out, func(a, b buckets.Bucket) int { return a.Minute.Compare(b.Minute) })
	return out, nil
}
