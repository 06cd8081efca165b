// Package phone checks that phone numbers exist and tells their country and
// type, with libphonenumber's metadata and rules for numbers written in
// E.164.
//
// The metadata is github.com/nyaruka/phonenumbers', extracted into
// metadata.go (generated: go test ./shared/calls/phone -run
// TestMetadataFile -update). The library itself is not linked: it decodes
// all of its metadata in its package init, 6 to 11 ms and 2.5 MB on every
// cold start of the function that dials numbers, while a number needs the
// patterns of one calling code. Here the metadata is static data, and a
// pattern is compiled the first time a number needs it (tens of
// microseconds). What this package keeps of the library's parsing is the
// part that an E.164 string goes through; the tests hold every answer
// equal to the library's (example numbers of every type of every region,
// numbers drawn at random for every calling code, a fuzz target).
package phone

import (
	"regexp"
	"sync"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Valid reports whether n is a valid phone number written in E.164: the
// syntax (voiceops.ValidE164), then libphonenumber's parse and validity
// check (a number of a known country with an assigned length and prefix:
// its type is known), and n is how libphonenumber writes it in E.164.
func Valid(n string) bool {
	_, ok := lookup(n)
	return ok
}

// Classify tells the country and type of a number that Valid accepts (for
// the destination policy). A number of libphonenumber's non-geographic
// region "001" (+800, +808, +870, +878, +881, +882, +883, +888, +979) has
// no country and is an international network, whatever its type.
func Classify(n string) destination.Number {
	num, _ := lookup(n)
	return num
}

// ValidCountry reports whether code is the ISO 3166-1 alpha-2 code (in
// capitals) of a region with a numbering plan: libphonenumber's regions,
// which are the ISO codes of every country with its own numbering plan plus
// AC (Ascension), TA (Tristan da Cunha) and XK (Kosovo), which have their
// own. Codes of places without one (AQ, BV, HM, ...) are not among them.
func ValidCountry(code string) bool {
	if len(code) != 2 {
		return false
	}
	// countries is the sorted concatenation of the two-letter codes.
	lo, hi := 0, len(countries)/2
	for lo < hi {
		mid := (lo + hi) / 2
		switch c := countries[2*mid : 2*mid+2]; {
		case c == code:
			return true
		case c < code:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return false
}

// last is the number last looked up: the trigger asks Valid, then the
// destination policy Classify, of the same number, so the pattern
// matching runs once. A memo of one entry, exact by its key: a Lambda
// function serves one request at a time.
var last struct {
	sync.Mutex
	n     string
	num   destination.Number
	valid bool
}

// lookup classifies n once and tells both its validity and its class.
func lookup(n string) (destination.Number, bool) {
	last.Lock()
	if last.n == n && n != "" {
		num, valid := last.num, last.valid
		last.Unlock()
		return num, valid
	}
	last.Unlock()
	num, valid := classify(n)
	last.Lock()
	last.n, last.num, last.valid = n, num, valid
	last.Unlock()
	return num, valid
}

// classify is libphonenumber's Parse(n, ""), GetNumberType and
// GetRegionCodeForNumber, and the check that Format(E164) gives n back,
// for a string that voiceops.ValidE164 accepts: a plus and 2 to 15
// digits, the first not 0. For such a string the parse reduces to taking
// the calling code and refusing a number that the parse would rewrite by
// stripping a national prefix.
func classify(n string) (destination.Number, bool) {
	unknown := destination.Number{Type: destination.Unknown}
	if !voiceops.ValidE164(n) || len(n) <= 3 {
		// Two digits or fewer after the plus: the parse refuses them as
		// too short after the international prefix.
		return unknown, false
	}
	span, national := callingCode(n[1:])
	if span.n == 0 || len(national) < minNationalLength {
		return unknown, false
	}
	home := &regions[span.first]
	if parsedNationalNumber(national, home) != national {
		// The parse would take the start for a national prefix: the
		// number it keeps does not format back to n.
		return unknown, false
	}
	r := regionOf(national, regions[span.first:span.first+span.n])
	if r == nil {
		return unknown, false
	}
	pt := numberType(national, r)
	if pt == unknownType {
		return unknown, false
	}
	if r.id == nonGeographic {
		return destination.Number{Type: destination.InternationalNetwork}, true
	}
	return destination.Number{Country: r.id, Type: destinationTypes[pt]}, true
}

// minNationalLength is libphonenumber's MIN_LENGTH_FOR_NSN.
const minNationalLength = 2

// nonGeographic is libphonenumber's region of the calling codes of
// international networks and services (REGION_CODE_FOR_NON_GEO_ENTITY).
const nonGeographic = "001"

// callingCode splits digits into its calling code (the shortest prefix of
// one to three digits that has regions) and the national number.
func callingCode(digits string) (regionSpan, string) {
	code := 0
	for i := 0; i < 3 && i < len(digits); i++ {
		code = code*10 + int(digits[i]-'0')
		if s := callingCodes[code]; s.n > 0 {
			return s, digits[i+1:]
		}
	}
	return regionSpan{}, ""
}

// regionOf is libphonenumber's GetRegionCodeForNumber: the only region of
// the calling code, or the first whose leading digits start the number or,
// for a region without them, whose patterns give the number a type.
func regionOf(national string, candidates []region) *region {
	if len(candidates) == 1 {
		return &candidates[0]
	}
	for i := range candidates {
		r := &candidates[i]
		if r.leadingDigits != 0 {
			if compiled(r.leadingDigits).MatchString(national) {
				return r
			}
		} else if numberType(national, r) != unknownType {
			return r
		}
	}
	return nil
}

// numberType is libphonenumber's getNumberTypeHelper: the general pattern,
// then each type in the library's order, fixed line and mobile last.
func numberType(national string, r *region) numberTypeIndex {
	if !r.general.matches(national) {
		return unknownType
	}
	for t := premiumRate; t < fixedLine; t++ {
		if r.types[t].matches(national) {
			return t
		}
	}
	if r.types[fixedLine].matches(national) {
		if r.sameMobileAndFixedLine || r.types[mobile].matches(national) {
			return fixedLineOrMobile
		}
		return fixedLine
	}
	if !r.sameMobileAndFixedLine && r.types[mobile].matches(national) {
		return mobile
	}
	return unknownType
}

// matches is libphonenumber's isNumberMatchingDesc: a length the
// description allows (when it lists any), then its pattern in full.
func (d *desc) matches(national string) bool {
	if d.pattern == 0 {
		// The empty pattern, "^(?:)$", matches no number.
		return false
	}
	if len(d.lengths) > 0 && !hasLength(d.lengths, len(national)) {
		return false
	}
	return compiled(d.pattern).MatchString(national)
}

func hasLength(lengths []int8, n int) bool {
	for _, l := range lengths {
		if int(l) == n {
			return true
		}
	}
	return false
}

// parsedNationalNumber is the national number that libphonenumber's parse
// keeps of the digits after the calling code: national itself or, where
// it starts with a national prefix (or carrier code) of home, the calling
// code's main region, the rest or its transformation
// (maybeStripNationalPrefixAndCarrierCode, then testNumberLength).
func parsedNationalNumber(national string, home *region) string {
	if home.nationalPrefix == 0 {
		return national
	}
	prefix := compiled(home.nationalPrefix)
	groups := prefix.FindStringSubmatchIndex(national)
	if groups == nil {
		return national
	}
	general := compiled(home.general.pattern)
	viable := general.MatchString(national)
	lastGroup := len(groups)/2 - 1
	var rest string
	if home.nationalPrefixTransform == "" || groups[2*lastGroup] < 0 {
		rest = national[groups[1]:]
	} else {
		rest = prefix.ReplaceAllString(national, home.nationalPrefixTransform)
	}
	if viable && !general.MatchString(rest) || !keepsStripped(len(rest), &home.general) {
		return national
	}
	return rest
}

// keepsStripped is libphonenumber's testNumberLength of the stripped
// number against the general description, as parseHelper reads it: the
// parse keeps the stripped number when its length is possible or too
// long, not when it is too short, local only or of no listed length.
func keepsStripped(n int, general *desc) bool {
	lengths := general.lengths
	if len(lengths) == 0 || lengths[0] == -1 || hasLength(general.localOnly, n) {
		return false
	}
	switch {
	case n == int(lengths[0]):
		return true
	case n < int(lengths[0]):
		return false
	case n > int(lengths[len(lengths)-1]):
		return true
	}
	return hasLength(lengths[1:], n)
}

// compiled is patterns[i] compiled, once, on first use: a number needs the
// patterns of its calling code's regions, a handful of the thousands.
func compiled(i uint16) *regexp.Regexp {
	p := &compiledPatterns[i]
	p.once.Do(func() { p.re = regexp.MustCompile(patterns[i]) })
	return p.re
}

var compiledPatterns [len(patterns)]struct {
	once sync.Once
	re   *regexp.Regexp
}

// region is one region's metadata (or one international network's: id
// "001"), as far as validation and classification read it. Patterns are
// indexes into patterns; 0 is none.
type region struct {
	id                      string
	general                 desc
	types                   [fixedLineOrMobile]desc
	sameMobileAndFixedLine  bool
	leadingDigits           uint16
	nationalPrefix          uint16
	nationalPrefixTransform string
}

// desc is a PhoneNumberDesc: the pattern a number must match in full, and
// the lengths it may have (none listed: the general description's; -1:
// no number of this type exists).
type desc struct {
	pattern   uint16
	lengths   []int8
	localOnly []int8
}

// regionSpan is where a calling code's regions are in regions: the first,
// its main region, and how many.
type regionSpan struct {
	first, n uint16
}

// numberTypeIndex orders region.types as libphonenumber's
// getNumberTypeHelper tries them.
type numberTypeIndex uint8

const (
	premiumRate numberTypeIndex = iota
	tollFree
	sharedCost
	voip
	personalNumber
	pager
	uan
	voicemail
	fixedLine
	mobile
	fixedLineOrMobile
	unknownType
)

var destinationTypes = [...]destination.Type{
	premiumRate:       destination.PremiumRate,
	tollFree:          destination.TollFree,
	sharedCost:        destination.SharedCost,
	voip:              destination.VoIP,
	personalNumber:    destination.PersonalNumber,
	pager:             destination.Pager,
	uan:               destination.UAN,
	voicemail:         destination.Voicemail,
	fixedLine:         destination.FixedLine,
	mobile:            destination.Mobile,
	fixedLineOrMobile: destination.FixedLineOrMobile,
}
