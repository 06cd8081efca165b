package delivery_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDeliveredAndVerified(t *testing.T) {
	rc := newReceiver(t, nil)
	e := newEnv(t, rc, envOptions{})
	ep := e.endpoint("/hook", nil)
	ev := e.publish()
	e.drain()

	reqs := rc.requests()
	if len(reqs) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	verify(t, r, secretA)
	if string(r.body) != string(ev.Body) {
		t.Errorf("body: want the event's bytes %s, got %s", ev.Body, r.body)
	}
	for name, want := range map[string]string{
		"webhook-id": ev.ID, "X-Service-Event-ID": ev.ID, "Content-Type": "application/json",
		"User-Agent": webhook.DefaultUserAgent, "Authorization": "Bearer t0ken", "X-Tenant": "acme",
	} {
		if got := r.header.Get(name); got != want {
			t.Errorf("header %s: want %q, got %q", name, want, got)
		}
	}
	if n := len(strings.Fields(r.header.Get("webhook-signature"))); n != 1 {
		t.Errorf("webhook-signature has %d entries, want 1", n)
	}
	var body voiceops.EventBody
	if err := json.Unmarshal(r.body, &body); err != nil || body.EventType != voiceops.EventTriggered || body.EventID != ev.ID {
		t.Errorf("body %s (%v)", r.body, err)
	}

	d := e.delivery(ev, ep)
	wantLog(t, d, voiceops.DeliveryDelivered, 204)
	if d.Test || d.EventType != voiceops.EventTriggered {
		t.Errorf("delivery %+v", d)
	}
	got, err := e.stores.Events.GetEvent(t.Context(), testAccount, ev.ID)
	if err != nil || !got.FannedOut {
		t.Errorf("event after the fan-out: FannedOut %v (%v)", got.FannedOut, err)
	}
}

func TestFailureThenSuccessKeepsTheWebhookID(t *testing.T) {
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	e := newEnv(t, rc, envOptions{})
	ep := e.endpoint("/hook", nil)
	ev := e.publish()
	e.drain()

	reqs := rc.requests()
	if len(reqs) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(reqs))
	}
	for _, r := range reqs {
		verify(t, r, secretA)
		if r.header.Get("webhook-id") != ev.ID || string(r.body) != string(ev.Body) {
			t.Errorf("retry with webhook-id %q and body %s, want %q and the same bytes", r.header.Get("webhook-id"), r.body, ev.ID)
		}
	}
	d := e.delivery(ev, ep)
	wantLog(t, d, voiceops.DeliveryDelivered, 500, 200)
	if d.Attempts[0].Error != "HTTP 500" || d.Attempts[1].Error != "" {
		t.Errorf("attempt errors %q, %q", d.Attempts[0].Error, d.Attempts[1].Error)
	}
}

func TestClientErrorIsNotRetried(t *testing.T) {
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) })
	e := newEnv(t, rc, envOptions{})
	ep := e.endpoint("/hook", nil)
	ev := e.publish()
	e.drain()
	if n := len(rc.requests()); n != 1 {
		t.Errorf("receiver got %d requests, want 1", n)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryFailed, 400)
}

func TestTimeoutIsRetried(t *testing.T) {
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			<-r.Context().Done() // until the sender gives up
			// Abort rather than return: returning would send a default 200.
			panic(http.ErrAbortHandler)
		}
		w.WriteHeader(http.StatusAccepted)
	})
	e := newEnv(t, rc, envOptions{})
	ep := e.endpoint("/hook", func(ep *voiceops.WebhookEndpoint) { ep.TimeoutMS = 100 })
	ev := e.publish()
	e.drain()
	d := e.delivery(ev, ep)
	wantLog(t, d, voiceops.DeliveryDelivered, 0, 202)
	if !strings.HasPrefix(d.Attempts[0].Error, "timed out") {
		t.Errorf("first attempt's error: %q, want a timeout", d.Attempts[0].Error)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	e := newEnv(t, rc, envOptions{})
	ep := e.endpoint("/hook", nil)
	ev := e.publish()
	e.drain()
	for _, r := range rc.requests() {
		if r.path != "/hook" {
			t.Errorf("the redirect was followed to %s", r.path)
		}
	}
	d := e.delivery(ev, ep)
	wantLog(t, d, voiceops.DeliveryDelivered, 302, 200)
	if !strings.Contains(d.Attempts[0].Error, "redirect") {
		t.Errorf("first attempt's error %q does not mention the redirect", d.Attempts[0].Error)
	}
}

