package dialer

import (
	"github.com/voiceops/opsapi/shared/testsupport/testclock"

	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// sent is a queue that keeps what it is sent.
type sent struct {
	mu   sync.Mutex
	jobs []voiceops.DialJob
	lags []time.Duration
	err  error
}

func (q *sent) SendDial(_ context.Context, j voiceops.DialJob, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	q.jobs, q.lags = append(q.jobs, j), append(q.lags, delay)
	return nil
}

func (q *sent) take() ([]voiceops.DialJob, []time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j, l := q.jobs, q.lags
	q.jobs, q.lags = nil, nil
	return j, l
}

// provider records the calls placed and when.
type provider struct {
	clock *testclock.Clock
	mu    sync.Mutex
	calls []telephony.CallRequest
	at    []time.Time
	err   error
}

var _ telephony.Provider = (*provider)(nil)

func (p *provider) Place(_ context.Context, req telephony.CallRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	p.calls, p.at = append(p.calls, req), append(p.at, p.clock.Now())
	return nil
}

type fixture struct {
	clock *testclock.Clock
	calls *memory.Calls
	pacer *memory.Pacer
	queue *sent
	prov  *provider
	d     *Dialer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clock: testclock.At(t0), calls: memory.NewCalls(), pacer: memory.NewPacer(), queue: &sent{}}
	f.prov = &provider{clock: f.clock}
	f.d = &Dialer{Calls: calls.New(f.calls, f.clock.Now), Pacer: f.pacer, Queue: f.queue, Provider: f.prov, Now: f.clock.Now, Sleep: f.clock.Sleep,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return f
}

// trigger stores a queued call as the trigger does and returns its job.
func (f *fixture) trigger(t *testing.T, acct, to string) voiceops.DialJob {
	t.Helper()
	c := voiceops.Call{SID: voiceops.NewCallSID(), AccountID: acct, ProjectID: "proj_1", ToNumber: to, Metadata: map[string]any{"name": "Ada"},
		Status: voiceops.CallQueued, CreatedAt: f.clock.Now(), UpdatedAt: f.clock.Now()}
	if err := f.calls.CreateCall(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return voiceops.DialJob{SID: c.SID, AccountID: acct, QueuedAt: c.CreatedAt}
}

func (f *fixture) status(t *testing.T, sid string) voiceops.Call {
	t.Helper()
	c, err := f.calls.GetCall(context.Background(), sid, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPacedAtTheAccountRate(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var jobs []voiceops.DialJob
	for range 5 {
		jobs = append(jobs, f.trigger(t, "acct_a", "+14155550100"))
	}
	other := f.trigger(t, "acct_b", "+14155550100")
	for _, j := range jobs {
		if err := f.d.Handle(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Set(t0)
	if err := f.d.Handle(ctx, other); err != nil {
		t.Fatal(err)
	}
	if len(f.prov.at) != 6 {
		t.Fatalf("%d calls placed, want 6", len(f.prov.at))
	}
	for i := range 5 {
		if want := t0.Add(time.Duration(i) * time.Second); !f.prov.at[i].Equal(want) {
			t.Errorf("call %d placed at +%s, want +%s", i, f.prov.at[i].Sub(t0), want.Sub(t0))
		}
		if c := f.status(t, jobs[i].SID); c.Status != voiceops.CallCalling {
			t.Errorf("call %d is %s after placing, want calling", i, c.Status)
		}
	}
	if !f.prov.at[5].Equal(t0) {
		t.Errorf("another account's call waited: placed at +%s", f.prov.at[5].Sub(t0))
	}
	req := f.prov.calls[0]
	if req.SID != jobs[0].SID || req.To != "+14155550100" || req.ProjectID != "proj_1" || req.Metadata["name"] != "Ada" {
		t.Errorf("placed %+v", req)
	}
	// Each placed call queued its timeout check.
	checks, lags := f.queue.take()
	if len(checks) != 6 || !checks[0].Check || checks[0].SID != jobs[0].SID || !checks[0].Deadline.Equal(t0.Add(voiceops.CallTimeout)) || lags[0] != MaxQueueDelay {
		t.Errorf("checks %+v lags %v", checks, lags)
	}
}

func TestFarSlotGoesBackToTheQueue(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := f.pacer.SetRate(ctx, "acct_a", 0.5); err != nil { // a slot every 2 s
		t.Fatal(err)
	}
	for range 3 { // slots +0, +2, +4 taken by other dialers
		if _, err := f.pacer.ReserveSlot(ctx, "acct_a", t0); err != nil {
			t.Fatal(err)
		}
	}
	j := f.trigger(t, "acct_a", "+14155550100")
	if err := f.d.Handle(ctx, j); err != nil {
		t.Fatal(err)
	}
	back, lags := f.queue.take()
	// Slot +6 s: back to the queue for 6-3+1 = 4 s, carrying the slot.
	if len(back) != 1 || !back[0].Slot.Equal(t0.Add(6*time.Second)) || lags[0] != 4*time.Second || len(f.prov.at) != 0 {
		t.Fatalf("sent back %+v after %v; placed %v", back, lags, f.prov.at)
	}
	if f.status(t, j.SID).Status != voiceops.CallQueued {
		t.Errorf("the call is no longer queued before its slot")
	}
	// SQS brings it back 4 s later; the rest of the wait is in process.
	f.clock.Set(t0.Add(4 * time.Second))
	if err := f.d.Handle(ctx, back[0]); err != nil {
		t.Fatal(err)
	}
	if len(f.prov.at) != 1 || !f.prov.at[0].Equal(t0.Add(6*time.Second)) {
		t.Errorf("placed at %v, want at +6s", f.prov.at)
	}
	// The reserved slot was used, not a new one: the next is +8 s.
	if s, _ := f.pacer.ReserveSlot(ctx, "acct_a", t0); !s.Equal(t0.Add(8 * time.Second)) {
		t.Errorf("next slot +%s, want +8s", s.Sub(t0))
	}
}

func TestNeverDialedTwice(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	j := f.trigger(t, "acct_a", "+14155550100")
	for range 3 { // at-least-once delivery
		if err := f.d.Handle(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.prov.calls) != 1 {
		t.Errorf("placed %d times", len(f.prov.calls))
	}
}

func TestTimeoutCheck(t *testing.T) {
	for _, tc := range []struct {
		name       string
		report     telephony.Status
		want       voiceops.CallStatus
		wantReason string
	}{
		{"no report", "", voiceops.CallFailure, voiceops.ReasonTimeout},
		{"ended before", telephony.StatusCompleted, voiceops.CallSuccess, ""},
		{"busy before", telephony.StatusBusy, voiceops.CallFailure, voiceops.ReasonBusy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			j := f.trigger(t, "acct_a", "+14155550100")
			if err := f.d.Handle(ctx, j); err != nil {
				t.Fatal(err)
			}
			checks, _ := f.queue.take()
			if tc.report != "" {
				if _, err := f.d.Calls.Report(ctx, j.SID, tc.report); err != nil {
					t.Fatal(err)
				}
			}
			// Early (SQS's 15 minutes): back to the queue for the rest.
			f.clock.Set(t0.Add(MaxQueueDelay))
			if err := f.d.Handle(ctx, checks[0]); err != nil {
				t.Fatal(err)
			}
			again, lags := f.queue.take()
			if len(again) != 1 || lags[0] != min(voiceops.CallTimeout-MaxQueueDelay, MaxQueueDelay) {
				t.Fatalf("early check re-sent %+v %v", again, lags)
			}
			if c := f.status(t, j.SID); c.Status == voiceops.CallFailure && c.Reason == voiceops.ReasonTimeout {
				t.Fatalf("failed by an early check")
			}
			f.clock.Set(checks[0].Deadline)
			if err := f.d.Handle(ctx, checks[0]); err != nil {
				t.Fatal(err)
			}
			if c := f.status(t, j.SID); c.Status != tc.want || c.Reason != tc.wantReason {
				t.Errorf("after the deadline: %s %q, want %s %q", c.Status, c.Reason, tc.want, tc.wantReason)
			}
		})
	}
}

func TestProviderRefusal(t *testing.T) {
	f := newFixture(t)
	f.prov.err = errors.Join(telephony.ErrRejected, errors.New("21211 invalid To"))
	j := f.trigger(t, "acct_a", "+14155550100")
	if err := f.d.Handle(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if c := f.status(t, j.SID); c.Status != voiceops.CallFailure || c.Reason != voiceops.ReasonFailed {
		t.Errorf("refused call: %s %q", c.Status, c.Reason)
	}
}

func TestOrphanJobs(t *testing.T) {
	// The trigger sends the job and writes its call at once, acknowledging
	// the call within its request deadline: a job waits for its call that
	// long at least.
	if orphanAge < httpapi.DefaultDeadline {
		t.Fatalf("orphanAge %s is shorter than the trigger's deadline %s", orphanAge, httpapi.DefaultDeadline)
	}
	f := newFixture(t)
	ctx := context.Background()
	// The trigger's write failed: the job is dropped once it is old.
	lost := voiceops.DialJob{SID: voiceops.NewCallSID(), AccountID: "acct_a", QueuedAt: t0}
	if err := f.d.Handle(ctx, lost); err != nil {
		t.Fatal(err)
	}
	if f.clock.Now().Sub(t0) < orphanAge || len(f.prov.calls) != 0 {
		t.Errorf("orphan dropped after %s, placed %d", f.clock.Now().Sub(t0), len(f.prov.calls))
	}
	// The job overtook the trigger's write: the dialer waits for the call.
	f.clock.Set(t0.Add(time.Hour))
	c := voiceops.Call{SID: voiceops.NewCallSID(), AccountID: "acct_a", ProjectID: "proj_1", ToNumber: "+14155550100",
		Status: voiceops.CallQueued, CreatedAt: f.clock.Now(), UpdatedAt: f.clock.Now()}
	late := voiceops.DialJob{SID: c.SID, AccountID: "acct_a", QueuedAt: f.clock.Now()}
	sleeps := 0
	f.d.Sleep = func(ctx context.Context, d time.Duration) error {
		if sleeps++; sleeps == 2 {
			if err := f.calls.CreateCall(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		return f.clock.Sleep(ctx, d)
	}
	if err := f.d.Handle(ctx, late); err != nil {
		t.Fatal(err)
	}
	if len(f.prov.calls) != 1 || f.prov.calls[0].SID != c.SID {
		t.Errorf("late call not placed: %+v", f.prov.calls)
	}
}

func TestHandleSQS(t *testing.T) {
	f := newFixture(t)
	j := f.trigger(t, "acct_a", "+14155550100")
	body := `{"sid":"` + j.SID + `","account_id":"acct_a","queued_at":"` + t0.Format(time.RFC3339Nano) + `"}`
	res, err := f.d.HandleSQS(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", Body: body}, {MessageId: "m2", Body: `{"sid":"nope"}`}, {MessageId: "m3", Body: `not json`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, it := range res.BatchItemFailures {
		failed[it.ItemIdentifier] = true
	}
	if len(failed) != 2 || !failed["m2"] || !failed["m3"] || len(f.prov.calls) != 1 {
		t.Errorf("failures %v, placed %d", failed, len(f.prov.calls))
	}
}

// failingPacer fails every reservation (a store down).
type failingPacer struct{}

func (failingPacer) ReserveSlot(context.Context, string, time.Time) (time.Time, error) {
	return time.Time{}, errors.New("table unavailable")
}

// TestLastReceiveGivesTheCallUp: a job that fails on every receive ends its
// call as failure on the last receive before the DLQ, instead of leaving it
// queued; earlier receives only report the failure (SQS retries).
func TestLastReceiveGivesTheCallUp(t *testing.T) {
	f := newFixture(t)
	f.d.Pacer = failingPacer{}
	j := f.trigger(t, "acct_a", "+14155550100")
	body := `{"sid":"` + j.SID + `","account_id":"acct_a","queued_at":"` + t0.Format(time.RFC3339Nano) + `"}`
	for receive, wantFailed := range map[string]bool{"1": true, "4": true} {
		res, _ := f.d.HandleSQS(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
			{MessageId: "m", Body: body, Attributes: map[string]string{"ApproximateReceiveCount": receive}}}})
		if (len(res.BatchItemFailures) == 1) != wantFailed || f.status(t, j.SID).Status != voiceops.CallQueued {
			t.Errorf("receive %s: %+v, call %s", receive, res, f.status(t, j.SID).Status)
		}
	}
	res, _ := f.d.HandleSQS(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m", Body: body, Attributes: map[string]string{"ApproximateReceiveCount": "5"}}}})
	if c := f.status(t, j.SID); len(res.BatchItemFailures) != 0 || c.Status != voiceops.CallFailure || c.Reason != voiceops.ReasonFailed {
		t.Errorf("last receive: %+v, call %s %q", res, c.Status, c.Reason)
	}
	if len(f.prov.calls) != 0 {
		t.Errorf("placed %d calls", len(f.prov.calls))
	}
}

// retriedCalls is a call store whose MoveCall lands, then reports the
// refusal a retried conditional write gets (the SDK retrying a request
// whose first attempt succeeded).
type retriedCalls struct {
	*memory.Calls
	once sync.Once
}

func (r *retriedCalls) MoveCall(ctx context.Context, sid string, to voiceops.CallStatus, reason string, at time.Time) (voiceops.Call, error) {
	c, err := r.Calls.MoveCall(ctx, sid, to, reason, at)
	retried := false
	r.once.Do(func() { retried = true })
	if err == nil && retried {
		return voiceops.Call{}, voiceops.ErrCallTransition
	}
	return c, err
}

// TestOwnClaimRetried: a claim whose write landed but was reported refused
// (a retried request) is still ours: the call is placed, once.
func TestOwnClaimRetried(t *testing.T) {
	f := newFixture(t)
	f.d.Calls.Calls = &retriedCalls{Calls: f.calls}
	j := f.trigger(t, "acct_a", "+14155550100")
	if err := f.d.Handle(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if len(f.prov.calls) != 1 || f.status(t, j.SID).Status != voiceops.CallCalling {
		t.Errorf("placed %d, status %s", len(f.prov.calls), f.status(t, j.SID).Status)
	}
	// Another dialer's claim (an earlier time) is not ours.
	g := newFixture(t)
	k := g.trigger(t, "acct_a", "+14155550100")
	if _, err := g.calls.MoveCall(context.Background(), k.SID, voiceops.CallCalling, "", t0.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	c, _ := g.calls.GetCall(context.Background(), k.SID, t0)
	if err := g.d.place(context.Background(), c); err != nil || len(g.prov.calls) != 0 {
		t.Errorf("placed a call another dialer claimed: %v %d", err, len(g.prov.calls))
	}
}
