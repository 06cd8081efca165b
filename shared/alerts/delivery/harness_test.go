package delivery_test

import (
	"github.com/voiceops/opsapi/shared/testsupport/testclock"

	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

const (
	testAccount = "acct_test"
	secretA     = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	secretB     = "whsec_dGhpcyBpcyBhbm90aGVyIHNlY3JldCBrZXkh"
)

// clock is a settable clock near the wall clock (the Standard Webhooks
// library checks timestamps against the real time).
func newClock() *testclock.Clock { return testclock.At(time.Now().Truncate(time.Millisecond)) }

// request is what the receiver saw of one request.
type request struct {
	path   string
	header http.Header
	body   []byte
}

// receiver is a TLS test server on 127.0.0.1 that records every request and
// answers with respond(n, w, r), n counting requests from 1 (204 when nil).
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []request
	respond func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t testing.TB, respond func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{respond: respond}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, request{r.URL.Path, r.Header.Clone(), body})
		n := len(rc.reqs)
		rc.mu.Unlock()
		if rc.respond != nil {
			rc.respond(n, w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.reqs...)
}

// sender returns a Sender that trusts the receiver's certificate and may
// reach loopback, as only tests and the dev server do.
func (rc *receiver) sender() *webhook.Sender {
	tr := rc.srv.Client().Transport.(*http.Transport)
	return webhook.NewSender(webhook.Options{AllowLoopback: true, TLSConfig: tr.TLSClientConfig})
}

// env is the whole pipeline in process: memory stores, an outbox, a
// dispatcher and (when started) the in-process queue between them.
type env struct {
	t      *testing.T
	store  *memory.Store
	stores voiceops.Stores
	clock  *testclock.Clock
	rc     *receiver
	q      *queue.Memory
	d      *delivery.Dispatcher
}

type envOptions struct {
	schedule webhook.Schedule
	lease    time.Duration
	queue    queue.Queue // instead of the in-process queue
	// telemetry receives the dispatcher's metrics.
	telemetry telemetry.Recorder
}

// quickSchedule keeps retries fast: three attempts in 30 ms.
var quickSchedule = webhook.Schedule{0, 10 * time.Millisecond, 20 * time.Millisecond}

func newEnv(t *testing.T, rc *receiver, o envOptions) *env {
	t.Helper()
	store := memory.New()
	e := &env{t: t, store: store, stores: store.Stores(), clock: newClock(), rc: rc}
	if o.schedule == nil {
		o.schedule = quickSchedule
	}
	if o.lease == 0 {
		o.lease = 20 * time.Millisecond
	}
	q := o.queue
	if q == nil {
		e.q = queue.NewMemory(func(ctx context.Context, m queue.Message) error { return e.d.Handle(ctx, m) },
			queue.MemoryOptions{Visibility: 5 * time.Millisecond})
		t.Cleanup(e.q.Close)
		q = e.q
	}
	e.d = delivery.NewDispatcher(delivery.Config{
		Stores: e.stores, Queue: q, Sender: rc.sender(), Schedule: o.schedule, Now: e.clock.Now,
		Rand: func() float64 { return 0 }, Lease: o.lease, Logger: slog.New(slog.DiscardHandler),
		Telemetry: o.telemetry,
	})
	if err := e.stores.Accounts.CreateAccount(t.Context(), voiceops.Account{ID: testAccount, Name: "Test", CreatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	return e
}

// endpoint creates an endpoint of the receiver at path, subscribed to
// every event type, signing with secretA; change edits it before.
func (e *env) endpoint(path string, change func(*voiceops.WebhookEndpoint)) voiceops.WebhookEndpoint {
	e.t.Helper()
	ep := voiceops.NewEndpoint(voiceops.NewID(voiceops.PrefixEndpoint), testAccount, secretA, voiceops.EndpointInput{
		Name: path, URL: e.rc.srv.URL + path, EventTypes: voiceops.EventTypes,
		Headers: map[string]string{"Authorization": "Bearer t0ken", "X-Tenant": "acme"},
	}, e.clock.Now())
	if change != nil {
		change(&ep)
	}
	if err := e.stores.Endpoints.CreateEndpoint(e.t.Context(), ep); err != nil {
		e.t.Fatal(err)
	}
	return ep
}

// event stores a triggered event of a sample rule, pending.
func (e *env) event() voiceops.AlertEvent {
	e.t.Helper()
	v := int64(2100)
	rule := voiceops.AlertRule{
		ID: voiceops.NewID(voiceops.PrefixRule), AccountID: testAccount, Name: "p95 > 1500", Metric: voiceops.MetricTurnLatencyP95,
		Operator: voiceops.OpGreater, Threshold: 1500, Window: voiceops.Window5m, Enabled: true, State: voiceops.StateAlert, CurrentValue: &v,
	}
	ev := voiceops.NewAlertEvent(voiceops.EventTriggered, rule, voiceops.StateOK, e.clock.Now(), false)
	if err := e.stores.Events.PutEvent(e.t.Context(), ev); err != nil {
		e.t.Fatal(err)
	}
	return ev
}

// publish stores an event and fans it out.
func (e *env) publish() voiceops.AlertEvent {
	e.t.Helper()
	ev := e.event()
	if err := e.d.Fanout(e.t.Context(), ev); err != nil {
		e.t.Fatalf("Fanout: %v", err)
	}
	return ev
}

// drain waits for the in-process queue to be empty.
func (e *env) drain() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), 20*time.Second)
	defer cancel()
	if err := e.q.Drain(ctx); err != nil {
		e.t.Fatalf("queue not drained: %v", err)
	}
}

func (e *env) delivery(ev voiceops.AlertEvent, ep voiceops.WebhookEndpoint) voiceops.Delivery {
	e.t.Helper()
	d, err := e.stores.Deliveries.GetDelivery(e.t.Context(), testAccount, ep.ID, voiceops.DeliveryID(ev.ID, ep.ID))
	if err != nil {
		e.t.Fatalf("GetDelivery: %v", err)
	}
	return d
}

// wantLog checks a delivery's status and the status codes of its attempts.
func wantLog(t *testing.T, d voiceops.Delivery, status voiceops.DeliveryStatus, codes ...int) {
	t.Helper()
	var got []int
	for i, a := range d.Attempts {
		got = append(got, a.StatusCode)
		if a.Number != i+1 {
			t.Errorf("attempt %d is numbered %d", i+1, a.Number)
		}
		if a.Open() {
			t.Errorf("attempt %d left open: %+v", i+1, a)
		}
	}
	if d.Status != status || len(got) != len(codes) || !equalInts(got, codes) {
		t.Errorf("delivery: want %s with status codes %v, got %s with %v (%+v)", status, codes, d.Status, got, d.Attempts)
	}
	if (status == voiceops.DeliveryPending) != (d.NextAttemptAt != nil) {
		t.Errorf("delivery %s with NextAttemptAt %v", d.Status, d.NextAttemptAt)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// verify checks both signature schemes of a request against secret: the
// Standard Webhooks one with the official library, the compatibility one
// recomputed here.
func verify(t *testing.T, r request, secret string) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(r.body, r.header); err != nil {
		t.Errorf("Standard Webhooks signature does not verify with the secret: %v", err)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(r.header.Get("X-Service-Timestamp") + "." + string(r.body)))
	want := hex.EncodeToString(mac.Sum(nil))
	if !strings.Contains(" "+r.header.Get("X-Service-Signature")+" ", " "+want+" ") {
		t.Errorf("X-Service-Signature %q lacks %s", r.header.Get("X-Service-Signature"), want)
	}
}
