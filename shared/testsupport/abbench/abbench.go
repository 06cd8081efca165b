// Package abbench measures a piece of work against its baseline in one
// benchmark, interleaved: each round runs both, A then B in even rounds and
// B then A in odd ones, so that both see the same machine (the load of
// other processes, the heap the other left behind). The figures are
// medians over the rounds, and the ratio is taken within each round and
// shown as its median with the interquartile range (scripts/bench prints
// them).
package abbench

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// Run runs rounds of work and base until the benchmark's time is up and
// reports, per round: a-ms and base-ms (median milliseconds), a-allocs
// and base-allocs (median allocations), and x-base-min, x-base-p25,
// x-base-p50, x-base-p75 and x-base-max (work's time over base's in the
// same round: the extremes and the quartiles). Each function does one whole operation and fails b on error.
func Run(b *testing.B, work, base func()) { RunWith(b, nil, work, base) }

// RunWith is Run calling before (when not nil) at the start of each round,
// untimed: to make what the round's work and base consume.
func RunWith(b *testing.B, before, work, base func()) {
	var at, bt, ratios []float64
	var aa, ba []float64
	var ms runtime.MemStats
	measure := func(f func()) (float64, float64) {
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		t0 := time.Now()
		f()
		d := time.Since(t0)
		runtime.ReadMemStats(&ms)
		return float64(d) / float64(time.Millisecond), float64(ms.Mallocs - before)
	}
	round := 0
	for b.Loop() {
		if before != nil {
			b.StopTimer()
			before()
			b.StartTimer()
		}
		var ta, tb, na, nb float64
		if round%2 == 0 {
			ta, na = measure(work)
			tb, nb = measure(base)
		} else {
			tb, nb = measure(base)
			ta, na = measure(work)
		}
		at, bt, aa, ba = append(at, ta), append(bt, tb), append(aa, na), append(ba, nb)
		if tb > 0 {
			ratios = append(ratios, ta/tb)
		}
		round++
	}
	b.ReportMetric(Quantile(at, 0.5), "a-ms")
	b.ReportMetric(Quantile(bt, 0.5), "base-ms")
	b.ReportMetric(Quantile(aa, 0.5), "a-allocs")
	b.ReportMetric(Quantile(ba, 0.5), "base-allocs")
	b.ReportMetric(Quantile(ratios, 0), "x-base-min")
	b.ReportMetric(Quantile(ratios, 0.25), "x-base-p25")
	b.ReportMetric(Quantile(ratios, 0.5), "x-base-p50")
	b.ReportMetric(Quantile(ratios, 0.75), "x-base-p75")
	b.ReportMetric(Quantile(ratios, 1), "x-base-max")
	b.ReportMetric(float64(round), "rounds")
}

// Quantile is the q-quantile of vs (the nearest rank); 0 when empty.
func Quantile(vs []float64, q float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}
