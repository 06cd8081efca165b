package storetest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/idempotency"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// RunIdempotency runs the contract of idempotency.Store. newStore returns
// an empty store.
func RunIdempotency(t *testing.T, newStore func(t *testing.T) idempotency.Store) {
	t.Helper()
	t.Run("ClaimFinishReplay", func(t *testing.T) { testIdemClaimFinish(t, newStore(t)) })
	t.Run("Scopes", func(t *testing.T) { testIdemScopes(t, newStore(t)) })
	t.Run("Expiry", func(t *testing.T) { testIdemExpiry(t, newStore(t)) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testIdemConcurrent(t, newStore(t)) })
	t.Run("WholeRecord", func(t *testing.T) { testIdemWholeRecord(t, newStore(t)) })
}

var idemT0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func claim(sc idempotency.Scope, fp, token string, now time.Time) idempotency.Record {
	return idempotency.Record{Scope: sc, Fingerprint: fp, State: idempotency.InFlight, Token: token, CreatedAt: now, LeaseUntil: now.Add(idempotency.Lease)}
}

func mustBegin(t *testing.T, s idempotency.Store, rec idempotency.Record, now time.Time, wantClaimed bool) idempotency.Record {
	t.Helper()
	got, claimed, err := s.Begin(context.Background(), rec, now)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if claimed != wantClaimed {
		t.Fatalf("Begin claimed = %v, want %v (record %+v)", claimed, wantClaimed, got)
	}
	return got
}

func testIdemClaimFinish(t *testing.T, s idempotency.Store) {
	ctx := context.Background()
	sc := idempotency.Scope{AccountID: "acct_a", KeyID: "key_1", Key: "order-42"}
	first := claim(sc, "fp1", "tok1", idemT0)
	mustBegin(t, s, first, idemT0, true)

	// A second request while the first runs sees the claim, in flight.
	got := mustBegin(t, s, claim(sc, "fp1", "tok2", idemT0.Add(time.Second)), idemT0.Add(time.Second), false)
	if got.State != idempotency.InFlight || got.Token != "tok1" || got.Fingerprint != "fp1" ||
		!got.CreatedAt.Equal(idemT0) || !got.LeaseUntil.Equal(first.LeaseUntil) {
		t.Fatalf("in-flight record = %+v, want the first claim", got)
	}

	if err := s.Finish(ctx, sc, "tok2", idempotency.Response{Status: 201}); !errors.Is(err, idempotency.ErrNotClaimed) {
		t.Fatalf("Finish with another token = %v, want ErrNotClaimed", err)
	}
	resp := idempotency.Response{Status: 201, ContentType: "application/json", Body: []byte(`{"id":"rule_1"}`), RequestID: "req_1"}
	if err := s.Finish(ctx, sc, "tok1", resp); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if err := s.Finish(ctx, sc, "tok1", resp); !errors.Is(err, idempotency.ErrNotClaimed) {
		t.Fatalf("Finish twice = %v, want ErrNotClaimed", err)
	}
	got = mustBegin(t, s, claim(sc, "fp2", "tok3", idemT0.Add(time.Hour)), idemT0.Add(time.Hour), false)
	if got.State != idempotency.Done || got.Fingerprint != "fp1" || !reflect.DeepEqual(got.Response, resp) {
		t.Fatalf("done record = %+v, want fingerprint fp1 and response %+v", got, resp)
	}

	// An empty body is kept as empty.
	sc2 := idempotency.Scope{AccountID: "acct_a", KeyID: "key_1", Key: "empty"}
	mustBegin(t, s, claim(sc2, "fp", "t", idemT0), idemT0, true)
	if err := s.Finish(ctx, sc2, "t", idempotency.Response{Status: 204}); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	got = mustBegin(t, s, claim(sc2, "fp", "u", idemT0), idemT0, false)
	if got.Response.Status != 204 || len(got.Response.Body) != 0 {
		t.Fatalf("response = %+v, want 204 without body", got.Response)
	}
}

func testIdemScopes(t *testing.T, s idempotency.Store) {
	base := idempotency.Scope{AccountID: "acct_a", KeyID: "key_1", Key: "k"}
	mustBegin(t, s, claim(base, "fp", "t0", idemT0), idemT0, true)
	for _, sc := range []idempotency.Scope{
		{AccountID: "acct_b", KeyID: "key_1", Key: "k"}, // another tenant
		{AccountID: "acct_a", KeyID: "key_2", Key: "k"}, // another key of the tenant
		{AccountID: "acct_a", KeyID: "key_1", Key: "K"}, // keys are case-sensitive
	} {
		got := mustBegin(t, s, claim(sc, "other", "t1", idemT0), idemT0, true)
		if got.Scope != sc || got.Fingerprint != "other" {
			t.Errorf("claim of %+v = %+v", sc, got)
		}
	}
}