func TestScheduleSpentFails(t *testing.T) {
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	e := newEnv(t, rc, envOptions{})
	ep := e.endpoint("/hook", nil)
	ev := e.publish()
	e.drain()
	if n := len(rc.requests()); n != len(quickSchedule) {
		t.Errorf("receiver got %d requests, want %d", n, len(quickSchedule))
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryFailed, 503, 503, 503)
}

func TestRetryAfterIsHonoured(t *testing.T) {
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	q := &recordingQueue{}
	schedule := webhook.Schedule{0, time.Minute, 5 * time.Minute, 15 * time.Minute}
	e := newEnv(t, rc, envOptions{queue: q, schedule: schedule})
	ep := e.endpoint("/hook", nil)
	ev := e.publish()
	m := q.take(t)
	if err := e.d.Handle(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	next, delay := q.takeDelay(t)
	// Longer than the 1-minute step, capped at the step after it.
	if next.Attempt != 2 || delay != 5*time.Minute {
		t.Errorf("after a 429 with Retry-After 3600: attempt %d in %v, want attempt 2 in 5m", next.Attempt, delay)
	}
	d := e.delivery(ev, ep)
	wantLog(t, d, voiceops.DeliveryPending, 429)
	if !d.NextAttemptAt.Equal(e.clock.Now().Add(5 * time.Minute)) {
		t.Errorf("NextAttemptAt %v, want now+5m", d.NextAttemptAt)
	}
}

func TestRotatedSecretSignsTwiceDuringTheOverlap(t *testing.T) {
	rc := newReceiver(t, nil)
	e := newEnv(t, rc, envOptions{})
	ep := e.endpoint("/hook", func(ep *voiceops.WebhookEndpoint) {
		*ep = voiceops.RotateSecret(*ep, secretB, time.Hour, e.clock.Now())
	})
	e.publish()
	e.drain()
	e.clock.Advance(time.Hour) // the old secret has expired
	e.publish()
	e.drain()

	reqs := rc.requests()
	if len(reqs) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(reqs))
	}
	during, after := reqs[0], reqs[1]
	for name, want := range map[string]int{"webhook-signature": 2, "X-Service-Signature": 2} {
		if n := len(strings.Fields(during.header.Get(name))); n != want {
			t.Errorf("during the overlap, %s has %d entries, want %d", name, n, want)
		}
		if n := len(strings.Fields(after.header.Get(name))); n != 1 {
			t.Errorf("after the overlap, %s has %d entries, want 1", name, n)
		}
	}
	verify(t, during, secretB)
	verify(t, during, secretA)
	verify(t, after, secretB)
	_ = ep
}

func TestDisabledOrDeletedEndpointIsSkipped(t *testing.T) {
	rc := newReceiver(t, nil)
	q := &recordingQueue{}
	e := newEnv(t, rc, envOptions{queue: q})
	disabled := e.endpoint("/disabled", nil)
	deleted := e.endpoint("/deleted", nil)
	ev := e.publish()
	msgs := q.takeAll()
	if len(msgs) != 2 {
		t.Fatalf("fan-out queued %d messages, want 2", len(msgs))
	}
	off := disabled
	off.Enabled, off.Version = false, disabled.Version+1
	if err := e.stores.Endpoints.UpdateEndpoint(t.Context(), off, disabled.Version); err != nil {
		t.Fatal(err)
	}
	if err := e.stores.Endpoints.DeleteEndpoint(t.Context(), testAccount, deleted.ID); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := e.d.Handle(t.Context(), m); err != nil {
			t.Fatalf("Handle: %v", err)
		}
	}
	if n := len(rc.requests()); n != 0 {
		t.Errorf("receiver got %d requests, want none", n)
	}
	if n := len(q.takeAll()); n != 0 {
		t.Errorf("%d more attempts queued, want none", n)
	}
	wantLog(t, e.delivery(ev, disabled), voiceops.DeliverySkipped)
	wantLog(t, e.delivery(ev, deleted), voiceops.DeliverySkipped)
}

