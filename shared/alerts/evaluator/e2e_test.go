package evaluator

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestMetricsToVerifiedDelivery runs the whole chain in process: metric
// events -> evaluator -> in-process queue -> dispatcher -> a TLS receiver
// that verifies both signature schemes (the official Standard Webhooks
// library, and the compatibility HMAC recomputed here). The receiver fails
// the first attempt with a 500; the retry carries the same webhook-id. Then
// the alert resolves, and the resolved event arrives once.
func TestMetricsToVerifiedDelivery(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

	type hit struct {
		id, eventType, body string
		status              int
	}
	var mu sync.Mutex
	var hits []hit
	failed := map[string]bool{}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := wh.Verify(body, r.Header); err != nil {
			t.Errorf("Standard Webhooks verification: %v", err)
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(r.Header.Get("X-Service-Timestamp") + "." + string(body)))
		if got, want := r.Header.Get("X-Service-Signature"), hex.EncodeToString(mac.Sum(nil)); got != want {
			t.Errorf("X-Service-Signature %q, want %q", got, want)
		}
		var ev struct {
			EventType string `json:"event_type"`
		}
		_ = json.Unmarshal(body, &ev)
		id := r.Header.Get("webhook-id")
		mu.Lock()
		defer mu.Unlock()
		status := http.StatusOK
		if !failed[id] {
			failed[id], status = true, http.StatusInternalServerError
		}
		hits = append(hits, hit{id, ev.EventType, string(body), status})
		w.WriteHeader(status)
	}))
	defer srv.Close()

	ep := voiceops.NewEndpoint(voiceops.NewID(voiceops.PrefixEndpoint), "acct_a", secret, voiceops.EndpointInput{
		Name: "tls", URL: srv.URL + "/hook", EventTypes: voiceops.EventTypes}, f.now)
	if err := f.stores.Endpoints.CreateEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	var d *delivery.Dispatcher
	q := queue.NewMemory(func(ctx context.Context, m queue.Message) error { return d.Handle(ctx, m) }, queue.MemoryOptions{})
	defer q.Close()
	d = delivery.NewDispatcher(delivery.Config{
		Stores: f.stores, Queue: q,
		Sender:   webhook.NewSender(webhook.Options{AllowLoopback: true, TLSConfig: &tls.Config{RootCAs: pool}}),
		Schedule: webhook.Schedule{0, 10 * time.Millisecond, 20 * time.Millisecond},
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	ev := f.evaluator()
	ev.Fanout = d.Fanout

	r := f.rule("acct_a", "p1", voiceops.MetricTurnLatencyP50, voiceops.OpGreater, 800, voiceops.Window5m)
	for i := 0; i < 10; i++ {
		f.record("acct_a", "p1", metrics.TurnLatency, 1200, time.Minute)
	}
	if _, err := ev.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	// Ten minutes on, the slow turns have left the window; fast ones remain.
	f.now = f.now.Add(10 * time.Minute)
	f.record("acct_a", "p1", metrics.TurnLatency, 300, time.Minute)
	if _, err := ev.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Drain(ctx); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(hits) != 4 {
		t.Fatalf("%d requests, want 4 (two events, each failed once): %+v", len(hits), hits)
	}
	want := []struct {
		eventType string
		status    int
	}{{"alerts.triggered", 500}, {"alerts.triggered", 200}, {"alerts.resolved", 500}, {"alerts.resolved", 200}}
	for i, w := range want {
		if hits[i].eventType != w.eventType || hits[i].status != w.status {
			t.Errorf("request %d: %s %d, want %s %d", i, hits[i].eventType, hits[i].status, w.eventType, w.status)
		}
	}
	if hits[0].id != hits[1].id || hits[0].body != hits[1].body || hits[2].id != hits[3].id || hits[0].id == hits[2].id {
		t.Errorf("webhook-ids %s %s %s %s: a retry must repeat its event's id and body", hits[0].id, hits[1].id, hits[2].id, hits[3].id)
	}
	if got := f.get(r); got.State != voiceops.StateOK {
		t.Errorf("rule state %s after the turns got fast", got.State)
	}
	log, err := f.stores.Deliveries.ListDeliveries(ctx, "acct_a", ep.ID, 10)
	if err != nil || len(log) != 2 {
		t.Fatalf("delivery log %v %v", log, err)
	}
	for _, dl := range log {
		if dl.Status != voiceops.DeliveryDelivered || len(dl.Attempts) != 2 || dl.Attempts[0].StatusCode != 500 || dl.Attempts[1].StatusCode != 200 {
			t.Errorf("delivery %+v", dl)
		}
	}
}
