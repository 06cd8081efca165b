package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/notify"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func post(t *testing.T, h http.Handler, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/", bytes.NewReader(body)))
	return rec
}

func sampleEvent() voiceops.AlertEvent {
	v := int64(3)
	r := voiceops.AlertRule{ID: "ar_1", Name: "Errors", Metric: "api_errors", Operator: voiceops.OpGreaterEqual, Threshold: 1,
		Window: voiceops.Window5m, State: voiceops.StateAlert, CurrentValue: &v}
	return *voiceops.TransitionEvent(voiceops.StateOK, &r, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
}

func TestStandInsCheckTheVendorFormat(t *testing.T) {
	ev := sampleEvent()
	for _, c := range []struct {
		kind   voiceops.EndpointKind
		status int
		line   string
	}{
		{voiceops.EndpointSlack, 200, "valid slack: "},
		{voiceops.EndpointPagerDuty, 202, "valid pagerduty trigger voiceops:ar_1:1: "},
	} {
		var out bytes.Buffer
		h, err := newStandIn(string(c.kind), false, &out)
		if err != nil {
			t.Fatal(err)
		}
		body, err := notify.Body(voiceops.WebhookEndpoint{Kind: c.kind, RoutingKey: strings.Repeat("k", 32)}, ev.Body, "")
		if err != nil {
			t.Fatal(err)
		}
		if rec := post(t, h, body); rec.Code != c.status || !strings.HasPrefix(out.String(), c.line) {
			t.Errorf("%s: %d, printed %q", c.kind, rec.Code, out.String())
		}
		// A webhook's body is not the vendor's format: refused as the
		// vendor refuses it.
		out.Reset()
		if rec := post(t, h, ev.Body); rec.Code != 400 || !strings.HasPrefix(out.String(), "INVALID "+string(c.kind)) {
			t.Errorf("%s, an event body: %d, printed %q", c.kind, rec.Code, out.String())
		}
	}
	if _, err := newStandIn("opsgenie", false, &bytes.Buffer{}); err == nil {
		t.Error("an unknown kind is accepted")
	}
}
