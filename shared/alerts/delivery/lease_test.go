package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// diesAfterClaim is a delivery store on which a dispatcher's claim lands
// but its result never does: the dispatcher died while the receiver held
// the request, before it could record anything.
type diesAfterClaim struct{ voiceops.DeliveryStore }

var errKilled = errors.New("test: the dispatcher was killed")

func (s diesAfterClaim) RecordAttempt(ctx context.Context, d voiceops.Delivery, expectAttempts int) error {
	if n := len(d.Attempts); n > 0 && n == expectAttempts && !d.Attempts[n-1].Open() {
		return errKilled // the result write
	}
	return s.DeliveryStore.RecordAttempt(ctx, d, expectAttempts)
}

// TestDeadDispatchersClaimIsTakenOverAfterTimeoutPlusMargin: a
// dispatcher killed during an attempt delays the delivery by the endpoint's
// timeout plus delivery.LeaseMargin (10 s), not minutes. The claimer itself
// queues the copy that will judge its claim, due when the lease ends, so
// the takeover does not wait for the queue's visibility timeout (6 min in
// deployed stacks). Before the lease ends the claim stands; once it has
// ended the attempt is closed as interrupted and the next one scheduled.
func TestDeadDispatchersClaimIsTakenOverAfterTimeoutPlusMargin(t *testing.T) {
	for _, timeoutMS := range []int64{voiceops.MinTimeoutMS, voiceops.DefaultTimeoutMS, voiceops.MaxTimeoutMS} {
		t.Run(fmt.Sprintf("timeout_ms=%d", timeoutMS), func(t *testing.T) {
			lease := time.Duration(timeoutMS)*time.Millisecond + 10*time.Second
			rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
			q := &recordingQueue{}
			e := newEnv(t, rc, envOptions{queue: q})
			dispatcher := func(d voiceops.DeliveryStore) *delivery.Dispatcher {
				return delivery.NewDispatcher(delivery.Config{
					Stores: voiceops.Stores{Endpoints: e.stores.Endpoints, Events: e.stores.Events, Deliveries: d},
					Queue:  q, Sender: rc.sender(), Now: e.clock.Now, Rand: func() float64 { return 0 },
					Logger: slog.New(slog.DiscardHandler),
				})
			}
			dead, healthy := dispatcher(diesAfterClaim{e.stores.Deliveries}), dispatcher(e.stores.Deliveries)
			ep := e.endpoint("/hook", func(ep *voiceops.WebhookEndpoint) { ep.TimeoutMS = timeoutMS })
			ev := e.event()
			if err := healthy.Fanout(t.Context(), ev); err != nil {
				t.Fatal(err)
			}
			m := q.take(t)

			// The dispatcher claims attempt 1, sends it and dies.
			claimedAt := e.clock.Now()
			if err := dead.Handle(t.Context(), m); !errors.Is(err, errKilled) {
				t.Fatalf("dead dispatcher: %v", err)
			}
			if d := e.delivery(ev, ep); len(d.Attempts) != 1 || !d.Attempts[0].Open() {
				t.Fatalf("want attempt 1 claimed and open, got %+v", d.Attempts)
			}

			// What comes back for attempt 1 is due by the end of the lease.
			back := m // without it, only the queue's re-delivery of m remains
			switch msgs, delays := q.takeChecks(); {
			case len(msgs) != 1 || msgs[0].Attempt != 1 || msgs[0].DeliveryID != m.DeliveryID || delays[0] != lease:
				t.Errorf("after the claim: queued %+v in %v, want attempt 1 in %v (timeout + 10 s)", msgs, delays, lease)
			default:
				back = msgs[0]
			}

			// Just before the lease ends, the claim stands.
			e.clock.Advance(claimedAt.Add(lease - time.Millisecond).Sub(e.clock.Now()))
			if err := healthy.Handle(t.Context(), back); err != nil {
				t.Fatal(err)
			}
			msgs, delays := q.takeChecks()
			if len(msgs) != 1 || msgs[0].Attempt != 1 || delays[0] != time.Millisecond || len(q.takeAll()) != 0 {
				t.Fatalf("1 ms before the lease ends: queued %+v in %v, want the check copy of attempt 1 in 1ms", msgs, delays)
			}
			again := msgs[0]
			if d := e.delivery(ev, ep); len(d.Attempts) != 1 || !d.Attempts[0].Open() {
				t.Fatalf("taken over before the lease ended: %+v", d.Attempts)
			}

			// At the end of the lease, it is taken over.
			e.clock.Advance(time.Millisecond)
			if err := healthy.Handle(t.Context(), again); err != nil {
				t.Fatal(err)
			}
			next := q.take(t)
			if next.Attempt != 2 {
				t.Fatalf("at the end of the lease: queued attempt %d, want 2", next.Attempt)
			}
			d := e.delivery(ev, ep)
			if len(d.Attempts) != 1 || d.Attempts[0].Open() || d.Attempts[0].Error != "interrupted: the dispatcher stopped before recording a result" ||
				d.Attempts[0].DurationMS != lease.Milliseconds() || d.Status != voiceops.DeliveryPending {
				t.Errorf("attempt 1 after the takeover: %+v (%s)", d.Attempts, d.Status)
			}
			if total := e.clock.Now().Sub(claimedAt); total >= time.Minute {
				t.Errorf("the crash delayed the delivery by %v", total)
			}
		})
	}
}

