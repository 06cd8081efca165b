package phone_test

import (
	"testing"

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
