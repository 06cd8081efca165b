package phone

// MatchingDigits is matchingDigits, for the external tests.
var MatchingDigits = matchingDigits
