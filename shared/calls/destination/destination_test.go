package destination_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDefaultCountries(t *testing.T) {
	if got := destination.DefaultCountries(voiceops.RegionUS); !reflect.DeepEqual(got, []string{"CA", "US"}) {
		t.Errorf("us: %v", got)
	}
	if got := destination.DefaultCountries(voiceops.RegionUK); !reflect.DeepEqual(got, []string{"GB"}) {
		t.Errorf("uk: %v", got)
	}
	eu := destination.DefaultCountries(voiceops.RegionEU)
	if len(eu) != 30 || strings.Join(eu, ",") != "AT,BE,BG,CY,CZ,DE,DK,EE,ES,FI,FR,GR,HR,HU,IE,IS,IT,LI,LT,LU,LV,MT,NL,NO,PL,PT,RO,SE,SI,SK" {
		t.Errorf("eu: %d %v", len(eu), eu)
	}
	eu[0] = "XX"
	if destination.DefaultCountries(voiceops.RegionEU)[0] != "AT" {
		t.Error("DefaultCountries hands out its own list")
	}
}

func TestRefusal(t *testing.T) {
	def := destination.Effective(destination.Policy{}, voiceops.RegionUK)
	for _, c := range []struct {
		n    destination.Number
		p    destination.Policy
		want string // "" allowed
	}{
		{destination.Number{Country: "GB", Type: destination.Mobile}, def, ""},
		{destination.Number{Country: "GB", Type: destination.TollFree}, def, ""},
		{destination.Number{Country: "GB", Type: destination.PremiumRate}, def, "premium rate"},
		{destination.Number{Country: "GB", Type: destination.SharedCost}, def, "shared cost"},
		{destination.Number{Country: "GB", Type: destination.PersonalNumber}, def, "personal number"},
		{destination.Number{Country: "GB", Type: destination.UAN}, def, "universal access"},
		{destination.Number{Country: "GB", Type: destination.VoIP}, def, "VoIP"},
		{destination.Number{Type: destination.InternationalNetwork}, def, "international network"},
		{destination.Number{Country: "IM", Type: destination.Mobile}, def, "IM, a country"},
		{destination.Number{Country: "GB", Type: destination.PremiumRate}, destination.Policy{Countries: []string{"GB"}, Allow: []destination.Type{destination.PremiumRate}}, ""},
		{destination.Number{Type: destination.InternationalNetwork}, destination.Policy{Countries: []string{"GB"}, Allow: []destination.Type{destination.InternationalNetwork}}, ""},
	} {
		err := destination.Refusal(c.p, c.n)
		var msg string
		var e *voiceops.Error
		if errors.As(err, &e) {
			for _, f := range e.Fields {
				msg += f.Field + " " + f.Message + "; "
			}
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v under %+v: %v", c.n, c.p, err)
		case c.want != "" && (err == nil || voiceops.KindOf(err) != voiceops.KindBadRequest || !strings.Contains(msg, c.want)):
			t.Errorf("%+v under %+v: %v, want a 400 naming %q", c.n, c.p, err, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	valid := func(c string) bool { return c == "US" || c == "GB" }
	got, err := destination.Validate(destination.Policy{Countries: []string{"US", "GB", "US"}, Allow: []destination.Type{"voip", "premium_rate", "voip"}}, valid)
	if err != nil || !reflect.DeepEqual(got, destination.Policy{Countries: []string{"GB", "US"}, Allow: []destination.Type{"premium_rate", "voip"}}) {
		t.Errorf("%#v %v", got, err)
	}
	for _, p := range []destination.Policy{{Countries: []string{"XX"}}, {Allow: []destination.Type{"mobile"}}, {Allow: []destination.Type{""}}} {
		if _, err := destination.Validate(p, valid); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

// countingPolicies is a policy store that counts its reads.
type countingPolicies struct {
	policies map[string]destination.Policy
	reads    int
	err      error
}

func (c *countingPolicies) DestinationPolicy(_ context.Context, accountID string) (destination.Policy, error) {
	c.reads++
	if c.err != nil {
		return destination.Policy{}, c.err
	}
	p, ok := c.policies[accountID]
	if !ok {
		return destination.Policy{}, voiceops.ErrNotFound
	}
	return p, nil
}

// TestCacheWithinTTL: a warm instance reads an account's policy once per
// CacheTTL, and an operator's change applies within CacheTTL; a missing
// policy is kept like a set one, a failed read is not.
func TestCacheWithinTTL(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := &countingPolicies{policies: map[string]destination.Policy{"acct_a": {Countries: []string{"US"}}}}
	c := &destination.Cache{Policies: store, Now: func() time.Time { return now }}
	for range 5 {
		p, err := c.DestinationPolicy(ctx, "acct_a")
		if err != nil || !reflect.DeepEqual(p.Countries, []string{"US"}) {
			t.Fatalf("policy %+v, %v", p, err)
		}
		p.Countries[0] = "XX" // the caller's own copy
	}
	if store.reads != 1 {
		t.Errorf("%d reads for 5 triggers within the TTL, want 1", store.reads)
	}

	// The operator adds GB: still the old policy until the TTL has passed
	// since the read began, then the new one.
	store.policies["acct_a"] = destination.Policy{Countries: []string{"GB", "US"}}
	now = now.Add(destination.CacheTTL - time.Millisecond)
	if p, _ := c.DestinationPolicy(ctx, "acct_a"); !reflect.DeepEqual(p.Countries, []string{"US"}) {
		t.Errorf("within the TTL: %v", p.Countries)
	}
	now = now.Add(time.Millisecond)
	if p, _ := c.DestinationPolicy(ctx, "acct_a"); !reflect.DeepEqual(p.Countries, []string{"GB", "US"}) {
		t.Errorf("at the TTL: %v, want the operator's change", p.Countries)
	}

	// An account without a policy: ErrNotFound (the region's default),
	// read once.
	before := store.reads
	for range 3 {
		if _, err := c.DestinationPolicy(ctx, "acct_b"); !errors.Is(err, voiceops.ErrNotFound) {
			t.Errorf("no policy: %v", err)
		}
	}
	if store.reads != before+1 {
		t.Errorf("%d reads of a missing policy, want 1", store.reads-before)
	}

	// A failed read is the trigger's error, and is read again next time.
	store.err = errors.New("throttled")
	if _, err := c.DestinationPolicy(ctx, "acct_c"); err == nil || errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("failed read: %v", err)
	}
	store.err = nil
	if _, err := c.DestinationPolicy(ctx, "acct_c"); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("after a failed read: %v", err)
	}
}
