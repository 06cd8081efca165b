package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/webhook"
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

// An event of a rule older than the last one printed is acknowledged and
// reported as ignored.
func TestReceiverIgnoresAnOlderEventOfARule(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	var out bytes.Buffer
	h, err := newHandler(secret, false, &out)
	if err != nil {
		t.Fatal(err)
	}
	send := func(id string, seq int) int {
		body := []byte(`{"event_type":"alerts.triggered","alert":{"id":"ar_1","sequence":` + string(rune('0'+seq)) + `}}`)
		hdr, err := webhook.Sign(id, time.Now(), body, []string{secret})
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
	for _, c := range []struct {
		id  string
		seq int
	}{{"evt_2", 2}, {"evt_1", 1}, {"evt_3", 3}} {
		if code := send(c.id, c.seq); code != http.StatusNoContent {
			t.Errorf("%s: %d", c.id, code)
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "rule ar_1 #1: older than #2, ignored") || !strings.Contains(lines[2], `"sequence":3`) {
		t.Errorf("output:\n%s", out.String())
	}
}
