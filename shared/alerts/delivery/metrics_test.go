package delivery_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/telemetry/prom"
)

func TestAttemptsAreCountedByOutcome(t *testing.T) {
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	reg := prom.New()
	e := newEnv(t, rc, envOptions{telemetry: reg})
	e.endpoint("/hook", nil)
	e.publish()
	e.drain()
	var out strings.Builder
	if err := reg.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`voiceops_delivery_attempts_total{outcome="retry"} 1`,
		`voiceops_delivery_attempts_total{outcome="delivered"} 1`,
		`voiceops_delivery_retries_scheduled_total 1`,
		`voiceops_delivery_latency_milliseconds_count{outcome="delivered"} 1`,
		// The event's age at its first attempt; the retry is not one.
		`voiceops_pending_event_age_milliseconds_count{source="dispatch"} 1`,
	} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("metrics lack %s:\n%s", want, out.String())
		}
	}
}
