// Package phone checks that phone numbers exist, with libphonenumber
// (github.com/nyaruka/phonenumbers). It is the only importer of that
// library, whose metadata costs megabytes and milliseconds at init: only a
// function that dials real numbers should link it. The syntax of a number
// is voiceops.ValidE164's.
package phone

import (
	"sync"

	"github.com/nyaruka/phonenumbers"

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

// last is the number last looked up: the trigger asks Valid, then the
// destination policy Classify, of the same number, and libphonenumber's
// parse and pattern matching are most of a trigger's time, so they run
// once. A memo of one entry, exact by its key: a Lambda function serves
// one request at a time.
var last struct {
	sync.Mutex
	n     string
	num   destination.Number
	valid bool
}

// lookup parses n once and tells both its validity and its classification.
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

func classify(n string) (destination.Number, bool) {
	unknown := destination.Number{Type: destination.Unknown}
	if !voiceops.ValidE164(n) {
		return unknown, false
	}
	num, err := phonenumbers.Parse(n, "")
	if err != nil {
		return unknown, false
	}
	// IsValidNumber is GetNumberType's pattern matching != UNKNOWN, for the
	// region of the number's own country code: one matching tells both.
	pt := phonenumbers.GetNumberType(num)
	if pt == phonenumbers.UNKNOWN || phonenumbers.Format(num, phonenumbers.E164) != n {
		return unknown, false
	}
	region := phonenumbers.GetRegionCodeForNumber(num)
	if region == phonenumbers.REGION_CODE_FOR_NON_GEO_ENTITY {
		return destination.Number{Type: destination.InternationalNetwork}, true
	}
	t := destination.Unknown
	if int(pt) < len(types) && types[pt] != "" {
		t = types[pt]
	}
	return destination.Number{Country: region, Type: t}, true
}

// types maps libphonenumber's number types onto the destination policy's
// (an array: static data, no map built at start).
var types = [...]destination.Type{
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
}

// ValidCountry reports whether code is the ISO 3166-1 alpha-2 code (in
// capitals) of a region with a numbering plan: libphonenumber's regions,
// which are the ISO codes of every country with its own numbering plan plus
// AC (Ascension), TA (Tristan da Cunha) and XK (Kosovo), which have their
// own. Codes of places without one (AQ, BV, HM, ...) are not among them.
func ValidCountry(code string) bool {
	return len(code) == 2 && phonenumbers.GetSupportedRegions()[code]
}
