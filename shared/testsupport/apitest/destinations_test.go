package apitest

import (
	"context"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestDestinationPolicy: the numbers of toll fraud are refused by default
// (400 naming why, nothing queued, nothing stored), the countries are the
// region's, and the operator's policy allows what it names.
func TestDestinationPolicy(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	// acct_b has the default policy of region us: US and CA.
	keyB, _, err := h.prov.CreateKey(ctx, voiceops.KeyService, "acct_b", "proj_b1")
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{
		"+19005550123":  "premium rate",                            // +1 900
		"+449090901234": "premium rate",                            // +44 909
		"+449012345678": "premium rate",                            // +44 901
		"+448702345678": "premium rate",                            // +44 870
		"+447012345678": "personal number",                         // +44 70
		"+445612345678": "VoIP",                                    // +44 56
		"+445512345678": "universal access",                        // +44 55
		"+881612345678": "international network",                   // +881 (satellite)
		"+883140123456": "international network",                   // +883
		"+18765550123":  "JM, a country this account may not call", // NANP, but Jamaica
		"+442079460000": "GB, a country this account may not call",
	}
	for number, why := range refused {
		before := len(h.dials.sent())
		res := h.trigger(keyB, `{"to_number":"`+number+`"}`).Expect(t, 400)
		msg, _ := res.JSON(t)["error_message"].(string)
		if !strings.HasPrefix(msg, "destination refused: to_number is") || !strings.Contains(msg, why) {
			t.Errorf("%s: error_message %q, want it to name %q", number, msg, why)
		}
		if len(h.dials.sent()) != before {
			t.Errorf("%s: a refused destination queued a dial job", number)
		}
	}
	// Both reasons when both apply (a premium number of another country).
	res := h.trigger(keyB, `{"to_number":"+449090901234"}`).Expect(t, 400)
	if msg := res.JSON(t)["error_message"].(string); !strings.Contains(msg, "GB, a country") || !strings.Contains(msg, "premium_rate") {
		t.Errorf("both reasons: %q", msg)
	}
	for _, number := range []string{"+14155550100", "+16135550123", "+18005550100"} { // US, CA, US toll-free
		h.trigger(keyB, `{"to_number":"`+number+`"}`).Expect(t, 200)
	}
	if jobs := h.dials.sent(); len(jobs) != 3 {
		t.Errorf("%d dial jobs, want the 3 allowed calls", len(jobs))
	}

	// The operator allows premium rate and international networks, and GB.
	p := destination.Policy{Countries: []string{"CA", "GB", "US"}, Allow: []destination.Type{destination.PremiumRate, destination.InternationalNetwork}}
	if err := h.store.Destinations().SetDestinationPolicy(ctx, "acct_b", &p); err != nil {
		t.Fatal(err)
	}
	for _, number := range []string{"+19005550123", "+449090901234", "+448702345678", "+881612345678", "+442079460000"} {
		h.trigger(keyB, `{"to_number":"`+number+`"}`).Expect(t, 200)
	}
	for _, number := range []string{"+447012345678", "+18765550123", "+4915123456789"} { // still personal; JM and DE not allowed
		h.trigger(keyB, `{"to_number":"`+number+`"}`).Expect(t, 400)
	}
	// Back to the default.
	if err := h.store.Destinations().SetDestinationPolicy(ctx, "acct_b", nil); err != nil {
		t.Fatal(err)
	}
	h.trigger(keyB, `{"to_number":"+19005550123"}`).Expect(t, 400)
	// acct_a's policy is its own: acct_b's changes never reached it.
	h.trigger(h.service, `{"to_number":"+19005550123"}`).Expect(t, 400)
}

// TestCountryCodeIsISO: country_code is a real ISO 3166-1 alpha-2 code
// (libphonenumber's regions), not any two capitals.
func TestCountryCodeIsISO(t *testing.T) {
	h := newHarness(t)
	for _, cc := range []string{"XX", "ZZ", "AA", "QO", "EU", "UK", "gb", "G", "GBR", ""} {
		before := len(h.dials.sent())
		res := h.trigger(h.service, `{"to_number":"+14155550100","country_code":"`+cc+`"}`).Expect(t, 400)
		if msg := res.JSON(t)["error_message"].(string); !strings.Contains(msg, "country_code must be an ISO 3166-1 alpha-2") {
			t.Errorf("%q: %s", cc, msg)
		}
		if len(h.dials.sent()) != before {
			t.Errorf("%q: queued a dial job", cc)
		}
	}
	for _, cc := range []string{"US", "GB", "DE", "JP", "AC", "XK"} {
		h.trigger(h.service, `{"to_number":"+14155550100","country_code":"`+cc+`"}`).Expect(t, 200)
	}
}
