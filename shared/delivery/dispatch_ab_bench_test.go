package delivery_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/delivery"
	"github.com/voiceops/opsapi/shared/memory"
	"github.com/voiceops/opsapi/shared/queue"
	"github.com/voiceops/opsapi/shared/testsupport/abbench"
	"github.com/voiceops/opsapi/shared/voiceops"
	"github.com/voiceops/opsapi/shared/webhook"
)

// abBatch is the deliveries of one round: 32 events to the ten endpoints.
const abBatch = 320

// BenchmarkDispatchAB is BenchmarkDispatch against BenchmarkBareSignedPost
// interleaved (shared/testsupport/abbench): each round sends abBatch
// deliveries, 16 at once, through the dispatcher (read, claim, sign, POST,
// record) and abBatch bare signed POSTs to the same local TLS receiver,
// in alternating order. The events and deliveries of a round are made
// before it, untimed. a-ms and base-ms are a round's milliseconds.
//
//	go test ./shared/delivery -run '^$' -bench DispatchAB
func BenchmarkDispatchAB(b *testing.B) {
	rc := newReceiver(b, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	ctx := context.Background()
	stores := memory.New().Stores()
	now := time.Now()
	if err := stores.Accounts.CreateAccount(ctx, voiceops.Account{ID: testAccount, CreatedAt: now}); err != nil {
		b.Fatal(err)
	}
	var eps []voiceops.WebhookEndpoint
	for range voiceops.MaxEndpointsPerAccount {
		ep := voiceops.NewEndpoint(voiceops.NewID(voiceops.PrefixEndpoint), testAccount, secretA, voiceops.EndpointInput{
			Name: "bench", URL: rc.srv.URL + "/hook", EventTypes: voiceops.EventTypes,
			Headers: map[string]string{"Authorization": "Bearer t0ken"},
		}, now)
		ep = voiceops.RotateSecret(ep, secretB, time.Hour, now)
		if err := stores.Endpoints.CreateEndpoint(ctx, ep); err != nil {
			b.Fatal(err)
		}
		eps = append(eps, ep)
	}
	d := delivery.NewDispatcher(delivery.Config{
		Stores: stores, Queue: discardQueue{}, Sender: rc.sender(), Logger: slog.New(slog.DiscardHandler),
	})
	v := int64(2100)
	rule := voiceops.AlertRule{ID: "ar_bench", AccountID: testAccount, Name: "bench", Metric: voiceops.MetricTurnLatencyP95,
		Operator: voiceops.OpGreater, Threshold: 1500, Window: voiceops.Window5m, State: voiceops.StateAlert, CurrentValue: &v}

	var msgs []queue.Message // the round's deliveries
	makeRound := func() {
		msgs = msgs[:0]
		for len(msgs) < abBatch {
			ev := voiceops.NewAlertEvent(voiceops.EventTriggered, rule, voiceops.StateOK, now, false)
			if err := stores.Events.PutEvent(ctx, ev); err != nil {
				b.Fatal(err)
			}
			var ds []voiceops.Delivery
			for _, ep := range eps {
				due := now
				dl := voiceops.Delivery{ID: voiceops.DeliveryID(ev.ID, ep.ID), AccountID: testAccount, EndpointID: ep.ID, EventID: ev.ID,
					EventType: ev.Type, Status: voiceops.DeliveryPending, NextAttemptAt: &due, CreatedAt: now, UpdatedAt: now}
				ds = append(ds, dl)
				msgs = append(msgs, queue.Message{AccountID: testAccount, EndpointID: ep.ID, EventID: ev.ID, DeliveryID: dl.ID, Attempt: 1})
			}
			if err := stores.Deliveries.CreateDeliveries(ctx, ds); err != nil {
				b.Fatal(err)
			}
		}
	}
	dispatch := func() {
		parallel(b, func(i int) error { return d.Handle(ctx, msgs[i]) })
	}

	// The bare loop: BenchmarkBareSignedPost's body.
	tr := rc.srv.Client().Transport.(*http.Transport)
	client := webhook.NewClient(webhook.Options{AllowLoopback: true, TLSConfig: tr.TLSClientConfig})
	ev := voiceops.NewAlertEvent(voiceops.EventTriggered, rule, voiceops.StateOK, now, false)
	body, err := json.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	keys := [][]byte{[]byte(secretA), []byte(secretB)}
	url := rc.srv.URL + "/hook"
	bare := func() {
		parallel(b, func(int) error { return bareSignedPost(client, url, ev.ID, body, keys) })
	}
	before := len(rc.requests())
	abbench.RunWith(b, makeRound, dispatch, bare)
	// Every delivery and every bare POST arrived, once.
	got := len(rc.requests()) - before
	if got%(2*abBatch) != 0 || got == 0 {
		b.Errorf("receiver got %d requests, not 2 x %d per round", got, abBatch)
	}
	last := msgs[len(msgs)-1]
	if dl, err := stores.Deliveries.GetDelivery(ctx, testAccount, last.EndpointID, last.DeliveryID); err != nil || dl.Status != voiceops.DeliveryDelivered {
		b.Errorf("last delivery: %+v (%v)", dl, err)
	}
	b.ReportMetric(abBatch, "deliveries/round")
}

// parallel runs f(0) to f(abBatch-1), 16 at once, and fails b on an error.
func parallel(b *testing.B, f func(i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= abBatch {
					return
				}
				if err := f(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
