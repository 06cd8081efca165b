package dynamo_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/idempotency"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestIdempotencyContract(t *testing.T) {
	c := client(t)
	db := awstest.Serial(c)
	storetest.RunIdempotency(t, func(t *testing.T) idempotency.Store {
		n := newTables(t, c)
		return dynamo.NewRequests(db, n.Requests, n.Config)
	})
}

func TestRateLimitContract(t *testing.T) {
	c := client(t)
	db := awstest.Serial(c)
	storetest.RunRateLimit(t, func(t *testing.T) ratelimit.Store {
		n := newTables(t, c)
		return dynamo.NewRequests(db, n.Requests, n.Config)
	})
}

// TestRequestGuardCallBudget counts the DynamoDB calls of the request
// guards: the limiter's cost per request, and the Idempotency-Key's.
func TestRequestGuardCallBudget(t *testing.T) {
	c := client(t)
	db := &countingDB{DB: c}
	n := newTables(t, c)
	s := dynamo.NewRequests(db, n.Requests, n.Config)
	ctx := t.Context()
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	b := ratelimit.Bucket{AccountID: "acct_a", KeyID: "key_1"}
	l := ratelimit.Limit{Rate: 10, Burst: 2}
	sc := idempotency.Scope{AccountID: "acct_a", KeyID: "key_1", Key: "k"}
	claim := idempotency.Record{Scope: sc, Fingerprint: "fp", State: idempotency.InFlight, Token: "t", CreatedAt: now, LeaseUntil: now.Add(time.Minute)}
	steps := []struct {
		name    string
		call    func() (bool, error)
		allowed bool
		want    map[string]int
	}{
		{"Take of a new bucket (idle: two conditional updates)", func() (bool, error) { d, err := s.Take(ctx, b, l, now); return d.Allowed, err }, true, map[string]int{"UpdateItem": 2}},
		{"Take of a bucket in use (one)", func() (bool, error) { d, err := s.Take(ctx, b, l, now); return d.Allowed, err }, true, map[string]int{"UpdateItem": 1}},
		{"Take refused (one)", func() (bool, error) { d, err := s.Take(ctx, b, l, now); return d.Allowed, err }, false, map[string]int{"UpdateItem": 1}},
		{"Take of a bucket gone idle that this instance saw (one: the idle write first)", func() (bool, error) {
			d, err := s.Take(ctx, b, l, now.Add(time.Second))
			return d.Allowed, err
		}, true, map[string]int{"UpdateItem": 1}},
		{"Take of it in use again (one)", func() (bool, error) { d, err := s.Take(ctx, b, l, now.Add(time.Second)); return d.Allowed, err }, true, map[string]int{"UpdateItem": 1}},
		{"Take of a bucket another instance has just put in use, guessed idle (two: the wrong guess)", func() (bool, error) {
			later := now.Add(time.Hour)
			if _, err := dynamo.NewRequests(db, n.Requests, n.Config).Take(ctx, b, l, later); err != nil {
				return false, err
			}
			db.take()
			d, err := s.Take(ctx, b, l, later.Add(time.Millisecond))
			return d.Allowed, err
		}, true, map[string]int{"UpdateItem": 2}},
		{"AccountLimit (one read; warm functions cache it a minute)", func() (bool, error) {
			_, err := s.AccountLimit(ctx, "acct_a")
			return true, ignoreNotFound(err)
		}, true, map[string]int{"GetItem": 1}},
		{"Begin claiming", func() (bool, error) { _, ok, err := s.Begin(ctx, claim, now); return ok, err }, true, map[string]int{"PutItem": 1}},
		{"Finish", func() (bool, error) { return true, s.Finish(ctx, sc, "t", idempotency.Response{Status: 201}) }, true, map[string]int{"UpdateItem": 1}},
		{"Begin of a done key (replay)", func() (bool, error) { _, ok, err := s.Begin(ctx, claim, now); return ok, err }, false, map[string]int{"PutItem": 1}},
	}
	for _, st := range steps {
		db.take()
		ok, err := st.call()
		if err != nil || ok != st.allowed {
			t.Fatalf("%s: %v, %v", st.name, ok, err)
		}
		if got := db.take(); !maps.Equal(got, st.want) {
			t.Errorf("%s: calls %v, want %v", st.name, got, st.want)
		}
	}
}

func ignoreNotFound(err error) error {
	if errors.Is(err, voiceops.ErrNotFound) {
		return nil
	}
	return err
}

// BenchmarkRateLimitTake measures the limiter's DynamoDB round trips (here
// against the emulator: compare with BenchmarkGetItemBaseline, one plain
// consistent read of the same table, for the ratio; in AWS a single-item
// write takes a few milliseconds in-region).
//
//	go test -run '^$' -bench 'RateLimitTake|GetItemBaseline' ./shared/store/dynamo/
func BenchmarkRateLimitTake(b *testing.B) {
	c := awstest.DynamoDB(b)
	n := awstest.Tables(b, c)
	s := dynamo.NewRequests(c, n.Requests, n.Config)
	ctx := context.Background()
	l := ratelimit.Default
	for _, tc := range []struct {
		name string
		step time.Duration
		want bool
	}{
		{"in-use", time.Second / time.Duration(l.Rate), true}, // one interval a request: admitted, bucket in use
		{"idle", time.Hour, true},                             // the bucket full again each time
		{"refused", 0, false},                                 // past the burst
	} {
		b.Run(tc.name, func(b *testing.B) {
			bucket := ratelimit.Bucket{AccountID: "acct_bench", KeyID: tc.name}
			now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
			if !tc.want {
				for range l.Burst {
					if _, err := s.Take(ctx, bucket, l, now); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				now = now.Add(tc.step)
				d, err := s.Take(ctx, bucket, l, now)
				if err != nil || d.Allowed != tc.want {
					b.Fatalf("%+v %v", d, err)
				}
			}
		})
	}
}

func BenchmarkGetItemBaseline(b *testing.B) {
	c := awstest.DynamoDB(b)
	n := awstest.Tables(b, c)
	s := dynamo.NewRequests(c, n.Requests, n.Config)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.AccountLimit(ctx, "acct_bench"); !errors.Is(err, voiceops.ErrNotFound) {
			b.Fatal(err)
		}
	}
}
