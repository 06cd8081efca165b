package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// recordingQueue keeps what is sent, for the test to hand to Handle. The
// check copies a dispatcher queues before each claim are kept apart
// (takeChecks), so the other messages of the protocol read on their own;
// err fails the sends of the others, checkErr those of check copies.
type recordingQueue struct {
	mu          sync.Mutex
	msgs        []queue.Message
	delays      []time.Duration
	err         error
	checks      []queue.Message
	checkDelays []time.Duration
	checkErr    error
}

var _ queue.Queue = (*recordingQueue)(nil)

func (q *recordingQueue) Send(_ context.Context, m queue.Message, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if m.Check {
		if q.checkErr != nil {
			return q.checkErr
		}
		q.checks = append(q.checks, m)
		q.checkDelays = append(q.checkDelays, delay)
		return nil
	}
	if q.err != nil {
		return q.err
	}
	q.msgs = append(q.msgs, m)
	q.delays = append(q.delays, delay)
	return nil
}

// takeChecks takes the check copies queued so far and their delays.
func (q *recordingQueue) takeChecks() ([]queue.Message, []time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	m, d := q.checks, q.checkDelays
	q.checks, q.checkDelays = nil, nil
	return m, d
}

func (q *recordingQueue) takeAll() []queue.Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.msgs
	q.msgs, q.delays = nil, nil
	return out
}

// takeDelay takes the only queued message and its delay.
func (q *recordingQueue) takeDelay(t *testing.T) (queue.Message, time.Duration) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.msgs) != 1 {
		t.Fatalf("%d messages queued, want 1: %+v", len(q.msgs), q.msgs)
	}
	m, d := q.msgs[0], q.delays[0]
	q.msgs, q.delays = nil, nil
	return m, d
}

func (q *recordingQueue) take(t *testing.T) queue.Message {
	t.Helper()
	m, _ := q.takeDelay(t)
	return m
}

