// Package phone checks phone numbers with libphonenumber
// (nyaruka/phonenumbers). It is the only importer of that library, whose
// metadata costs about 15 ms of package init and 8 MB of binary: only the
// function that triggers outbound calls links it.
package phone

import (
	"github.com/nyaruka/phonenumbers"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Valid reports whether n is a valid phone number written in E.164 (with
// its '+'): the shape (voiceops.ValidE164), then libphonenumber's parse and
// validity check (a number of a known country with an assigned length and
// prefix), written back exactly as given.
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
