// Package phone checks that phone numbers exist, with libphonenumber
// (github.com/nyaruka/phonenumbers). It is the only importer of that
// library, whose metadata costs megabytes and milliseconds at init: only a
// function that dials real numbers should link it. The syntax of a number
// is voiceops.ValidE164's.
package phone

import (
	"github.com/nyaruka/phonenumbers"

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
