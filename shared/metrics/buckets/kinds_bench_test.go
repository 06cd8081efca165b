package buckets_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// BenchmarkAggregate1000 aggregates an intake batch of 1000 events of
// every kind (the counts are kept per kind of the table).
func BenchmarkAggregate1000(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	events := make([]metrics.Event, 1000)
	for i := range events {
		k := metrics.Kinds[i%len(metrics.Kinds)]
		events[i] = ev(k, "acct_a", []string{"proj_1", "proj_2"}[rng.IntN(2)], float64(1+rng.IntN(900)), t0.Add(time.Duration(rng.IntN(180))*time.Second))
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(buckets.Aggregate(events)) == 0 {
			b.Fatal("no buckets")
		}
	}
}

// BenchmarkSummarizeValues summarises a 60-minute window and reads every
// rule metric of it: what the evaluator does per scope.
func BenchmarkSummarizeValues(b *testing.B) {
	var events []metrics.Event
	for m := range 60 {
		for i, k := range metrics.Kinds {
			events = append(events, ev(k, "acct_a", "", float64(100+i*m), t0.Add(time.Duration(m)*time.Minute)))
		}
	}
	bs := buckets.Aggregate(events)
	b.ReportAllocs()
	for b.Loop() {
		s := buckets.Summarize(bs, t0, t0.Add(time.Hour))
		for _, m := range voiceops.Metrics {
			if _, ok := s.Value(m); !ok {
				b.Fatal(m)
			}
		}
	}
}
