package dialer

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	callsvc "github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/callstest/pacingbench"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// BenchmarkPacing100At5 measures pacing accuracy on the real clock: 100
// calls of one account triggered at once, rate 5 per second, dialed by two
// dialer instances sharing one pacer and one queue (the in-process queue,
// whose delays behave like SQS's whole-second ones here: the dialer sends
// back jobs whose slot is more than DefaultMaxWait away). Reported: the
// span from first to last start (ideal 19.8 s), and the largest and mean
// gap between a call's start and its ideal slot (first start + i × 200 ms).
// One iteration takes about 20 s:
//
//	go test -run '^$' -bench Pacing -benchtime 1x ./shared/calls/dialer/
func BenchmarkPacing100At5(b *testing.B) {
	const n, rate = 100, 5.0
	for b.Loop() {
		ctx := context.Background()
		calls, pacer := memory.NewCalls(), memory.NewPacer()
		_ = pacer.SetRate(ctx, "acct_a", rate)
		prov := &pacingbench.Provider{}
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		var next atomic.Int64
		var dialers [2]*Dialer
		q := &MemoryQueue{Log: log, Handler: func(ctx context.Context, j voiceops.DialJob) error {
			return dialers[next.Add(1)%2].Handle(ctx, j) // two instances, in turn
		}}
		for i := range dialers {
			dialers[i] = &Dialer{Calls: callsvc.New(calls, time.Now), Pacer: pacer, Queue: q, Provider: prov, Now: time.Now, Sleep: SleepContext, Log: log,
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
		at := prov.Wait(b, n)
		q.Close()
		pacingbench.Report(b, at, rate, now)
	}
}
