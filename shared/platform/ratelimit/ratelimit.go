// Package ratelimit is the per-key rate limit of the public routes
// (docs/api.md, "Rate limits and retries"): a token bucket per API key, kept
// as GCRA (the generic cell rate algorithm), which stores one number per
// bucket, the theoretical arrival time (TAT) of the next request. A bucket
// of rate R and burst B admits a request at now when
//
//	max(TAT, now) + 1/R - now <= B/R
//
// and then sets TAT to max(TAT, now) + 1/R. The stores (shared/store/memory,
// shared/store/dynamo; contract in shared/store/storetest) apply this atomically; the
// DynamoDB one with a conditional update, so the limit holds across every
// Lambda instance of a region.
package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Limit is a bucket's size: Rate requests a second sustained, Burst at once.
type Limit struct {
	Rate  int // requests per second, > 0
	Burst int // requests, >= 1
}

// Default is every key's limit unless its account has an override: 25
// requests a second with bursts of 50. Sized for integrations that poll
// lists, start chats and trigger calls at human pace across many
// conversations; an operator raises it per account (opsctl limit set).
var Default = Limit{Rate: 25, Burst: 50}

// MaxRate and MaxBurst bound an override: above them the region ceiling
// (infra/api.go) is the limit anyway.
const (
	MaxRate  = 5000
	MaxBurst = 10000
)

// Validate reports an error when l cannot be a bucket's size.
func (l Limit) Validate() error {
	if l.Rate < 1 || l.Rate > MaxRate {
		return fmt.Errorf("rate must be 1 to %d requests a second", MaxRate)
	}
	if l.Burst < 1 || l.Burst > MaxBurst {
		return fmt.Errorf("burst must be 1 to %d requests", MaxBurst)
	}
	return nil
}

// Interval is the time one request uses of the bucket, in microseconds.
func (l Limit) Interval() int64 { return 1_000_000 / int64(l.Rate) }

// Window is the burst's length in microseconds: B intervals.
func (l Limit) Window() int64 { return int64(l.Burst) * l.Interval() }

// Window seconds of the policy header: how long the full burst takes to
// refill, at least one second.
func (l Limit) WindowSeconds() int64 { return max(1, ceilDiv(l.Window(), 1_000_000)) }

// Bucket names one key's bucket.
type Bucket struct {
	AccountID string
	KeyID     string
}

// Decision is a bucket's answer to one request.
type Decision struct {
	Allowed   bool
	Limit     Limit
	Remaining int           // requests that would be admitted now
	Reset     time.Duration // until the bucket is full again
	// RetryAfter is, for a refused request, how long until one is admitted.
	RetryAfter time.Duration
}

// Micros is a time as microseconds since the Unix epoch, the stores' unit.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// Admit applies GCRA at now (µs) to a bucket whose TAT is tat (0: none):
// the new TAT to store when allowed, and the decision.
func Admit(tat, now int64, l Limit) (int64, Decision) {
	next := max(tat, now) + l.Interval()
	if next-now > l.Window() {
		return tat, Refused(tat, now, l)
	}
	return next, Allowed(next, now, l)
}

// Allowed is the decision of an admitted request that set the TAT to next.
func Allowed(next, now int64, l Limit) Decision {
	iv := l.Interval()
	return Decision{
		Allowed:   true,
		Limit:     l,
		Remaining: int(max(0, (now+l.Window()-next)/iv)),
		Reset:     time.Duration(max(0, next-now)) * time.Microsecond,
	}
}

// Refused is the decision of a request refused with the bucket at tat.
func Refused(tat, now int64, l Limit) Decision {
	wait := max(tat, now) + l.Interval() - now - l.Window()
	return Decision{
		Limit:      l,
		Reset:      time.Duration(max(0, tat-now)) * time.Microsecond,
		RetryAfter: time.Duration(max(1, wait)) * time.Microsecond,
	}
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// Store keeps the buckets and the per-account overrides.
type Store interface {
	// Take admits or refuses one request of bucket b at now, atomically
	// across every caller of the store.
	Take(ctx context.Context, b Bucket, l Limit, now time.Time) (Decision, error)
	// AccountLimit is the account's override; voiceops.ErrNotFound when it
	// has none.
	AccountLimit(ctx context.Context, accountID string) (Limit, error)
	// SetAccountLimit sets (l non-nil) or removes (nil) the override.
	SetAccountLimit(ctx context.Context, accountID string, l *Limit) error
}

// OverrideTTL is how long a warm function keeps an account's limit before
// reading it again: an operator's change takes effect within it.
const OverrideTTL = time.Minute

// Limiter takes requests from the bucket of their key, at the limit of the
// key's account.
type Limiter struct {
	Store   Store
	Default Limit // Default when zero
	Now     func() time.Time

	mu     sync.Mutex
	limits map[string]cachedLimit
}

type cachedLimit struct {
	l     Limit
	until time.Time
}

// Take admits or refuses one request of key keyID of accountID.
func (lm *Limiter) Take(ctx context.Context, accountID, keyID string) (Decision, error) {
	now := lm.Now()
	l, err := lm.limitOf(ctx, accountID, now)
	if err != nil {
		return Decision{}, err
	}
	return lm.Store.Take(ctx, Bucket{AccountID: accountID, KeyID: keyID}, l, now)
}

func (lm *Limiter) limitOf(ctx context.Context, accountID string, now time.Time) (Limit, error) {
	lm.mu.Lock()
	c, ok := lm.limits[accountID]
	lm.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.l, nil
	}
	l, err := lm.Store.AccountLimit(ctx, accountID)
	switch {
	case err == nil:
	case voiceops.KindOf(err) == voiceops.KindNotFound || err == voiceops.ErrNotFound:
		l = lm.Default
		if l == (Limit{}) {
			l = Default
		}
	default:
		return Limit{}, err
	}
	lm.mu.Lock()
	if lm.limits == nil || len(lm.limits) > 10000 {
		lm.limits = map[string]cachedLimit{}
	}
	lm.limits[accountID] = cachedLimit{l: l, until: now.Add(OverrideTTL)}
	lm.mu.Unlock()
	return l, nil
}

// PolicyHeader is the RateLimit-Policy field of a limit
// (draft-ietf-httpapi-ratelimit-headers-09): quota q per window w seconds.
func PolicyHeader(l Limit) string {
	b := make([]byte, 0, 32)
	b = append(b, `"key";q=`...)
	b = strconv.AppendInt(b, int64(l.Burst), 10)
	b = append(b, ";w="...)
	b = strconv.AppendInt(b, l.WindowSeconds(), 10)
	return string(b)
}

// StateHeader is the RateLimit field of a decision (draft -09): r requests
// remaining, t seconds until the quota is full again.
func StateHeader(d Decision) string {
	b := make([]byte, 0, 32)
	b = append(b, `"key";r=`...)
	b = strconv.AppendInt(b, int64(d.Remaining), 10)
	b = append(b, ";t="...)
	b = strconv.AppendInt(b, ceilDiv(int64(d.Reset), int64(time.Second)), 10)
	return string(b)
}

// RetryAfterSeconds is the Retry-After of a refused request, in whole
// seconds, at least 1.
func RetryAfterSeconds(d Decision) int64 {
	return max(1, ceilDiv(int64(d.RetryAfter), int64(time.Second)))
}
