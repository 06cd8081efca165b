package phone_test

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
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

// TestValidIsLibphonenumbersValidity: Valid agrees with libphonenumber's
// IsValidNumber over numbers of every calling code (random digits, fixed
// seed), and the memo never answers for another number.
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

// TestClassifyAsLibphonenumber: Valid and Classify answer what the library
// answers for the example number of every type of every region and
// international network, numbers drawn from each type's pattern, both
// behind a national prefix (every string of one to three digits that the
// prefix pattern takes: the parse strips it from some numbers and so
// rewrites them), and the examples with a digit more, less or changed.
func TestClassifyAsLibphonenumber(t *testing.T) {
	coll, err := phonenumbers.MetadataCollection()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 11))
	numbers := []string{"+3758100862037"} // Belarus: the parse takes 8 for the national prefix
	for _, m := range coll.GetMetadata() {
		cc := "+" + strconv.Itoa(int(m.GetCountryCode()))
		var prefixes []string
		if p := m.GetNationalPrefixForParsing(); p != "" {
			prefixes = phone.PrefixStrings(regexp.MustCompile("^(?:"+p+")"), 3)
		}
		for _, d := range []*phonenumbers.PhoneNumberDesc{
			m.GetGeneralDesc(), m.GetFixedLine(), m.GetMobile(), m.GetTollFree(), m.GetPremiumRate(), m.GetSharedCost(),
			m.GetPersonalNumber(), m.GetVoip(), m.GetPager(), m.GetUan(), m.GetVoicemail(), m.GetNoInternationalDialling(),
		} {
			ex := d.GetExampleNumber()
			if ex == "" {
				continue
			}
			// The example and numbers drawn from the type's pattern, alone
			// and behind each national prefix; the example changed, alone.
			drawn := []string{ex}
			if p := d.GetNationalNumberPattern(); p != "" && p != "NA" {
				re, err := syntax.Parse(p, syntax.Perl)
				if err != nil {
					t.Fatal(err)
				}
				for range 8 {
					drawn = append(drawn, string(phone.MatchingDigits(re, r, nil)))
				}
			}
			for _, national := range drawn {
				numbers = append(numbers, cc+national)
				for _, p := range prefixes {
					numbers = append(numbers, cc+p+national)
				}
			}
			numbers = append(numbers, cc+ex+"0", cc+ex[:len(ex)-1])
			for range 4 {
				b := []byte(ex)
				for range 1 + r.IntN(3) {
					b[r.IntN(len(b))] = byte('0' + r.IntN(10))
				}
				numbers = append(numbers, cc+string(b))
			}
		}
	}
	byType := map[destination.Type]int{}
	for _, n := range numbers {
		want, wantValid := libphonenumber(n)
		if got := phone.Classify(n); got != want {
			t.Errorf("%s: Classify = %+v, libphonenumber %+v", n, got, want)
		}
		if got := phone.Valid(n); got != wantValid {
			t.Errorf("%s: Valid = %v, libphonenumber %v", n, got, wantValid)
		}
		byType[want.Type]++
	}
	// The corpus reaches every type the policy knows, and invalid numbers.
	for _, ty := range []destination.Type{destination.Unknown, destination.FixedLine, destination.Mobile, destination.FixedLineOrMobile,
		destination.TollFree, destination.PremiumRate, destination.SharedCost, destination.VoIP, destination.PersonalNumber,
		destination.Pager, destination.UAN, destination.Voicemail, destination.InternationalNetwork} {
		if byType[ty] == 0 {
			t.Errorf("no number of type %q among the %d checked", ty, len(numbers))
		}
	}
}

// FuzzClassifyAsLibphonenumber: any string, and the plus and digits taken
// from it, are classified as the library classifies them.
func FuzzClassifyAsLibphonenumber(f *testing.F) {
	for _, s := range []string{"+447911123456", "+14155552671", "+390612345678", "+5491123456789", "+8613800138000", "+80012345678", "+4407911123456", "+12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		digits := []byte{'+'}
		for i := 0; i < len(s) && len(digits) < 17; i++ {
			if s[i] >= '0' && s[i] <= '9' {
				digits = append(digits, s[i])
			}
		}
		for _, n := range []string{s, string(digits)} {
			want, wantValid := libphonenumber(n)
			if got := phone.Classify(n); got != want {
				t.Errorf("Classify(%q) = %+v, libphonenumber %+v", n, got, want)
			}
			if got := phone.Valid(n); got != wantValid {
				t.Errorf("Valid(%q) = %v, libphonenumber %v", n, got, wantValid)
			}
		}
	})
}

// libphonenumber is Valid and Classify answered by the library itself:
// Parse, the validity and type of the number, and its region.
func libphonenumber(n string) (destination.Number, bool) {
	unknown := destination.Number{Type: destination.Unknown}
	if !voiceops.ValidE164(n) {
		return unknown, false
	}
	num, err := phonenumbers.Parse(n, "")
	if err != nil || !phonenumbers.IsValidNumber(num) || phonenumbers.Format(num, phonenumbers.E164) != n {
		return unknown, false
	}
	region := phonenumbers.GetRegionCodeForNumber(num)
	if region == phonenumbers.REGION_CODE_FOR_NON_GEO_ENTITY {
		return destination.Number{Type: destination.InternationalNetwork}, true
	}
	t, ok := map[phonenumbers.PhoneNumberType]destination.Type{
		phonenumbers.FIXED_LINE:           destination.FixedLine,
		phonenumbers.MOBILE:               destination.Mobile,
		phonenumbers.FIXED_LINE_OR_MOBILE: destination.FixedLineOrMobile,
		phonenumbers.TOLL_FREE:            destination.TollFree,
		phonenumbers.PREMIUM_RATE:         destination.PremiumRate,
		phonenumbers.SHARED_COST:          destination.SharedCost,
		phonenumbers.VOIP:                 destination.VoIP,
		phonenumbers.PERSONAL_NUMBER:      destination.PersonalNumber,
		phonenumbers.PAGER:                destination.Pager,
		phonenumbers.UAN:                  destination.UAN,
		phonenumbers.VOICEMAIL:            destination.Voicemail,
	}[phonenumbers.GetNumberType(num)]
	if !ok {
		return unknown, false
	}
	return destination.Number{Country: region, Type: t}, true
}
