// Package pacingbench is what the dialer's pacing benchmarks share (on the
// memory stores in shared/calls/dialer, on DynamoDB in shared/store/dynamo): a
// provider that notes when each call starts, and the report of how far the
// starts are from their ideal, evenly spaced slots. Test support only.
package pacingbench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Provider notes the wall-clock time each call is placed.
type Provider struct {
	mu sync.Mutex
	at []time.Time
}

func (p *Provider) Place(context.Context, telephony.CallRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at = append(p.at, time.Now())
	return nil
}

// Wait returns the start times of n calls, sorted, once they are all
// placed; it fails b when they are not within a minute.
func (p *Provider) Wait(b *testing.B, n int) []time.Time {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		p.mu.Lock()
		at := slices.Clone(p.at)
		p.mu.Unlock()
		if len(at) == n {
			slices.SortFunc(at, func(x, y time.Time) int { return x.Compare(y) })
			return at
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d calls placed in a minute", len(at), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Report reports the span from first to last start, the largest and mean
// gap between a start and its ideal slot at rate calls a second, and the
// time from sent (the jobs' sending) to the first start; it logs the
// starts more than 50 ms off their slot. The ideal starts are evenly
// spaced, ref + i × interval, with ref the median of the observed offsets
// (so that one late first call does not shift every other's error).
func Report(b *testing.B, at []time.Time, rate float64, sent time.Time) {
	n := len(at)
	interval := voiceops.SlotInterval(rate)
	offsets := make([]time.Duration, n)
	for i, t := range at {
		offsets[i] = t.Sub(at[0]) - time.Duration(i)*interval
	}
	sorted := slices.Clone(offsets)
	slices.Sort(sorted)
	ref := sorted[n/2]
	var maxErr, sumErr float64
	var off []string
	for i, o := range offsets {
		d := o - ref
		e := math.Abs(float64(d))
		maxErr, sumErr = max(maxErr, e), sumErr+e
		if d > 50*time.Millisecond || d < -50*time.Millisecond {
			off = append(off, fmt.Sprintf("#%d %+dms", i, d.Milliseconds()))
		}
	}
	b.Logf("starts more than 50 ms off their slot: %v", off)
	b.ReportMetric(at[n-1].Sub(at[0]).Seconds(), "span-s")
	b.ReportMetric(maxErr/float64(time.Millisecond), "max-slot-error-ms")
	b.ReportMetric(sumErr/float64(n)/float64(time.Millisecond), "mean-slot-error-ms")
	b.ReportMetric(float64(at[0].Sub(sent).Milliseconds()), "first-start-ms")
}
