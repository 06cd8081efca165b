package memory

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/platform/idempotency"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Requests is the in-memory store of the request guards: Idempotency-Key
// records and rate-limit buckets with their per-account overrides (the
// dev server's; shared/store/dynamo.Requests is the deployed one).
type Requests struct {
	mu       sync.Mutex
	records  map[idempotency.Scope]idempotency.Record
	buckets  map[ratelimit.Bucket]int64 // TAT, µs
	limits   map[string]ratelimit.Limit
	lastPurg time.Time
}

// NewRequests returns an empty store.
func NewRequests() *Requests {
	return &Requests{records: map[idempotency.Scope]idempotency.Record{}, buckets: map[ratelimit.Bucket]int64{}, limits: map[string]ratelimit.Limit{}}
}

var (
	_ idempotency.Store = (*Requests)(nil)
	_ ratelimit.Store   = (*Requests)(nil)
)

func cloneRecord(r idempotency.Record) idempotency.Record {
	r.Response.Body = slices.Clone(r.Response.Body)
	return r
}

func (s *Requests) Begin(_ context.Context, rec idempotency.Record, now time.Time) (idempotency.Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purge(now)
	if old, ok := s.records[rec.Scope]; ok && !old.Expired(now) {
		return cloneRecord(old), false, nil
	}
	s.records[rec.Scope] = cloneRecord(rec)
	return rec, true, nil
}

func (s *Requests) Finish(_ context.Context, sc idempotency.Scope, token string, resp idempotency.Response) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[sc]
	if !ok || r.Token != token || r.State != idempotency.InFlight {
		return idempotency.ErrNotClaimed
	}
	r.State, r.Response = idempotency.Done, resp
	s.records[sc] = cloneRecord(r)
	return nil
}

// purge drops expired records and idle buckets once a minute, as TTL does
// in DynamoDB, so a long-running dev server stays small.
func (s *Requests) purge(now time.Time) {
	if now.Sub(s.lastPurg) < time.Minute {
		return
	}
	s.lastPurg = now
	for k, r := range s.records {
		if r.Expired(now) {
			delete(s.records, k)
		}
	}
	for k, tat := range s.buckets {
		if tat < ratelimit.Micros(now) {
			delete(s.buckets, k)
		}
	}
}

func (s *Requests) Take(_ context.Context, b ratelimit.Bucket, l ratelimit.Limit, now time.Time) (ratelimit.Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purge(now)
	tat, d := ratelimit.Admit(s.buckets[b], ratelimit.Micros(now), l)
	if d.Allowed {
		s.buckets[b] = tat
	}
	return d, nil
}

func (s *Requests) AccountLimit(_ context.Context, accountID string) (ratelimit.Limit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.limits[accountID]
	if !ok {
		return ratelimit.Limit{}, voiceops.ErrNotFound
	}
	return l, nil
}

func (s *Requests) SetAccountLimit(_ context.Context, accountID string, l *ratelimit.Limit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l == nil {
		delete(s.limits, accountID)
		return nil
	}
	s.limits[accountID] = *l
	return nil
}
