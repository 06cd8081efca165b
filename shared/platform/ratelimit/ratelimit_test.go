package ratelimit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestHeaders(t *testing.T) {
	l := Limit{Rate: 25, Burst: 50}
	if got := PolicyHeader(l); got != `"key";q=50;w=2` {
		t.Errorf("PolicyHeader = %s", got)
	}
	_, d := Admit(0, 1_000_000, l)
	if got := StateHeader(d); got != `"key";r=49;t=1` {
		t.Errorf("StateHeader = %s", got)
	}
	if got := RetryAfterSeconds(Decision{RetryAfter: 1}); got != 1 {
		t.Errorf("RetryAfterSeconds of 1ns = %d, want 1", got)
	}
	if got := RetryAfterSeconds(Decision{RetryAfter: 2100 * time.Millisecond}); got != 3 {
		t.Errorf("RetryAfterSeconds of 2.1s = %d, want 3", got)
	}
	if got := PolicyHeader(Limit{Rate: 100, Burst: 10}); got != `"key";q=10;w=1` {
		t.Errorf("a window under a second reads as 1: %s", got)
	}
}

func TestValidate(t *testing.T) {
	for _, l := range []Limit{{0, 1}, {1, 0}, {MaxRate + 1, 1}, {1, MaxBurst + 1}, {-1, 5}} {
		if l.Validate() == nil {
			t.Errorf("%+v validated", l)
		}
	}
	if err := Default.Validate(); err != nil {
		t.Error(err)
	}
}

// FuzzAdmit drives one bucket with a request sequence and holds GCRA to
// the token bucket's promises: never more than Burst plus the refill of the
// elapsed time; Remaining within [0, Burst-1]; a refused request waits
// RetryAfter, and is admitted when it does.
func FuzzAdmit(f *testing.F) {
	f.Add(uint16(25), uint16(50), []byte{0, 0, 0, 0, 40, 0, 200})
	f.Add(uint16(1), uint16(1), []byte{0, 255, 3})
	f.Add(uint16(5000), uint16(10000), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, rate, burst uint16, steps []byte) {
		l := Limit{Rate: int(rate)%MaxRate + 1, Burst: int(burst)%MaxBurst + 1}
		var tat, now, admitted int64
		start := now
		for _, s := range steps {
			now += int64(s) * 1000 // 0 to 255 ms
			next, d := Admit(tat, now, l)
			if d.Allowed {
				admitted++
				tat = next
				if d.Remaining < 0 || d.Remaining > l.Burst-1 {
					t.Fatalf("remaining %d outside [0, %d]", d.Remaining, l.Burst-1)
				}
			} else {
				if next != tat || d.RetryAfter <= 0 || d.Remaining != 0 {
					t.Fatalf("refusal %+v changed the bucket or has no wait", d)
				}
				if _, again := Admit(tat, now+d.RetryAfter.Microseconds(), l); !again.Allowed {
					t.Fatalf("not admitted after waiting RetryAfter %v", d.RetryAfter)
				}
			}
			if most := int64(l.Burst) + (now-start)/l.Interval(); admitted > most {
				t.Fatalf("%d admitted in %d µs, at most %d", admitted, now-start, most)
			}
		}
	})
}

type fakeStore struct {
	Store
	limit *Limit
	reads int
	err   error
}

func (f *fakeStore) AccountLimit(context.Context, string) (Limit, error) {
	f.reads++
	if f.err != nil {
		return Limit{}, f.err
	}
	if f.limit == nil {
		return Limit{}, voiceops.ErrNotFound
	}
	return *f.limit, nil
}

func (f *fakeStore) Take(_ context.Context, _ Bucket, l Limit, _ time.Time) (Decision, error) {
	return Decision{Allowed: true, Limit: l}, nil
}

func TestLimiterCachesTheAccountLimit(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	st := &fakeStore{}
	lm := &Limiter{Store: st, Now: func() time.Time { return now }}
	d, err := lm.Take(context.Background(), "acct_a", "key_1")
	if err != nil || d.Limit != Default {
		t.Fatalf("%+v %v, want the default", d, err)
	}
	st.limit = &Limit{Rate: 100, Burst: 100}
	lm.Take(context.Background(), "acct_a", "key_2")
	if st.reads != 1 {
		t.Errorf("%d reads within the cache's minute, want 1", st.reads)
	}
	now = now.Add(OverrideTTL)
	if d, _ := lm.Take(context.Background(), "acct_a", "key_1"); d.Limit != *st.limit {
		t.Errorf("after a minute: %+v, want the override", d.Limit)
	}
	st.err = errors.New("down")
	now = now.Add(OverrideTTL)
	if _, err := lm.Take(context.Background(), "acct_a", "key_1"); err == nil {
		t.Error("a store error was swallowed")
	}
}
