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

// Metrics is the in-memory metric store: one merged bucket per scope and
// minute, behind its own lock (hot writes never wait for the config
// store's). Buckets older than metrics.Retention are dropped.
type Metrics struct {
	// Now is the clock that decides which buckets have expired.
	Now func() time.Time

	mu        sync.Mutex
	onAdd     func([]metrics.Scope)
	buckets   map[metrics.Scope]map[int64]buckets.Bucket // by scope, then minute (unix seconds)
	lastPrune time.Time
}

// NewMetrics returns an empty metric store on the system clock.
func NewMetrics() *Metrics {
	return &Metrics{Now: time.Now, buckets: map[metrics.Scope]map[int64]buckets.Bucket{}}
}

var _ buckets.Store = (*Metrics)(nil)

// metricExpired reports whether the bucket of minute has outlived the
// store's retention (the series and the preview read them that long).
func metricExpired(minute, now time.Time) bool {
	return !minute.Add(voiceops.MetricMinuteRetention).After(now)
}

// metricTooOld reports whether a bucket of minute is too old to be added:
// events are accepted metrics.Retention old.
func metricTooOld(minute, now time.Time) bool { return !minute.Add(metrics.Retention).After(now) }

// OnAdd sets f to be called, after each AddBuckets that stored something,
// with the scopes it stored data for: the in-process equivalent of the
// metrics table's stream (the dev server's evaluation trigger). f must not
// block.
func (m *Metrics) OnAdd(f func([]metrics.Scope)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onAdd = f
}

// AddBuckets merges the buckets into the stored ones. The store keeps its
// own copies: the caller may reuse what it passed.
func (m *Metrics) AddBuckets(_ context.Context, bs []buckets.Bucket) error {
	combined, err := buckets.Combine(bs) // copies, checked, one per scope and minute
	if err != nil {
		return err
	}
	scopes, notify, err := m.add(combined)
	if err == nil && notify != nil && len(scopes) > 0 {
		notify(scopes)
	}
	return err
}

// add stores the combined buckets and returns the scopes it stored data
// for, with the notification to send (outside the lock).
func (m *Metrics) add(combined []buckets.Bucket) ([]metrics.Scope, func([]metrics.Scope), error) {
	now := m.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	var scopes []metrics.Scope
	m.prune(now)
	for _, b := range combined {
		if metricTooOld(b.Minute, now) {
			continue
		}
		byMinute := m.buckets[b.Scope]
		if byMinute == nil {
			byMinute = map[int64]buckets.Bucket{}
			m.buckets[b.Scope] = byMinute
		}
		k := b.Minute.Unix()
		if old, ok := byMinute[k]; ok {
			// old is the store's own (readers get clones) and was checked on
			// its way in, as b was (AddBuckets): b merges into it in place,
			// not into a copy of the minute's whole sketch checked again.
			old.MergeFrom(b)
			b = old
		}
		byMinute[k] = b
		if len(scopes) == 0 || scopes[len(scopes)-1] != b.Scope { // combined is ordered by scope
			scopes = append(scopes, b.Scope)
		}
	}
	return scopes, m.onAdd, nil
}

// prune drops expired buckets, at most once a minute.
func (m *Metrics) prune(now time.Time) {
	if now.Sub(m.lastPrune) < time.Minute {
		return
	}
	m.lastPrune = now
	for s, byMinute := range m.buckets {
		for k, b := range byMinute {
			if metricExpired(b.Minute, now) {
				delete(byMinute, k)
			}
		}
		if len(byMinute) == 0 {
			delete(m.buckets, s)
		}
	}
}

// ReadBuckets returns copies of the live buckets of s in [from, to).
func (m *Metrics) ReadBuckets(_ context.Context, s metrics.Scope, from, to time.Time) ([]buckets.Bucket, error) {
	now := m.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []buckets.Bucket{}
	for _, b := range m.buckets[s] {
		if !b.Minute.Before(from) && b.Minute.Before(to) && !metricExpired(b.Minute, now) {
			out = append(out, b.Clone())
		}
	}
	slices.SortFunc(out, func(a, b buckets.Bucket) int { return a.Minute.Compare(b.Minute) })
	return out, nil
}

// Len returns how many buckets the store holds, expired or not.
func (m *Metrics) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, byMinute := range m.buckets {
		n += len(byMinute)
	}
	return n
}
