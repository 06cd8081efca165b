package phone

// MatchingDigits and PrefixStrings are matchingDigits and prefixStrings,
// for the external tests.
var (
	MatchingDigits = matchingDigits
	PrefixStrings  = prefixStrings
)
