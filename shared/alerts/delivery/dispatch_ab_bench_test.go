package delivery_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/testsupport/abbench"
	"github.com/voiceops/opsapi/shared/voiceops"
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
//	go test ./shared/alerts/delivery -run '^$' -bench DispatchAB
func BenchmarkDispatchAB(b *testing.B) {
	f := newDispatchFixture(b)
	ctx, rc, stores, d, now := f.ctx, f.rc, f.stores, f.d, f.now
	var msgs []queue.Message // the round's deliveries
	makeRound := func() { msgs = f.deliveries(b, msgs, abBatch) }
	dispatch := func() {
		parallel(b, func(i int) error { return d.Handle(ctx, msgs[i]) })
	}

	// The bare loop: BenchmarkBareSignedPost's body.
	tr := rc.srv.Client().Transport.(*http.Transport)
	client := webhook.NewClient(webhook.Options{AllowLoopback: true, TLSConfig: tr.TLSClientConfig})
	ev := voiceops.NewAlertEvent(voiceops.EventTriggered, benchRule(), voiceops.StateOK, now, false)
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
