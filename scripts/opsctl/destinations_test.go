package main

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDestinations(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	opsctl := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, func(string) string { return "" }, &out, &stores{accounts: store, destinations: store.Destinations()})
		return out.String(), err
	}
	if _, err := opsctl("account", "create", "-name", "Acme", "-id", "acct_acme"); err != nil {
		t.Fatal(err)
	}
	out, err := opsctl("destinations", "show", "-account", "acct_acme")
	if err != nil || !strings.Contains(out, "the default of region us") || !strings.Contains(out, "countries: CA, US") ||
		!strings.Contains(out, "refused types: premium_rate, shared_cost, personal_number, uan, voip, international_network") {
		t.Errorf("show: %q %v", out, err)
	}
	if out, err := opsctl("-region", "eu", "destinations", "show", "-account", "acct_acme"); err != nil || !strings.Contains(out, "AT, BE, BG") || !strings.Contains(out, "NO, PL") {
		t.Errorf("show in eu: %q %v", out, err)
	}
	// Types alone: the region's countries stay.
	if out, err := opsctl("destinations", "set", "-account", "acct_acme", "-allow", "premium_rate, international_network"); err != nil ||
		!strings.Contains(out, "countries: CA, US") || !strings.Contains(out, "allowed types refused by default: premium_rate, international_network") {
		t.Fatalf("set -allow: %q %v", out, err)
	}
	if out, err := opsctl("destinations", "set", "-account", "acct_acme", "-countries", "us,gb,US,MX"); err != nil || !strings.Contains(out, "countries: GB, MX, US") {
		t.Fatalf("set -countries: %q %v", out, err)
	}
	want := destination.Policy{Countries: []string{"GB", "MX", "US"}, Allow: []destination.Type{destination.InternationalNetwork, destination.PremiumRate}}
	if got, err := store.Destinations().DestinationPolicy(ctx, "acct_acme"); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("stored %#v %v, want %#v", got, err, want)
	}
	// Bad input changes nothing.
	for _, args := range [][]string{
		{"destinations", "set", "-account", "acct_acme", "-countries", "XX"},
		{"destinations", "set", "-account", "acct_acme", "-countries", "GB,ZZ"},
		{"destinations", "set", "-account", "acct_acme", "-allow", "mobile"},
		{"destinations", "set", "-account", "acct_acme", "-allow", "premium"},
		{"destinations", "set", "-account", "acct_acme"},
		{"destinations", "set", "-account", "acct_nope", "-countries", "US"},
		{"destinations", "set", "-countries", "US"},
	} {
		if _, err := opsctl(args...); err == nil {
			t.Errorf("opsctl %v succeeded", args)
		}
	}
	if got, _ := store.Destinations().DestinationPolicy(ctx, "acct_acme"); !reflect.DeepEqual(got, want) {
		t.Errorf("after refused commands: %#v", got)
	}
	if out, err := opsctl("destinations", "set", "-account", "acct_acme", "-countries", "default", "-allow", "none"); err != nil || !strings.Contains(out, "countries: CA, US") || !strings.Contains(out, "allowed types refused by default: none") {
		t.Errorf("set default/none: %q %v", out, err)
	}
	if _, err := opsctl("destinations", "reset", "-account", "acct_acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Destinations().DestinationPolicy(ctx, "acct_acme"); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("after reset: %v", err)
	}
}
