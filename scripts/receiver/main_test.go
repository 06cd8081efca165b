package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/webhook"
)

func TestReceiverVerifiesBothSchemes(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	var out bytes.Buffer
	h, err := newHandler(secret, true, &out)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"event_type":"alerts.triggered"}`)
	send := func(secrets []string) int {
		hdr, err := webhook.Sign("evt_1", time.Now(), body, secrets)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("POST", "/", bytes.NewReader(body))
		for k, v := range hdr {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if got := send([]string{"whsec_" + strings.Repeat("A", 32)}); got != http.StatusUnauthorized {
		t.Errorf("wrong secret: %d", got)
	}
	if got := send([]string{secret}); got != http.StatusInternalServerError {
		t.Errorf("first attempt with -fail-first: %d", got)
	}
	if got := send([]string{secret}); got != http.StatusNoContent {
		t.Errorf("second attempt: %d", got)
	}
	if !strings.Contains(out.String(), "verified evt_1 (both signatures)") {
		t.Errorf("output: %s", out.String())
	}
}

func TestReceiverAnswersAGetWithoutPrinting(t *testing.T) {
	var out bytes.Buffer
	h, err := newHandler("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", false, &out)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusOK || out.Len() != 0 {
		t.Errorf("GET: %d, printed %q", rec.Code, out.String())
	}
}
