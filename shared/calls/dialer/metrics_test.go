package dialer

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/platform/telemetry/prom"
)

func TestDialsAreCountedByOutcomeAndReason(t *testing.T) {
	f := newFixture(t)
	reg := prom.New()
	f.d.Telemetry = reg
	ctx := context.Background()
	placed := f.trigger(t, "acct_a", "+14155550100")
	if err := f.d.Handle(ctx, placed); err != nil {
		t.Fatal(err)
	}
	checks, _ := f.queue.take()
	f.clock.Set(checks[0].Deadline) // never reported: failed as timeout
	if err := f.d.Handle(ctx, checks[0]); err != nil {
		t.Fatal(err)
	}
	f.prov.err = errors.Join(telephony.ErrRejected, errors.New("21211 invalid To"))
	if err := f.d.Handle(ctx, f.trigger(t, "acct_b", "+14155550101")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := reg.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`voiceops_dials_total{outcome="placed",reason="none"} 1`,
		`voiceops_dials_total{outcome="failed",reason="timeout"} 1`,
		`voiceops_dials_total{outcome="failed",reason="failed"} 1`,
	} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("metrics lack %s:\n%s", want, out.String())
		}
	}
}
