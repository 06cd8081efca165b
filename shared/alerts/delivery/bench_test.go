package delivery_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// discardQueue accepts every message and keeps none.
type discardQueue struct{}

func (discardQueue) Send(context.Context, queue.Message, time.Duration) error { return nil }

// BenchmarkDispatch is the dispatcher figure: signed deliveries per
// second from one process, each a whole Dispatcher.Handle (read the
// delivery, endpoint and event, claim the attempt, sign both schemes with
// two secrets, POST over HTTPS, record the result) against the in-memory
// stores and a local TLS receiver in the same process (which competes for
// the same CPUs). Target: at least 1,000/s.
func BenchmarkDispatch(b *testing.B) {
	f := newDispatchFixture(b)
	ctx, rc, stores, d := f.ctx, f.rc, f.stores, f.d
	// Fan-out is not measured: one event per ten deliveries, made upfront.
	msgs := f.deliveries(b, nil, b.N)

	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m := msgs[next.Add(1)-1]
			if err := d.Handle(ctx, m); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")

	// Every one of them delivered, once.
	if got := len(rc.requests()); got != b.N {
		b.Errorf("receiver got %d requests, want %d", got, b.N)
	}
	last := msgs[b.N-1]
	dl, err := stores.Deliveries.GetDelivery(ctx, testAccount, last.EndpointID, last.DeliveryID)
	if err != nil || dl.Status != voiceops.DeliveryDelivered {
		b.Errorf("last delivery: %+v (%v)", dl, err)
	}
}

// BenchmarkBareSignedPost is BenchmarkDispatch's baseline, in the same
// process and against the same receiver: a bare loop that signs one event
// body with both schemes and two secrets (HMAC-SHA256, as a delivery is
// signed) and POSTs it over HTTPS with the same guarded transport, 16 at
// once; no store, no claim, no record. What Dispatch costs beyond it is the
// dispatcher's own work.
func BenchmarkBareSignedPost(b *testing.B) {
	rc := newReceiver(b, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	tr := rc.srv.Client().Transport.(*http.Transport)
	client := webhook.NewClient(webhook.Options{AllowLoopback: true, TLSConfig: tr.TLSClientConfig})
	ev := voiceops.NewAlertEvent(voiceops.EventTriggered, benchRule(), voiceops.StateOK, time.Now(), false)
	body, err := json.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	keys := [][]byte{[]byte(secretA), []byte(secretB)}
	url := rc.srv.URL + "/hook"
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := bareSignedPost(client, url, ev.ID, body, keys); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
	if got := len(rc.requests()); got != b.N {
		b.Errorf("receiver got %d requests, want %d", got, b.N)
	}
}

// bareSignedPost is the baseline of the dispatcher benchmarks: one webhook
// POST signed with both schemes by hand (HMAC-SHA256 of id.ts.body in
// Standard Webhooks' base64 form, and of ts.body in hex), no store, no queue.
func bareSignedPost(client *http.Client, url, id string, body []byte, keys [][]byte) error {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	var std, compat []string
	for _, k := range keys {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(id + "." + ts + "."))
		m.Write(body)
		std = append(std, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
		m = hmac.New(sha256.New, k)
		m.Write([]byte(ts + "."))
		m.Write(body)
		compat = append(compat, hex.EncodeToString(m.Sum(nil)))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", strings.Join(std, " "))
	req.Header.Set("X-Service-Signature", strings.Join(compat, " "))
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// benchRule is the firing rule of the dispatcher benchmarks' events.
func benchRule() voiceops.AlertRule {
	v := int64(2100)
	return voiceops.AlertRule{ID: "ar_bench", AccountID: testAccount, Name: "bench", Metric: voiceops.MetricTurnLatencyP95,
		Operator: voiceops.OpGreater, Threshold: 1500, Window: voiceops.Window5m, State: voiceops.StateAlert, CurrentValue: &v}
}

// dispatchFixture is the dispatcher benchmarks' setup: a local HTTPS
// receiver answering 204, memory stores with one account of ten endpoints
// (the account limit), each mid-rotation (two signatures), and the
// dispatcher over them.
type dispatchFixture struct {
	ctx    context.Context
	rc     *receiver
	stores voiceops.Stores
	eps    []voiceops.WebhookEndpoint
	d      *delivery.Dispatcher
	now    time.Time
}

func newDispatchFixture(b *testing.B) *dispatchFixture {
	f := &dispatchFixture{ctx: context.Background(), stores: memory.New().Stores(), now: time.Now()}
	f.rc = newReceiver(b, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	if err := f.stores.Accounts.CreateAccount(f.ctx, voiceops.Account{ID: testAccount, CreatedAt: f.now}); err != nil {
		b.Fatal(err)
	}
	for range voiceops.MaxEndpointsPerAccount {
		ep := voiceops.NewEndpoint(voiceops.NewID(voiceops.PrefixEndpoint), testAccount, secretA, voiceops.EndpointInput{
			Name: "bench", URL: f.rc.srv.URL + "/hook", EventTypes: voiceops.EventTypes,
			Headers: map[string]string{"Authorization": "Bearer t0ken"},
		}, f.now)
		ep = voiceops.RotateSecret(ep, secretB, time.Hour, f.now)
		if err := f.stores.Endpoints.CreateEndpoint(f.ctx, ep); err != nil {
			b.Fatal(err)
		}
		f.eps = append(f.eps, ep)
	}
	f.d = delivery.NewDispatcher(delivery.Config{
		Stores: f.stores, Queue: discardQueue{}, Sender: f.rc.sender(), Logger: slog.New(slog.DiscardHandler),
	})
	return f
}

// deliveries stores events of benchRule and their pending deliveries, one
// to each endpoint, until msgs (emptied first) holds at least n queue
// messages, and returns it.
func (f *dispatchFixture) deliveries(b *testing.B, msgs []queue.Message, n int) []queue.Message {
	msgs = msgs[:0]
	rule := benchRule()
	for len(msgs) < n {
		ev := voiceops.NewAlertEvent(voiceops.EventTriggered, rule, voiceops.StateOK, f.now, false)
		if err := f.stores.Events.PutEvent(f.ctx, ev); err != nil {
			b.Fatal(err)
		}
		var ds []voiceops.Delivery
		for _, ep := range f.eps {
			due := f.now
			dl := voiceops.Delivery{ID: voiceops.DeliveryID(ev.ID, ep.ID), AccountID: testAccount, EndpointID: ep.ID, EventID: ev.ID,
				EventType: ev.Type, Status: voiceops.DeliveryPending, NextAttemptAt: &due, CreatedAt: f.now, UpdatedAt: f.now}
			ds = append(ds, dl)
			msgs = append(msgs, queue.Message{AccountID: testAccount, EndpointID: ep.ID, EventID: ev.ID, DeliveryID: dl.ID, Attempt: 1})
		}
		if err := f.stores.Deliveries.CreateDeliveries(f.ctx, ds); err != nil {
			b.Fatal(err)
		}
	}
	return msgs
}