func sameMessages(a, b []queue.Message) bool {
	key := func(ms []queue.Message) []string {
		var out []string
		for _, m := range ms {
			b, _ := json.Marshal(m)
			out = append(out, string(b))
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}

// pipeline returns an env on a recording queue with one endpoint, one
// fanned-out event and its first message taken from the queue.
func pipeline(t *testing.T, respond func(int, http.ResponseWriter, *http.Request)) (*env, *recordingQueue, voiceops.WebhookEndpoint, voiceops.AlertEvent, queue.Message) {
	t.Helper()
	rc := newReceiver(t, respond)
	q := &recordingQueue{}
	e := newEnv(t, rc, envOptions{queue: q, lease: time.Minute})
	ep := e.endpoint("/hook", nil)
	ev := e.publish()
	return e, q, ep, ev, q.take(t)
}

func TestInterruptedClaimIsClosedAndTheNextAttemptMade(t *testing.T) {
	e, q, ep, ev, m := pipeline(t, nil)
	// A claimer took attempt 1 and died before recording anything.
	d := e.delivery(ev, ep)
	claimed := d
	claimed.Attempts = []voiceops.DeliveryAttempt{{Number: 1, At: e.clock.Now()}}
	claimed.NextAttemptAt = nil
	if err := e.stores.Deliveries.RecordAttempt(t.Context(), claimed, 0); err != nil {
		t.Fatal(err)
	}

	// Within the lease, the message goes back for the rest of it.
	e.clock.Advance(20 * time.Second)
	if err := e.d.Handle(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	back, delay := q.takeDelay(t)
	if back != m || delay != 40*time.Second {
		t.Errorf("within the lease: queued %+v in %v, want the same message in 40s", back, delay)
	}
	if n := len(e.rc.requests()); n != 0 {
		t.Fatalf("sent %d requests within the lease", n)
	}

	// After it, attempt 1 is closed as interrupted (never sent again) and
	// attempt 2 is scheduled.
	e.clock.Advance(time.Minute)
	if err := e.d.Handle(t.Context(), back); err != nil {
		t.Fatal(err)
	}
	next, delay := q.takeDelay(t)
	if next.Attempt != 2 || delay != quickSchedule[1] {
		t.Errorf("after the lease: queued attempt %d in %v, want 2 in %v", next.Attempt, delay, quickSchedule[1])
	}
	d = e.delivery(ev, ep)
	wantLog(t, d, voiceops.DeliveryPending, 0)
	if !strings.HasPrefix(d.Attempts[0].Error, "interrupted") {
		t.Errorf("attempt 1's error %q", d.Attempts[0].Error)
	}
	if err := e.d.Handle(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	if n := len(e.rc.requests()); n != 1 {
		t.Errorf("receiver got %d requests, want 1 (attempt 2)", n)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryDelivered, 0, 204)
}

func TestResultWithoutNextAttemptIsRepaired(t *testing.T) {
	e, q, ep, ev, m := pipeline(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.WriteHeader(http.StatusBadGateway)
		}
	})
	q.err = errors.New("queue unavailable")
	if err := e.d.Handle(t.Context(), m); err == nil {
		t.Fatal("Handle hid the queue's failure: the message would be acknowledged and the retry lost")
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryPending, 502)

	// The message comes back: the next attempt is queued, nothing re-sent.
	q.err = nil
	if err := e.d.Handle(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	next := q.take(t)
	if next.Attempt != 2 {
		t.Fatalf("queued attempt %d, want 2", next.Attempt)
	}
	if n := len(e.rc.requests()); n != 1 {
		t.Errorf("receiver got %d requests, want 1", n)
	}
	if err := e.d.Handle(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryDelivered, 502, 200)
}

func TestStaleAndForeignMessagesAreDropped(t *testing.T) {
	e, q, ep, ev, m := pipeline(t, nil)
	if err := e.d.Handle(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]queue.Message{
		"a copy of a done attempt":       m,
		"an attempt from the past":       func() queue.Message { c := m; c.Attempt = 5; return c }(),
		"no such delivery":               func() queue.Message { c := m; c.DeliveryID = "dlv_missing"; return c }(),
		"another account":                func() queue.Message { c := m; c.AccountID = "acct_other"; return c }(),
		"the delivery of an other event": func() queue.Message { c := m; c.EventID = "evt_other"; return c }(),
	} {
		if err := e.d.Handle(t.Context(), bad); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := len(e.rc.requests()); n != 1 {
		t.Errorf("receiver got %d requests, want 1", n)
	}
	if left := q.takeAll(); len(left) != 0 {
		t.Errorf("queued %+v, want nothing", left)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryDelivered, 204)
}

func TestEarlyMessageWaitsForTheRest(t *testing.T) {
	e, q, _, _, m := pipeline(t, nil)
	m.NotBefore = e.clock.Now().Add(3 * time.Hour)
	if err := e.d.Handle(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	back, delay := q.takeDelay(t)
	if back != m || delay != 3*time.Hour {
		t.Errorf("queued %+v in %v, want the same message in 3h", back, delay)
	}
	if n := len(e.rc.requests()); n != 0 {
		t.Errorf("an early message was sent")
	}
}

func TestStoreFailureIsReturned(t *testing.T) {
	e, _, _, _, m := pipeline(t, nil)
	failing := delivery.NewDispatcher(delivery.Config{
		Stores: voiceops.Stores{Endpoints: e.stores.Endpoints, Events: e.stores.Events, Deliveries: failingDeliveries{e.stores.Deliveries}},
		Queue:  &recordingQueue{}, Sender: e.rc.sender(),
	})
	if err := failing.Handle(t.Context(), m); err == nil {
		t.Error("a store failure was swallowed: the message would be lost")
	}
}

type failingDeliveries struct{ voiceops.DeliveryStore }

func (failingDeliveries) GetDelivery(context.Context, string, string, string) (voiceops.Delivery, error) {
	return voiceops.Delivery{}, errors.New("throttled")
}

func TestHandleSQSReportsOnlyFailedRecords(t *testing.T) {
	e, q, ep, ev, m := pipeline(t, nil)
	good, _ := queue.Encode(m)
	missing := m
	missing.DeliveryID = "dlv_missing"
	dropped, _ := queue.Encode(missing)
	resp, err := e.d.HandleSQS(t.Context(), events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m-good", Body: string(good)},
		{MessageId: "m-malformed", Body: `{"attempt":`},
		{MessageId: "m-dropped", Body: string(dropped)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m-malformed" {
		t.Errorf("batch item failures %+v, want only m-malformed", resp.BatchItemFailures)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryDelivered, 204)
	if left := q.takeAll(); len(left) != 0 {
		t.Errorf("queued %+v", left)
	}
	b, _ := json.Marshal(resp)
	if !strings.Contains(string(b), `"batchItemFailures"`) {
		t.Errorf("response JSON %s", b)
	}
}

func TestRetry(t *testing.T) {
	e, q, ep, ev, m := pipeline(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		switch n {
		case 1, 2:
			w.WriteHeader(http.StatusGone)
		default:
			w.WriteHeader(http.StatusOK)
		}
	})
	did := voiceops.DeliveryID(ev.ID, ep.ID)
	if _, err := e.d.Retry(t.Context(), testAccount, ep.ID, did); !errors.Is(err, delivery.ErrDeliveryInProgress) {
		t.Errorf("Retry of a pending delivery: want ErrDeliveryInProgress, got %v", err)
	}
	if err := e.d.Handle(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryFailed, 410)

	// A manual retry is one attempt: failing again, it is not scheduled.
	d, err := e.d.Retry(t.Context(), testAccount, ep.ID, did)
	if err != nil {
		t.Fatalf("Retry: %v", err)
	}
	wantLog(t, d, voiceops.DeliveryPending, 410)
	r := q.take(t)
	if r.Attempt != 2 || !r.Manual {
		t.Fatalf("Retry queued %+v, want manual attempt 2", r)
	}
	if err := e.d.Handle(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryFailed, 410, 410)

	// Another one succeeds; a delivered delivery can be sent again too.
	if _, err := e.d.Retry(t.Context(), testAccount, ep.ID, did); err != nil {
		t.Fatal(err)
	}
	if err := e.d.Handle(t.Context(), q.take(t)); err != nil {
		t.Fatal(err)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryDelivered, 410, 410, 200)
	if _, err := e.d.Retry(t.Context(), testAccount, ep.ID, did); err != nil {
		t.Errorf("Retry of a delivered delivery: %v", err)
	}
	if n := q.take(t).Attempt; n != 4 {
		t.Errorf("Retry queued attempt %d, want 4", n)
	}
	for _, id := range e.rc.requests() {
		if id.header.Get("webhook-id") != ev.ID {
			t.Errorf("a retry changed the webhook-id to %q", id.header.Get("webhook-id"))
		}
	}

	_, err = e.d.Retry(t.Context(), testAccount, ep.ID, "dlv_missing")
	if !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("Retry of an unknown delivery: want ErrNotFound, got %v", err)
	}
	_, err = e.d.Retry(t.Context(), "acct_other", ep.ID, did)
	if !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("Retry from another account: want ErrNotFound, got %v", err)
	}
}

func TestRetryRefusals(t *testing.T) {
	e, q, ep, ev, m := pipeline(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) })
	if err := e.d.Handle(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	did := voiceops.DeliveryID(ev.ID, ep.ID)

	q.err = errors.New("queue unavailable")
	if _, err := e.d.Retry(t.Context(), testAccount, ep.ID, did); voiceops.KindOf(err) != voiceops.KindInternal {
		t.Errorf("Retry with the queue down: want an internal error, got %v", err)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryFailed, 400) // put back
	q.err = nil

	// A delivery that has had MaxAttempts takes no more: its log is
	// kept in one record, under the item limit.
	for i := 1; i < delivery.MaxAttempts; i++ {
		if _, err := e.d.Retry(t.Context(), testAccount, ep.ID, did); err != nil {
			t.Fatalf("Retry %d: %v", i+1, err)
		}
		if err := e.d.Handle(t.Context(), q.take(t)); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(e.delivery(ev, ep).Attempts); got != delivery.MaxAttempts {
		t.Fatalf("%d attempts, want %d", got, delivery.MaxAttempts)
	}
	if _, err := e.d.Retry(t.Context(), testAccount, ep.ID, did); !errors.Is(err, delivery.ErrAttemptLimit) {
		t.Errorf("Retry past MaxAttempts: want ErrAttemptLimit, got %v", err)
	}

	off := ep
	off.Enabled, off.Version = false, ep.Version+1
	if err := e.stores.Endpoints.UpdateEndpoint(t.Context(), off, ep.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := e.d.Retry(t.Context(), testAccount, ep.ID, did); !errors.Is(err, delivery.ErrEndpointDisabled) {
		t.Errorf("Retry to a disabled endpoint: want ErrEndpointDisabled, got %v", err)
	}
	if err := e.stores.Endpoints.DeleteEndpoint(t.Context(), testAccount, ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.d.Retry(t.Context(), testAccount, ep.ID, did); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("Retry to a deleted endpoint: want ErrNotFound, got %v", err)
	}
}

func TestSendTest(t *testing.T) {
	rc := newReceiver(t, nil)
	e := newEnv(t, rc, envOptions{})
	ep := e.endpoint("/hook", func(ep *voiceops.WebhookEndpoint) { ep.EventTypes = []voiceops.EventType{voiceops.EventResolved} })
	other := e.endpoint("/other", nil)
	ev, d, err := e.d.SendTest(t.Context(), ep)
	if err != nil {
		t.Fatalf("SendTest: %v", err)
	}
	if d.ID != voiceops.DeliveryID(ev.ID, ep.ID) || !d.Test || d.EndpointID != ep.ID || ev.EndpointID != ep.ID || !ev.FannedOut {
		t.Errorf("SendTest returned %+v and %+v", ev, d)
	}
	e.drain()
	reqs := rc.requests()
	if len(reqs) != 1 || reqs[0].path != "/hook" {
		t.Fatalf("requests %+v, want one to /hook alone (not to %s)", reqs, other.URL)
	}
	verify(t, reqs[0], secretA)
	var body map[string]any
	if err := json.Unmarshal(reqs[0].body, &body); err != nil {
		t.Fatal(err)
	}
	alert, _ := body["alert"].(map[string]any)
	if body["test"] != true || body["event_type"] != "alerts.triggered" || body["event_id"] != ev.ID || alert == nil || alert["triggered_at"] == nil {
		t.Errorf("test body %s", reqs[0].body)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryDelivered, 204)
}

// TestSendTestToAnUnusableEndpointIsSkipped: a test of a disabled
// endpoint, or of one deleted between the caller's read and the test's
// write, still gets its delivery, which the dispatcher logs as skipped.
func TestSendTestToAnUnusableEndpointIsSkipped(t *testing.T) {
	for name, c := range map[string]struct {
		edit    func(*voiceops.WebhookEndpoint)
		deleted bool
	}{
		"disabled": {edit: func(ep *voiceops.WebhookEndpoint) { ep.Enabled = false }},
		"deleted":  {deleted: true},
	} {
		t.Run(name, func(t *testing.T) {
			rc := newReceiver(t, nil)
			e := newEnv(t, rc, envOptions{})
			ep := e.endpoint("/hook", c.edit)
			if c.deleted {
				if err := e.stores.Endpoints.DeleteEndpoint(t.Context(), testAccount, ep.ID); err != nil {
					t.Fatal(err)
				}
			}
			ev, _, err := e.d.SendTest(t.Context(), ep)
			if err != nil {
				t.Fatal(err)
			}
			e.drain()
			if n := len(rc.requests()); n != 0 {
				t.Errorf("receiver got %d requests", n)
			}
			wantLog(t, e.delivery(ev, ep), voiceops.DeliverySkipped)
		})
	}
}

// unreadEndpoints is an endpoint store that must not be read.
type unreadEndpoints struct{ voiceops.EndpointStore }

func (unreadEndpoints) GetEndpoint(context.Context, string, string) (voiceops.WebhookEndpoint, error) {
	return voiceops.WebhookEndpoint{}, errors.New("the endpoint was read again")
}

// TestSendTestWritesOnceAndRepairsAFailedSend: SendTest takes the endpoint
// as the caller read it (no read of its own), writes the event and its
// delivery together, queues the first attempt, then marks the event
// fanned out. When the queue fails, the event stays pending with its
// delivery: the repair pass's fan-out queues the same delivery's first
// attempt and marks it.
func TestSendTestWritesOnceAndRepairsAFailedSend(t *testing.T) {
	rc := newReceiver(t, nil)
	q := &recordingQueue{}
	e := newEnv(t, rc, envOptions{queue: q})
	ep := e.endpoint("/hook", nil)
	out := delivery.NewOutbox(voiceops.Stores{Endpoints: unreadEndpoints{e.stores.Endpoints}, Events: e.stores.Events, Deliveries: e.stores.Deliveries}, q, e.clock.Now)
	ev, d, err := out.SendTest(t.Context(), ep)
	if err != nil {
		t.Fatalf("SendTest: %v", err)
	}
	if got := q.take(t); got != (queue.Message{AccountID: testAccount, EndpointID: ep.ID, EventID: ev.ID, DeliveryID: d.ID, Attempt: 1}) {
		t.Errorf("queued %+v, want the first attempt of %s", got, d.ID)
	}
	if stored := e.delivery(ev, ep); stored.Status != voiceops.DeliveryPending || !stored.Test || stored.EventID != ev.ID {
		t.Errorf("stored delivery %+v", stored)
	}
	if got, err := e.stores.Events.GetEvent(t.Context(), testAccount, ev.ID); err != nil || !got.FannedOut {
		t.Errorf("event after SendTest: fanned out %v, %v", got.FannedOut, err)
	}

	q.err = errors.New("queue down")
	failed, _, err := out.SendTest(t.Context(), ep)
	if err == nil {
		t.Fatal("SendTest with the queue down: want an error, got none")
	}
	pending, err := e.stores.Events.PendingEvents(t.Context(), e.clock.Now(), 10)
	if err != nil || len(pending) != 1 || pending[0].EndpointID != ep.ID {
		t.Fatalf("pending events after a failed send: %+v, %v; want the test event", pending, err)
	}
	failed = pending[0]
	if d := e.delivery(failed, ep); d.Status != voiceops.DeliveryPending || len(d.Attempts) != 0 {
		t.Errorf("delivery of the failed send: %+v", d)
	}
	q.err = nil
	if err := delivery.NewOutbox(e.stores, q, e.clock.Now).Fanout(t.Context(), failed); err != nil { // the repair pass's call
		t.Fatal(err)
	}
	if got := q.take(t); got.DeliveryID != voiceops.DeliveryID(failed.ID, ep.ID) || got.Attempt != 1 {
		t.Errorf("repair queued %+v, want the first attempt of the failed send's delivery", got)
	}
	if got, _ := e.stores.Events.GetEvent(t.Context(), testAccount, failed.ID); !got.FannedOut {
		t.Error("the repaired event is still pending")
	}
}

func TestDeliveryIDIsStable(t *testing.T) {
	a := voiceops.DeliveryID("evt_1", "whe_1")
	if a != voiceops.DeliveryID("evt_1", "whe_1") || !voiceops.ValidDeliveryID(a) || len(a) != len("dlv_")+22 {
		t.Errorf("DeliveryID: %q", a)
	}
	for _, other := range []string{voiceops.DeliveryID("evt_1", "whe_2"), voiceops.DeliveryID("evt_2", "whe_1"), voiceops.DeliveryID("evt_1w", "he_1")} {
		if other == a {
			t.Errorf("two pairs share the delivery ID %s", a)
		}
	}
}
