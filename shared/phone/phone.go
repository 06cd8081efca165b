// Package phone checks that phone numbers exist, with libphonenumber
// (github.com/nyaruka/phonenumbers). It is the only importer of that
// library, whose metadata costs megabytes and milliseconds at init: only a
// function that dials real numbers should link it. The syntax of a number
// is voiceops.ValidE164's.
package phone

import (
	"github.com/nyaruka/phonenumbers"

	"github.com/voiceops/opsapi/shared/destination"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Valid reports whether n is a valid phone number written in E.164: the
// syntax (voiceops.ValidE164), then libphonenumber's parse and validity
// check (a number of a known country with an assigned length and prefix),
// and n is how libphonenumber writes it in E.164.
func Valid(n string) bool {
	if !voiceops.ValidE164(n) {
		return false
	}
	num, err := phonenumbers.Parse(n, "")
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return false
	}
	return phonenumbers.Format(num, phonenumbers.E164) == n
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

// Classify tells the country and type of a number that Valid accepts (for
// the destination policy). A number of libphonenumber's non-geographic
// region "001" (+800, +808, +870, +878, +881, +882, +883, +888, +979) has
// no country and is an international network, whatever its type.
func Classify(n string) destination.Number {
	num, err := phonenumbers.Parse(n, "")
	if err != nil {
		return destination.Number{Type: destination.Unknown}
	}
	region := phonenumbers.GetRegionCodeForNumber(num)
	if region == phonenumbers.REGION_CODE_FOR_NON_GEO_ENTITY {
		return destination.Number{Type: destination.InternationalNetwork}
	}
	t := destination.Unknown
	if i := phonenumbers.GetNumberType(num); int(i) < len(types) && types[i] != "" {
		t = types[i]
	}
	return destination.Number{Country: region, Type: t}
}

// ValidCountry reports whether code is the ISO 3166-1 alpha-2 code (in
// capitals) of a region with a numbering plan: libphonenumber's regions,
// which are the ISO codes of every country with its own numbering plan plus
// AC (Ascension), TA (Tristan da Cunha) and XK (Kosovo), which have their
// own. Codes of places without one (AQ, BV, HM, ...) are not among them.
func ValidCountry(code string) bool {
	return len(code) == 2 && phonenumbers.GetSupportedRegions()[code]
}
