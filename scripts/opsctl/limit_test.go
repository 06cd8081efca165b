package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestLimitOverride(t *testing.T) {
	ctx := context.Background()
	store, limits := memory.New(), memory.NewRequests()
	opsctl := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, func(string) string { return "" }, &out, &stores{accounts: store, limits: limits})
		return out.String(), err
	}
	if _, err := opsctl("account", "create", "-name", "Acme", "-id", "acct_acme"); err != nil {
		t.Fatal(err)
	}
	if out, err := opsctl("limit", "show", "-account", "acct_acme"); err != nil || !strings.Contains(out, "25 requests a second, bursts of 50") || !strings.Contains(out, "default") {
		t.Errorf("limit show: %q %v", out, err)
	}
	if out, err := opsctl("limit", "set", "-account", "acct_acme", "-rate", "200", "-burst", "400"); err != nil || !strings.Contains(out, "200 requests a second") {
		t.Fatalf("limit set: %q %v", out, err)
	}
	if got, err := limits.AccountLimit(ctx, "acct_acme"); err != nil || got != (ratelimit.Limit{Rate: 200, Burst: 400}) {
		t.Errorf("stored %+v %v", got, err)
	}
	if out, _ := opsctl("limit", "show", "-account", "acct_acme"); !strings.Contains(out, "200 requests a second, bursts of 400") || !strings.Contains(out, "override") {
		t.Errorf("limit show after set: %q", out)
	}
	// Bad input changes nothing.
	for _, args := range [][]string{
		{"limit", "set", "-account", "acct_acme", "-rate", "0", "-burst", "10"},
		{"limit", "set", "-account", "acct_acme", "-rate", "10", "-burst", "0"},
		{"limit", "set", "-account", "acct_acme", "-rate", "999999", "-burst", "10"},
		{"limit", "set", "-account", "acct_nope", "-rate", "10", "-burst", "10"},
		{"limit", "set", "-rate", "10", "-burst", "10"},
	} {
		if _, err := opsctl(args...); err == nil {
			t.Errorf("opsctl %v succeeded", args)
		}
	}
	if got, _ := limits.AccountLimit(ctx, "acct_acme"); got != (ratelimit.Limit{Rate: 200, Burst: 400}) {
		t.Errorf("after refused commands: %+v", got)
	}
	if _, err := opsctl("limit", "reset", "-account", "acct_acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := limits.AccountLimit(ctx, "acct_acme"); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("after reset: %v", err)
	}
}
