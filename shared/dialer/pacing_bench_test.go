package dialer

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/memory"
	"github.com/voiceops/opsapi/shared/telephony"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// wallProvider notes the wall-clock time each call is placed.
type wallProvider struct {
	mu sync.Mutex
	at []time.Time
}

func (p *wallProvider) Place(context.Context, telephony.CallRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at = append(p.at, time.Now())
	return nil
}

// BenchmarkPacing100At5 measures pacing accuracy on the real clock: 100
// calls of one account triggered at once, rate 5 per second, dialed by two
// dialer instances sharing one pacer and one queue (the in-process queue,
// whose delays behave like SQS's whole-second ones here: the dialer sends
// back jobs whose slot is more than DefaultMaxWait away). Reported: the
// span from first to last start (ideal 19.8 s), and the largest and mean
// gap between a call's start and its ideal slot (first start + i × 200 ms).
// One iteration takes about 20 s:
//
//	go test -run '^$' -bench Pacing -benchtime 1x ./shared/dialer/
func BenchmarkPacing100At5(b *testing.B) {
	const n, rate = 100, 5.0
	for b.Loop() {
		ctx := context.Background()
		calls, pacer := memory.NewCalls(), memory.NewPacer()
		_ = pacer.SetRate(ctx, "acct_a", rate)
		prov := &wallProvider{}
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		var next atomic.Int64
		var dialers [2]*Dialer
		q := &MemoryQueue{Log: log, Handler: func(ctx context.Context, j voiceops.DialJob) error {
			return dialers[next.Add(1)%2].Handle(ctx, j) // two instances, in turn
		}}
		for i := range dialers {
			dialers[i] = &Dialer{Calls: calls, Pacer: pacer, Queue: q, Provider: prov, Now: time.Now, Sleep: SleepContext, Log: log,
				Timeout: time.Hour}
		}
		now := time.Now().UTC()
		for range n {
			c := voiceops.Call{SID: voiceops.NewCallSID(), AccountID: "acct_a", ProjectID: "proj_a", ToNumber: "+14155550100",
				Status: voiceops.CallQueued, CreatedAt: now, UpdatedAt: now}
			if err := calls.CreateCall(ctx, c); err != nil {
				b.Fatal(err)
			}
			if err := q.SendDial(ctx, voiceops.DialJob{SID: c.SID, AccountID: "acct_a", QueuedAt: now}, 0); err != nil {
				b.Fatal(err)
			}
		}
		deadline := time.Now().Add(time.Minute)
		for {
			prov.mu.Lock()
			done := len(prov.at)
			prov.mu.Unlock()
			if done == n || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		q.Close()
		at := slices.Clone(prov.at)
		if len(at) != n {
			b.Fatalf("%d of %d calls placed in a minute", len(at), n)
		}
		slices.SortFunc(at, func(x, y time.Time) int { return x.Compare(y) })
		// The ideal starts are evenly spaced: ref + i × interval, with ref
		// the median of the observed offsets (so that one late first call
		// does not shift every other's error).
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
		b.ReportMetric(sumErr/n/float64(time.Millisecond), "mean-slot-error-ms")
		b.ReportMetric(at[0].Sub(now).Seconds()*1000, "first-start-ms")
	}
}