func TestDuplicateMessagesMakeOneAttempt(t *testing.T) {
	rc := newReceiver(t, nil)
	q := &recordingQueue{}
	e := newEnv(t, rc, envOptions{queue: q})
	ep := e.endpoint("/hook", nil)
	ev := e.publish()
	m := q.take(t)
	// The same message five times at once, as an at-least-once queue may.
	errs := make(chan error, 5)
	for range 5 {
		go func() { errs <- e.d.Handle(t.Context(), m) }()
	}
	for range 5 {
		if err := <-errs; err != nil {
			t.Fatalf("Handle: %v", err)
		}
	}
	if n := len(rc.requests()); n != 1 {
		t.Errorf("receiver got %d requests, want 1", n)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryDelivered, 204)
	// Copies that saw the claim in progress were put back for later; when
	// they come back they find the delivery done and drop.
	for _, back := range q.takeAll() {
		if back.Attempt != 1 {
			t.Errorf("a copy queued attempt %d", back.Attempt)
		}
		if err := e.d.Handle(t.Context(), back); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(rc.requests()); n != 1 {
		t.Errorf("receiver got %d requests after the copies came back, want 1", n)
	}
}

func TestFanoutPicksSubscribedEnabledEndpoints(t *testing.T) {
	rc := newReceiver(t, nil)
	q := &recordingQueue{}
	e := newEnv(t, rc, envOptions{queue: q})
	both := e.endpoint("/both", nil)
	triggered := e.endpoint("/triggered", func(ep *voiceops.WebhookEndpoint) { ep.EventTypes = []voiceops.EventType{voiceops.EventTriggered} })
	e.endpoint("/resolved", func(ep *voiceops.WebhookEndpoint) { ep.EventTypes = []voiceops.EventType{voiceops.EventResolved} })
	e.endpoint("/off", func(ep *voiceops.WebhookEndpoint) { ep.Enabled = false })
	ev := e.publish()
	msgs := q.takeAll()
	got := map[string]bool{}
	for _, m := range msgs {
		got[m.EndpointID] = true
		if m.Attempt != 1 || m.EventID != ev.ID || m.DeliveryID != voiceops.DeliveryID(ev.ID, m.EndpointID) || m.AccountID != testAccount {
			t.Errorf("message %+v", m)
		}
	}
	if len(msgs) != 2 || !got[both.ID] || !got[triggered.ID] {
		t.Errorf("fan-out queued %+v, want one message each for /both and /triggered", msgs)
	}
	list, err := e.stores.Deliveries.ListDeliveries(t.Context(), testAccount, both.ID, 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("deliveries of /both: %v (%v)", list, err)
	}
	wantLog(t, list[0], voiceops.DeliveryPending)

	// Again, as the repair pass may: same deliveries, copies of the
	// messages, which the claims make harmless.
	if err := e.d.Fanout(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	if again := q.takeAll(); len(again) != 2 || !sameMessages(again, msgs) {
		t.Errorf("second fan-out queued %+v, want the same two messages %+v", again, msgs)
	}
	list, _ = e.stores.Deliveries.ListDeliveries(t.Context(), testAccount, both.ID, 10)
	if len(list) != 1 {
		t.Errorf("second fan-out made %d deliveries for /both, want 1", len(list))
	}
}
