package phone

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
)

// TestParsedNationalNumberAsLibphonenumber: what parsedNationalNumber
// keeps of a number is what libphonenumber's parse keeps of the same
// digits written nationally in that region (Parse(digits, region), where
// the only rewriting is the national prefix's): numbers drawn from every
// type pattern of every region with a national prefix, alone and behind
// every string of one or two digits the prefix pattern takes and
// prefixes drawn from that pattern. Written
// nationally, a national prefix is the usual case, so this reaches every
// branch: the prefix stripped, transformed (Argentina's 15, Mexico's 1),
// kept because the rest is too short or no longer a number of the region.
func TestParsedNationalNumberAsLibphonenumber(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	coll, err := phonenumbers.MetadataCollection()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*region{}
	for i := range regions {
		byID[regions[i].id] = &regions[i]
	}
	outcomes := map[string]int{}
	for _, m := range coll.GetMetadata() {
		home := byID[m.GetId()]
		if m.GetId() == nonGeographic || m.GetNationalPrefixForParsing() == "" {
			continue
		}
		if home == nil {
			t.Fatalf("region %s is not in metadata.go", m.GetId())
		}
		prefixes := append([]string{""}, prefixStrings(compiled(home.nationalPrefix), 2)...)
		// And prefixes drawn from the pattern: some take digits after the
		// prefix into a group that the transformation keeps.
		npfp, err := syntax.Parse(m.GetNationalPrefixForParsing(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		for range 8 {
			prefixes = append(prefixes, string(matchingDigits(npfp, r, nil)))
		}
		cc := strconv.Itoa(int(m.GetCountryCode()))
		for _, d := range []*phonenumbers.PhoneNumberDesc{m.GetGeneralDesc(), m.GetFixedLine(), m.GetMobile(), m.GetTollFree(), m.GetPremiumRate(),
			m.GetSharedCost(), m.GetPersonalNumber(), m.GetVoip(), m.GetPager(), m.GetUan(), m.GetVoicemail()} {
			p := d.GetNationalNumberPattern()
			if p == "" || p == "NA" {
				continue
			}
			re, err := syntax.Parse(p, syntax.Perl)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				number := string(matchingDigits(re, r, nil))
				for _, pre := range prefixes {
					national := pre + number
					if strings.HasPrefix(national, cc) || len(national) > 17 {
						continue // the parse would take the calling code from it
					}
					num, err := phonenumbers.ParseAndKeepRawInput(national, m.GetId())
					if err != nil || num.GetCountryCodeSource() != phonenumbers.PhoneNumber_FROM_DEFAULT_COUNTRY {
						continue // not a national number to the library (too short, an international prefix, ...)
					}
					want := phonenumbers.GetNationalSignificantNumber(num)
					got := parsedNationalNumber(national, home)
					if got != want {
						t.Errorf("%s %s: parsedNationalNumber = %s, libphonenumber keeps %s", m.GetId(), national, got, want)
					}
					switch {
					case got == national:
						outcomes["kept"]++
					case strings.HasSuffix(national, got):
						outcomes["stripped"]++
					default:
						outcomes["transformed"]++
					}
				}
			}
		}
	}
	for _, o := range []string{"kept", "stripped", "transformed"} {
		if outcomes[o] < 10 {
			t.Errorf("only %d numbers %s: %v", outcomes[o], o, outcomes)
		}
	}
}

// prefixStrings are the strings of one to maxWidth digits that re, an
// anchored national prefix pattern, takes whole.
func prefixStrings(re *regexp.Regexp, maxWidth int) []string {
	var out []string
	for width, count := 1, 10; width <= maxWidth; width, count = width+1, count*10 {
		for v := range count {
			s := fmt.Sprintf("%0*d", width, v)
			if loc := re.FindStringIndex(s); loc != nil && loc[1] == len(s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// matchingDigits appends to b a string of digits that re matches, drawn at
// random: numbers of a type as its pattern writes them, most of them
// valid, many sharing their first digits with a national prefix.
func matchingDigits(re *syntax.Regexp, r *rand.Rand, b []byte) []byte {
	repeat := func(lo, hi int) []byte {
		if hi < 0 {
			hi = lo + 2
		}
		for range lo + r.IntN(hi-lo+1) {
			b = matchingDigits(re.Sub[0], r, b)
		}
		return b
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			b = utf8.AppendRune(b, c)
		}
	case syntax.OpCharClass:
		i := 2 * r.IntN(len(re.Rune)/2)
		b = utf8.AppendRune(b, re.Rune[i]+rune(r.IntN(int(re.Rune[i+1]-re.Rune[i])+1)))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b = append(b, byte('0'+r.IntN(10)))
	case syntax.OpCapture:
		b = matchingDigits(re.Sub[0], r, b)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			b = matchingDigits(sub, r, b)
		}
	case syntax.OpAlternate:
		b = matchingDigits(re.Sub[r.IntN(len(re.Sub))], r, b)
	case syntax.OpStar:
		b = repeat(0, 3)
	case syntax.OpPlus:
		b = repeat(1, 3)
	case syntax.OpQuest:
		b = repeat(0, 1)
	case syntax.OpRepeat:
		b = repeat(re.Min, re.Max)
	}
	return b
}