// TestCheckCopyOfARecordedAttemptIsDropped: when the claimer lives, its
// check copy finds the attempt recorded and does nothing: no request, no
// second copy of the next attempt.
func TestCheckCopyOfARecordedAttemptIsDropped(t *testing.T) {
	for name, code := range map[string]int{"delivered": http.StatusOK, "retried": http.StatusBadGateway} {
		t.Run(name, func(t *testing.T) {
			e, q, ep, ev, m := pipeline(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) })
			if err := e.d.Handle(t.Context(), m); err != nil {
				t.Fatal(err)
			}
			checks, delays := q.takeChecks()
			if len(checks) != 1 || !checks[0].Check || checks[0].Attempt != 1 || delays[0] != time.Minute {
				t.Fatalf("check copies %+v in %v, want one of attempt 1 in the lease (1m)", checks, delays)
			}
			before := q.takeAll()
			e.clock.Advance(time.Minute)
			if err := e.d.Handle(t.Context(), checks[0]); err != nil {
				t.Fatal(err)
			}
			after, more := q.takeAll(), len(first(q.takeChecks()))
			if len(after) != 0 || more != 0 {
				t.Errorf("the check copy queued %+v and %d check copies; want nothing", after, more)
			}
			if n := len(e.rc.requests()); n != 1 {
				t.Errorf("receiver got %d requests, want 1", n)
			}
			if d := e.delivery(ev, ep); len(d.Attempts) != 1 || d.Attempts[0].StatusCode != code {
				t.Errorf("attempts %+v", d.Attempts)
			}
			if code != http.StatusOK && (len(before) != 1 || before[0].Attempt != 2) {
				t.Errorf("the claimer queued %+v, want attempt 2", before)
			}
		})
	}
}

// TestNoClaimWithoutItsCheckCopy: if the check copy cannot be queued, the
// attempt is neither claimed nor sent, and the message comes back.
func TestNoClaimWithoutItsCheckCopy(t *testing.T) {
	e, q, ep, ev, m := pipeline(t, nil)
	q.checkErr = errors.New("queue unavailable")
	if err := e.d.Handle(t.Context(), m); err == nil {
		t.Fatal("Handle hid the queue's failure")
	}
	if d := e.delivery(ev, ep); len(d.Attempts) != 0 {
		t.Errorf("claimed without a check copy: %+v", d.Attempts)
	}
	if n := len(e.rc.requests()); n != 0 {
		t.Errorf("receiver got %d requests", n)
	}
	q.checkErr = nil
	if err := e.d.Handle(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryDelivered, 204)
}

// TestCheckCopyNeverMakesAnAttempt: a check copy of an attempt nobody has
// claimed yet drops.
func TestCheckCopyNeverMakesAnAttempt(t *testing.T) {
	e, q, ep, ev, m := pipeline(t, nil)
	m.Check = true
	if err := e.d.Handle(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	if d := e.delivery(ev, ep); len(d.Attempts) != 0 || len(e.rc.requests()) != 0 || len(q.takeAll()) != 0 || len(first(q.takeChecks())) != 0 {
		t.Errorf("a check copy made or queued something: %+v", d.Attempts)
	}
}

// TestLeaseOfADeletedEndpointsClaim: with the endpoint gone, a claim is
// judged with the largest timeout's lease.
func TestLeaseOfADeletedEndpointsClaim(t *testing.T) {
	rc := newReceiver(t, nil)
	q := &recordingQueue{}
	e := newEnv(t, rc, envOptions{queue: q})
	d := delivery.NewDispatcher(delivery.Config{Stores: e.stores, Queue: q, Sender: rc.sender(), Now: e.clock.Now, Logger: slog.New(slog.DiscardHandler)})
	ep := e.endpoint("/hook", nil)
	ev := e.event()
	if err := d.Fanout(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	m := q.take(t)
	dl := e.delivery(ev, ep)
	dl.Attempts = []voiceops.DeliveryAttempt{{Number: 1, At: e.clock.Now()}}
	dl.NextAttemptAt = nil
	if err := e.stores.Deliveries.RecordAttempt(t.Context(), dl, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.stores.Endpoints.DeleteEndpoint(t.Context(), testAccount, ep.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(15 * time.Second) // the lease of the endpoint's 5 s timeout
	if err := d.Handle(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	back, delay := q.takeDelay(t)
	if back != m || delay != 25*time.Second {
		t.Errorf("queued %+v in %v, want the same message in 25s (30 s + 10 s lease)", back, delay)
	}
}

// first returns the first of two results.
func first[A, B any](a A, _ B) A { return a }
