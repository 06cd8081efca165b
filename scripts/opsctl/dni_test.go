package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDNIAdd(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	opsctl := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, func(string) string { return "" }, &out, &stores{accounts: store, agents: store.AgentConfigs(), dni: store.DNI()})
		return out.String(), err
	}
	for _, args := range [][]string{
		{"account", "create", "-name", "Acme", "-id", "acct_acme"},
		{"project", "create", "-account", "acct_acme", "-name", "IVR", "-id", "proj_ivr"},
	} {
		if _, err := opsctl(args...); err != nil {
			t.Fatal(err)
		}
	}
	out, err := opsctl("dni", "add", "-account", "acct_acme", "-project", "proj_ivr", "-numbers", "+441632960100, +441632960101", "-hold", "3m")
	if err != nil || !strings.Contains(out, "2 more or updated numbers") {
		t.Fatalf("dni add: %q %v", out, err)
	}
	now := time.Now()
	seen := map[string]bool{}
	for range 2 {
		n, exp, err := store.DNI().Reserve(ctx, "acct_acme", "proj_ivr", nil, now)
		if err != nil || !exp.Equal(now.Add(3*time.Minute).UTC().Truncate(time.Millisecond)) {
			t.Fatalf("Reserve: %s %v %v", n, exp, err)
		}
		seen[n] = true
	}
	if !seen["+441632960100"] || !seen["+441632960101"] {
		t.Errorf("reserved %v", seen)
	}
	if _, _, err := store.DNI().Reserve(ctx, "acct_acme", "proj_ivr", nil, now); voiceops.KindOf(err) != voiceops.KindNotFound {
		t.Errorf("a third reservation: %v", err)
	}
	// The default hold is 10 minutes.
	if _, err := opsctl("dni", "add", "-account", "acct_acme", "-project", "proj_ivr", "-numbers", "+441632960102"); err != nil {
		t.Fatal(err)
	}
	if _, exp, err := store.DNI().Reserve(ctx, "acct_acme", "proj_ivr", nil, now); err != nil || !exp.Equal(now.Add(10*time.Minute).UTC().Truncate(time.Millisecond)) {
		t.Errorf("default hold: %v %v", exp, err)
	}
	for _, bad := range [][]string{
		{"dni", "add", "-account", "acct_acme", "-project", "proj_ivr"},                                            // no numbers
		{"dni", "add", "-account", "acct_acme", "-project", "proj_ivr", "-numbers", "01632960100"},                 // not E.164
		{"dni", "add", "-account", "acct_acme", "-project", "proj_none", "-numbers", "+441632960100"},              // unknown project
		{"dni", "add", "-account", "acct_acme", "-project", "proj_ivr", "-numbers", "+441632960100", "-hold", "0"}, // no hold
		{"dni", "add", "-account", "acct_acme", "-project", "proj_ivr", "-numbers", "+441632960100", "-hold", "48h"},
	} {
		if _, err := opsctl(bad...); err == nil {
			t.Errorf("opsctl %v: no error", bad)
		}
	}
	if out, _ := opsctl("help"); !strings.Contains(out, "dni add") {
		t.Errorf("usage does not list dni add")
	}
}
