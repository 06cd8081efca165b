package delivery_test

import (
	"net/http"
	"testing"

	"github.com/voiceops/opsapi/shared/alerts/notify/vendorformat"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Slack and PagerDuty endpoints go the webhooks' way: the same queue,
// retries and delivery log; only the body and the signing differ.

func TestSlackDeliveryIsRetriedAndLogged(t *testing.T) {
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok")) // Slack's answer: 200 "ok"
	})
	e := newEnv(t, rc, envOptions{})
	ep := e.endpoint("/services/T0/B0/x", func(ep *voiceops.WebhookEndpoint) {
		ep.Kind, ep.Headers = voiceops.EndpointSlack, map[string]string{}
	})
	ev := e.publish()
	e.drain()
	reqs := rc.requests()
	if len(reqs) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(reqs))
	}
	for _, r := range reqs {
		if err := vendorformat.ValidateSlack(r.body); err != nil {
			t.Errorf("%v\n%s", err, r.body)
		}
		if r.header.Get("webhook-signature") != "" || r.header.Get("X-Service-Signature") != "" {
			t.Errorf("a slack delivery is signed: %v", r.header)
		}
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryDelivered, 503, 200)
}

func TestPagerDutyDeliveryAcceptsAnyTwoHundred(t *testing.T) {
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusAccepted) // the Events API's answer
	})
	e := newEnv(t, rc, envOptions{})
	const key = "R0123456789ABCDEF0123456789abcde"
	ep := e.endpoint("/v2/enqueue", func(ep *voiceops.WebhookEndpoint) {
		ep.Kind, ep.RoutingKey, ep.Headers = voiceops.EndpointPagerDuty, key, map[string]string{}
	})
	ev := e.publish()
	e.drain()
	reqs := rc.requests()
	if len(reqs) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(reqs))
	}
	pd, err := vendorformat.ValidatePagerDuty(reqs[0].body)
	if err != nil || pd.RoutingKey != key || pd.EventAction != "trigger" || pd.Payload.CustomDetails["event_id"] != ev.ID {
		t.Errorf("%+v: %v\n%s", pd, err, reqs[0].body)
	}
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryDelivered, 202)
}

func TestPagerDutyBadRequestIsNotRetried(t *testing.T) {
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) })
	e := newEnv(t, rc, envOptions{})
	ep := e.endpoint("/v2/enqueue", func(ep *voiceops.WebhookEndpoint) {
		ep.Kind, ep.RoutingKey, ep.Headers = voiceops.EndpointPagerDuty, "R0123456789ABCDEF0123456789abcde", map[string]string{}
	})
	ev := e.publish()
	e.drain()
	wantLog(t, e.delivery(ev, ep), voiceops.DeliveryFailed, 400)
}