func testIdemExpiry(t *testing.T, s idempotency.Store) {
	ctx := context.Background()
	sc := idempotency.Scope{AccountID: "acct_a", KeyID: "key_1", Key: "k"}
	mustBegin(t, s, claim(sc, "fp", "t0", idemT0), idemT0, true)
	if err := s.Finish(ctx, sc, "t0", idempotency.Response{Status: 201, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	justBefore := idemT0.Add(idempotency.TTL - time.Millisecond)
	mustBegin(t, s, claim(sc, "fp", "t1", justBefore), justBefore, false)
	after := idemT0.Add(idempotency.TTL)
	got := mustBegin(t, s, claim(sc, "fp2", "t2", after), after, true)
	if got.State != idempotency.InFlight || got.Token != "t2" {
		t.Fatalf("claim after expiry = %+v", got)
	}
	got = mustBegin(t, s, claim(sc, "fp3", "t3", after), after, false)
	if got.Fingerprint != "fp2" || got.State != idempotency.InFlight {
		t.Fatalf("record after the new claim = %+v, want the new in-flight claim", got)
	}
	// The old claim can no longer finish.
	if err := s.Finish(ctx, sc, "t0", idempotency.Response{Status: 500}); !errors.Is(err, idempotency.ErrNotClaimed) {
		t.Fatalf("Finish of the expired claim = %v, want ErrNotClaimed", err)
	}
}

func testIdemConcurrent(t *testing.T, s idempotency.Store) {
	sc := idempotency.Scope{AccountID: "acct_a", KeyID: "key_1", Key: "race"}
	var wg sync.WaitGroup
	var claimed atomic.Int32
	errs := make(chan error, concurrentCalls)
	for i := range concurrentCalls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := s.Begin(context.Background(), claim(sc, "fp", voiceops.RandomBase62(8)+string(rune('a'+i%26)), idemT0), idemT0)
			if err != nil {
				errs <- err
			}
			if ok {
				claimed.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Begin: %v", err)
	}
	if n := claimed.Load(); n != 1 {
		t.Fatalf("%d of %d concurrent Begins claimed the key, want exactly 1", n, concurrentCalls)
	}
}

// RunRateLimit runs the contract of ratelimit.Store. newStore returns an
// empty store.
func RunRateLimit(t *testing.T, newStore func(t *testing.T) ratelimit.Store) {
	t.Helper()
	t.Run("Burst", func(t *testing.T) { testRateBurst(t, newStore(t)) })
	t.Run("Refill", func(t *testing.T) { testRateRefill(t, newStore(t)) })
	t.Run("Buckets", func(t *testing.T) { testRateBuckets(t, newStore(t)) })
	t.Run("Concurrent", func(t *testing.T) { testRateConcurrent(t, newStore(t)) })
	t.Run("Overrides", func(t *testing.T) { testRateOverrides(t, newStore(t)) })
}

var rateT0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func take(t *testing.T, s ratelimit.Store, b ratelimit.Bucket, l ratelimit.Limit, now time.Time) ratelimit.Decision {
	t.Helper()
	d, err := s.Take(context.Background(), b, l, now)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	return d
}

func testRateBurst(t *testing.T, s ratelimit.Store) {
	b := ratelimit.Bucket{AccountID: "acct_a", KeyID: "key_1"}
	l := ratelimit.Limit{Rate: 10, Burst: 5} // an interval of 100 ms
	for i := range 5 {
		d := take(t, s, b, l, rateT0)
		if !d.Allowed || d.Remaining != 4-i || d.Limit != l {
			t.Fatalf("request %d: %+v, want allowed with %d remaining", i+1, d, 4-i)
		}
		if want := time.Duration(i+1) * 100 * time.Millisecond; d.Reset != want {
			t.Fatalf("request %d: reset %v, want %v", i+1, d.Reset, want)
		}
	}
	d := take(t, s, b, l, rateT0)
	if d.Allowed || d.Remaining != 0 || d.RetryAfter != 100*time.Millisecond {
		t.Fatalf("request 6: %+v, want refused, retry after 100ms", d)
	}
	// A refusal takes nothing: 40 ms later the wait is 60 ms.
	d = take(t, s, b, l, rateT0.Add(40*time.Millisecond))
	if d.Allowed || d.RetryAfter != 60*time.Millisecond {
		t.Fatalf("request 7: %+v, want refused, retry after 60ms", d)
	}
}

func testRateRefill(t *testing.T, s ratelimit.Store) {
	b := ratelimit.Bucket{AccountID: "acct_a", KeyID: "key_1"}
	l := ratelimit.Limit{Rate: 10, Burst: 2}
	take(t, s, b, l, rateT0)
	take(t, s, b, l, rateT0)
	if take(t, s, b, l, rateT0).Allowed {
		t.Fatal("third request at once allowed, want refused")
	}
	// One interval later, exactly one more.
	at := rateT0.Add(100 * time.Millisecond)
	if d := take(t, s, b, l, at); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("after one interval: %+v, want allowed with 0 remaining", d)
	}
	if take(t, s, b, l, at).Allowed {
		t.Fatal("second request after one interval allowed, want refused")
	}
	// Long idle: full again.
	at = rateT0.Add(time.Hour)
	for i := range 2 {
		if d := take(t, s, b, l, at); !d.Allowed || d.Remaining != 1-i {
			t.Fatalf("after idling, request %d: %+v", i+1, d)
		}
	}
}

func testRateBuckets(t *testing.T, s ratelimit.Store) {
	l := ratelimit.Limit{Rate: 1, Burst: 1}
	busy := ratelimit.Bucket{AccountID: "acct_a", KeyID: "key_1"}
	take(t, s, busy, l, rateT0)
	if take(t, s, busy, l, rateT0).Allowed {
		t.Fatal("busy bucket allowed a second request")
	}
	for _, b := range []ratelimit.Bucket{{AccountID: "acct_a", KeyID: "key_2"}, {AccountID: "acct_b", KeyID: "key_1"}} {
		if d := take(t, s, b, l, rateT0); !d.Allowed {
			t.Errorf("bucket %+v refused by another's use: %+v", b, d)
		}
	}
}

func testRateConcurrent(t *testing.T, s ratelimit.Store) {
	b := ratelimit.Bucket{AccountID: "acct_a", KeyID: "key_1"}
	l := ratelimit.Limit{Rate: 1, Burst: 10}
	var wg sync.WaitGroup
	var allowed atomic.Int32
	errs := make(chan error, concurrentCalls)
	for range concurrentCalls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := s.Take(context.Background(), b, l, rateT0)
			if err != nil {
				errs <- err
				return
			}
			if d.Allowed {
				allowed.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Take: %v", err)
	}
	if n := allowed.Load(); n != 10 {
		t.Fatalf("%d of %d concurrent requests allowed with a burst of 10, want exactly 10", n, concurrentCalls)
	}
}

func testRateOverrides(t *testing.T, s ratelimit.Store) {
	ctx := context.Background()
	if _, err := s.AccountLimit(ctx, "acct_a"); !errors.Is(err, voiceops.ErrNotFound) {
		t.Fatalf("AccountLimit without override = %v, want ErrNotFound", err)
	}
	l := ratelimit.Limit{Rate: 200, Burst: 400}
	if err := s.SetAccountLimit(ctx, "acct_a", &l); err != nil {
		t.Fatal(err)
	}
	if got, err := s.AccountLimit(ctx, "acct_a"); err != nil || got != l {
		t.Fatalf("AccountLimit = %+v, %v; want %+v", got, err, l)
	}
	if _, err := s.AccountLimit(ctx, "acct_b"); !errors.Is(err, voiceops.ErrNotFound) {
		t.Fatalf("another account's AccountLimit = %v, want ErrNotFound", err)
	}
	l2 := ratelimit.Limit{Rate: 5, Burst: 5}
	if err := s.SetAccountLimit(ctx, "acct_a", &l2); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.AccountLimit(ctx, "acct_a"); got != l2 {
		t.Fatalf("AccountLimit after change = %+v, want %+v", got, l2)
	}
	if err := s.SetAccountLimit(ctx, "acct_a", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AccountLimit(ctx, "acct_a"); !errors.Is(err, voiceops.ErrNotFound) {
		t.Fatalf("AccountLimit after removal = %v, want ErrNotFound", err)
	}
}
