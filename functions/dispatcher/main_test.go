package main

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/testsupport/samples"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// sampleSecret is the signing secret samples.Seed gives the sample endpoint.
const sampleSecret = "whsec_c2FtcGxlIHNlY3JldCBzYW1wbGUgc2VjcmV0IHM="

// collected is a queue that keeps what the handler sends.
type collected struct {
	mu   sync.Mutex
	msgs []queue.Message
}

func (c *collected) Send(_ context.Context, m queue.Message, _ time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, m)
	return nil
}

func sqsEvent(t *testing.T, name string) events.SQSEvent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samples.Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ev
}

// TestReplaySQSBatch sends events/dispatcher-sqs-batch.json through the real
// handler. Its first record asks for attempt 1 of a delivery of the sample
// endpoint, whose URL the test points at a local TLS receiver; its second
// names a delivery that no longer exists (expired), which is dropped, not
// reported failed. A malformed record added to the batch is the only
// failure reported.
func TestReplaySQSBatch(t *testing.T) {
	ev := sqsEvent(t, "dispatcher-sqs-batch.json")
	if len(ev.Records) != 2 {
		t.Fatalf("%d records, want 2", len(ev.Records))
	}
	ctx := t.Context()
	now := time.Now()
	stores := memory.New().Stores()
	if err := samples.Seed(ctx, stores, now); err != nil {
		t.Fatal(err)
	}

	var (
		mu     sync.Mutex
		got    []http.Header
		bodies [][]byte
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, bodies = append(got, r.Header.Clone()), append(bodies, b)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()

	ep, err := stores.Endpoints.GetEndpoint(ctx, samples.AccountID, samples.EndpointID)
	if err != nil {
		t.Fatal(err)
	}
	moved := ep
	moved.URL, moved.Version = srv.URL+"/sample", ep.Version+1
	if err := stores.Endpoints.UpdateEndpoint(ctx, moved, ep.Version); err != nil {
		t.Fatal(err)
	}
	// The event and the delivery the first record names.
	m, err := queue.Decode([]byte(ev.Records[0].Body))
	if err != nil {
		t.Fatal(err)
	}
	rule, err := stores.Rules.GetRule(ctx, samples.AccountID, samples.RuleID)
	if err != nil {
		t.Fatal(err)
	}
	rule.State = voiceops.StateAlert
	sample := voiceops.NewAlertEvent(voiceops.EventTriggered, rule, voiceops.StateOK, now, false)
	sample.ID = m.EventID
	if err := stores.Events.PutEvent(ctx, sample); err != nil {
		t.Fatal(err)
	}
	if m.DeliveryID != voiceops.DeliveryID(m.EventID, m.EndpointID) {
		t.Fatalf("the sample's delivery_id is not DeliveryID(event, endpoint) = %s", voiceops.DeliveryID(m.EventID, m.EndpointID))
	}
	due := now
	if err := stores.Deliveries.CreateDeliveries(ctx, []voiceops.Delivery{{
		ID: m.DeliveryID, AccountID: m.AccountID, EndpointID: m.EndpointID, EventID: m.EventID, EventType: voiceops.EventTriggered,
		Status: voiceops.DeliveryPending, NextAttemptAt: &due, CreatedAt: now, UpdatedAt: now,
	}}); err != nil {
		t.Fatal(err)
	}

	q := &collected{}
	tr := srv.Client().Transport.(*http.Transport)
	d := delivery.NewDispatcher(delivery.Config{
		Stores: stores, Queue: q, Now: func() time.Time { return now },
		Sender: webhook.NewSender(webhook.Options{AllowLoopback: true, TLSConfig: tr.TLSClientConfig}),
		Logger: slog.New(slog.DiscardHandler),
	})
	ev.Records = append(ev.Records, events.SQSMessage{MessageId: "malformed-1", Body: "{not json"})
	resp, err := handler(d)(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "malformed-1" {
		t.Errorf("batch item failures %+v, want only malformed-1", resp.BatchItemFailures)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("the receiver got %d requests, want 1", len(got))
	}
	wh, _ := standardwebhooks.NewWebhook(sampleSecret)
	if err := wh.Verify(bodies[0], got[0]); err != nil {
		t.Errorf("signature: %v", err)
	}
	dl, err := stores.Deliveries.GetDelivery(ctx, m.AccountID, m.EndpointID, m.DeliveryID)
	if err != nil || dl.Status != voiceops.DeliveryDelivered || len(dl.Attempts) != 1 || dl.Attempts[0].StatusCode != 200 {
		t.Errorf("delivery after the batch: %+v (%v)", dl, err)
	}
	var queued []queue.Message
	for _, m := range q.msgs {
		if !m.Check { // the claim's check copy (shared/alerts/delivery) is expected
			queued = append(queued, m)
		}
	}
	if len(queued) != 0 {
		t.Errorf("queued %+v, want nothing but the claim's check copy", queued)
	}
}

func TestRunNeedsItsEnvironment(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"no tables": {"DELIVERY_QUEUE_URL": "https://sqs.example/q"},
		"no queue":  {"CONFIG_TABLE": "c", "METRICS_TABLE": "m", "DELIVERIES_TABLE": "d"},
	} {
		if err := run(t.Context(), func(k string) string { return env[k] }); err == nil {
			t.Errorf("%s: run started", name)
		}
	}
}

// TestSenderReachesLoopbackOnlyUnderTheRunner: the dispatcher's sender, in
// the deployed environment (no VOICEOPS_LOCAL_ALLOW_LOOPBACK, or any value
// but "true"), refuses a loopback stand-in for every kind (the vendor
// kinds' unsigned attempts too), over http:// and https://, and never
// reaches it; under the local stack runner ("true") it delivers.
func TestSenderReachesLoopbackOnlyUnderTheRunner(t *testing.T) {
	var hits atomic.Int32
	standIn := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1); w.WriteHeader(http.StatusAccepted) })
	plain, tlsSrv := httptest.NewServer(standIn), httptest.NewTLSServer(standIn)
	defer plain.Close()
	defer tlsSrv.Close()
	envWith := func(v string) func(string) string {
		return func(k string) string {
			if k == lambdamain.LocalLoopbackEnv {
				return v
			}
			return ""
		}
	}
	for _, v := range []string{"", "1", "TRUE", "yes"} {
		for _, u := range []string{plain.URL + "/v2/enqueue", tlsSrv.URL + "/services/T0/B0/x"} {
			for _, unsigned := range []bool{false, true} {
				res := sender(envWith(v)).Send(t.Context(), webhook.Attempt{URL: u, Body: []byte(`{}`), EventID: "evt_1",
					Secrets: []string{sampleSecret}, Unsigned: unsigned})
				if res.Outcome == webhook.Delivered || res.StatusCode != 0 {
					t.Errorf("%s=%q: %s (unsigned %v) = %+v, want refused", lambdamain.LocalLoopbackEnv, v, u, unsigned, res)
				}
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the stand-in was reached %d times without the runner's variable", n)
	}
	res := sender(envWith("true")).Send(t.Context(), webhook.Attempt{URL: plain.URL + "/v2/enqueue", Body: []byte(`{}`), EventID: "evt_1", Unsigned: true})
	if res.Outcome != webhook.Delivered || hits.Load() != 1 {
		t.Errorf("under the runner: %+v, %d hits; want delivered once", res, hits.Load())
	}
}
