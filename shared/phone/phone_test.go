package phone_test

import (
	"testing"

	"github.com/voiceops/opsapi/shared/destination"
	"github.com/voiceops/opsapi/shared/phone"
)

func TestValid(t *testing.T) {
	for n, want := range map[string]bool{
		"+447911123456":     true,  // UK mobile
		"+442079460000":     true,  // UK London
		"+14155552671":      true,  // US San Francisco
		"+12125551234":      true,  // US New York
		"447911123456":      false, // missing +
		"14155552671":       false, // missing +
		"+44791112345a":     false, // letters
		"+1415CALLNOW":      false, // letters
		"+44 7911 123456":   false, // spaces
		"+1-415-555-2671":   false, // punctuation
		"+4479":             false, // too short
		"+1415":             false, // too short
		"+1":                false, // a country code alone
		"+":                 false,
		"":                  false,
		"+0447911123456":    false, // no country code starts with 0
		"+4479111234567890": false, // too long
		"+999123456789":     false, // no such country
		"+10005552671":      false, // US area code 000 is not assigned
		"＋447911123456":     false, // full-width plus
	} {
		if got := phone.Valid(n); got != want {
			t.Errorf("Valid(%q) = %v, want %v", n, got, want)
		}
	}
}

// TestClassify: the numbers of issue 24's toll-fraud finding, as the
// destination policy sees them.
func TestClassify(t *testing.T) {
	for n, want := range map[string]destination.Number{
		"+19005550123":  {Country: "US", Type: destination.PremiumRate},
		"+449090901234": {Country: "GB", Type: destination.PremiumRate},
		"+449012345678": {Country: "GB", Type: destination.PremiumRate},
		"+448702345678": {Country: "GB", Type: destination.PremiumRate},
		"+447012345678": {Country: "GB", Type: destination.PersonalNumber},
		"+445612345678": {Country: "GB", Type: destination.VoIP},
		"+445512345678": {Country: "GB", Type: destination.UAN},
		"+881612345678": {Type: destination.InternationalNetwork},
		"+883140123456": {Type: destination.InternationalNetwork},
		"+14155550100":  {Country: "US", Type: destination.FixedLineOrMobile},
		"+442079460000": {Country: "GB", Type: destination.FixedLine},
		"+18765550123":  {Country: "JM", Type: destination.Mobile},
	} {
		if !phone.Valid(n) {
			t.Errorf("%s is not valid", n)
		}
		if got := phone.Classify(n); got != want {
			t.Errorf("Classify(%s) = %+v, want %+v", n, got, want)
		}
	}
}

func TestValidCountry(t *testing.T) {
	for c, want := range map[string]bool{"US": true, "GB": true, "DE": true, "AC": true, "XK": true,
		"XX": false, "ZZ": false, "EU": false, "UK": false, "001": false, "gb": false, "": false, "G": false} {
		if got := phone.ValidCountry(c); got != want {
			t.Errorf("ValidCountry(%q) = %v", c, got)
		}
	}
}
