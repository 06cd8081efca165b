package dynamo_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	callsvc "github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/callstest/pacingbench"
	"github.com/voiceops/opsapi/shared/calls/dialer"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// BenchmarkPacingDynamo100At5 is shared/calls/dialer's BenchmarkPacing100At5 on
// the DynamoDB stores (moto): 100 calls of one account at 5 per second,
// two dialer instances reserving their slots from the account's one pace
// item on the calls table (conditional writes), jobs on the in-process
// queue. Reported: the span from first to last start (ideal 19.8 s) and
// the gaps between each start and its ideal slot. A start is when the
// provider is called, after the claim's conditional write: moto's latency
// under the burst of 100 jobs shows in the first starts. About 20 s an
// iteration:
//
//	TEST_AWS_ENDPOINT=http://127.0.0.1:PORT go test -run '^$' -bench PacingDynamo -benchtime 1x ./shared/store/dynamo/
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
		prov := &pacingbench.Provider{}
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
			dialers[i] = &dialer.Dialer{Calls: callsvc.New(calls, time.Now), Pacer: pacer, Queue: q, Provider: prov, Now: time.Now,
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
		at := prov.Wait(b, n)
		q.Close()
		pacingbench.Report(b, at, rate, sent)
	}
}
