package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/dialer"
	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/telephony"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

type wallClockProvider struct {
	mu sync.Mutex
	at []time.Time
}

func (p *wallClockProvider) Place(context.Context, telephony.CallRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at = append(p.at, time.Now())
	return nil
}

// BenchmarkPacingDynamo100At5 is shared/dialer's BenchmarkPacing100At5 on
// the DynamoDB stores (moto): 100 calls of one account at 5 per second,
// two dialer instances reserving their slots from the account's one pace
// item on the calls table (conditional writes), jobs on the in-process
// queue. Reported: the span from first to last start (ideal 19.8 s) and
// the gaps between each start and its ideal slot. A start is when the
// provider is called, after the claim's conditional write: moto's latency
// under the burst of 100 jobs shows in the first starts. About 20 s an
// iteration:
//
//	TEST_AWS_ENDPOINT=http://127.0.0.1:PORT go test -run '^$' -bench PacingDynamo -benchtime 1x ./shared/dynamo/
func BenchmarkPacingDynamo100At5(b *testing.B) {
	const n, rate = 100, 5.0
	c := awstest.DynamoDB(b)
	for b.Loop() {
		ctx := context.Background()
		names := awstest.Tables(b, c)
		calls, pacer := dynamo.NewCalls(c, names.Calls), dynamo.NewPacer(c, names.Calls)
		if err := pacer.SetRate(ctx, "acct_a", rate); err != nil {
			b.Fatal(err)
		}
		prov := &wallClockProvider{}
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		var next atomic.Int64
		var dialers [2]*dialer.Dialer
		q := &dialer.MemoryQueue{Log: log, Handler: func(ctx context.Context, j voiceops.DialJob) error {
			err := dialers[next.Add(1)%2].Handle(ctx, j) // two instances, in turn
			if err != nil {
				b.Logf("job of %s: %v", j.SID, err)
			}
			return err
		}}
		for i := range dialers {
			dialers[i] = &dialer.Dialer{Calls: calls, Pacer: pacer, Queue: q, Provider: prov, Now: time.Now,
				Sleep: dialer.SleepContext, Log: log, Timeout: time.Hour}
		}
		// The calls are written first, then their jobs sent all at once, so
		// that moto's writes of the calls do not count in the pacing.
		now := time.Now().UTC()
		var jobs []voiceops.DialJob
		for range n {
			call := voiceops.Call{SID: voiceops.NewCallSID(), AccountID: "acct_a", ProjectID: "proj_a", ToNumber: "+14155550100",
				Status: voiceops.CallQueued, CreatedAt: now, UpdatedAt: now}
			// ErrAlreadyExists: the SDK retried a write moto had made (under load).
			if err := calls.CreateCall(ctx, call); err != nil && !errors.Is(err, voiceops.ErrAlreadyExists) {
				b.Fatal(err)
			}
			jobs = append(jobs, voiceops.DialJob{SID: call.SID, AccountID: "acct_a", QueuedAt: now})
		}
		sent := time.Now()
		for _, j := range jobs {
			if err := q.SendDial(ctx, j, 0); err != nil {
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
		b.ReportMetric(float64(at[0].Sub(sent).Milliseconds()), "first-start-ms")
	}
}
