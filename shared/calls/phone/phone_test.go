package phone_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/nyaruka/phonenumbers"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/calls/phone"
	"github.com/voiceops/opsapi/shared/voiceops"
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

// TestClassify: the toll-fraud numbers, as the
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

// BenchmarkTriggerChecks is what a trigger asks of a number: Valid, then
// the destination policy's Classify (two numbers in turn, so that the memo
// of the last number never carries over); BenchmarkIsValidNumber is the
// check the trigger made before the policy, alone.
//
//	go test -run '^$' -bench 'TriggerChecks|IsValidNumber' -benchmem ./shared/calls/phone/
func BenchmarkTriggerChecks(b *testing.B) {
	numbers := []string{"+14155550100", "+14155550101"}
	i := 0
	for b.Loop() {
		n := numbers[i%2]
		i++
		if !phone.Valid(n) || phone.Classify(n).Country != "US" {
			b.Fatal(n)
		}
	}
}

func BenchmarkIsValidNumber(b *testing.B) {
	numbers := []string{"+14155550100", "+14155550101"}
	i := 0
	for b.Loop() {
		n := numbers[i%2]
		i++
		num, err := phonenumbers.Parse(n, "")
		if err != nil || !voiceops.ValidE164(n) || !phonenumbers.IsValidNumber(num) || phonenumbers.Format(num, phonenumbers.E164) != n {
			b.Fatal(n)
		}
	}
}

// TestValidIsLibphonenumbersValidity: Valid, which tells validity from one
// type lookup, agrees with libphonenumber's IsValidNumber over numbers of
// every calling code (random digits, fixed seed), and the memo never
// answers for another number.
func TestValidIsLibphonenumbersValidity(t *testing.T) {
	isValid := func(n string) bool {
		num, err := phonenumbers.Parse(n, "")
		return err == nil && voiceops.ValidE164(n) && phonenumbers.IsValidNumber(num) && phonenumbers.Format(num, phonenumbers.E164) == n
	}
	r := rand.New(rand.NewPCG(24, 7))
	valid := 0
	for cc := range phonenumbers.GetSupportedCallingCodes() {
		for range 60 {
			n := "+" + strconv.Itoa(cc)
			for range 4 + r.IntN(10) {
				n += strconv.Itoa(r.IntN(10))
			}
			want := isValid(n)
			if got := phone.Valid(n); got != want {
				t.Errorf("Valid(%s) = %v, IsValidNumber %v", n, got, want)
			}
			if c := phone.Classify(n); (c.Type != destination.Unknown) != want {
				t.Errorf("Classify(%s) = %+v, valid %v", n, c, want)
			}
			if want {
				valid++
			}
		}
	}
	if valid < 100 {
		t.Errorf("only %d valid numbers drawn: the test says little", valid)
	}
}
