package voiceops

import (
	"crypto/rand"
	"strings"
)

// ID prefixes of the studio host and of the operator's resources.
const (
	PrefixRule     = "ar_"
	PrefixEndpoint = "whe_"
	PrefixAccount  = "acct_"
	PrefixProject  = "proj_"
	PrefixKey      = "key_"
	PrefixEvent    = "evt_"
	PrefixDelivery = "dlv_"
)

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewID returns prefix followed by 22 random base62 characters (about 131 bits).
func NewID(prefix string) string { return RandomID(prefix, 22) }

// RandomBase62 returns n characters drawn uniformly from [0-9A-Za-z].
func RandomBase62(n int) string { return RandomID("", n) }

// RandomID returns prefix followed by n characters drawn uniformly from
// [0-9A-Za-z], made in one allocation.
func RandomID(prefix string, n int) string {
	var outArr, bufArr [64]byte // on the stack for the usual IDs (≤ 40)
	out, buf := outArr[:0], bufArr[:0]
	if len(prefix)+n <= len(outArr) && n <= 40 {
		out, buf = outArr[:len(prefix)+n], bufArr[:n+n/2]
	} else {
		out, buf = make([]byte, len(prefix)+n), make([]byte, n+n/2)
	}
	copy(out, prefix)
	for i := len(prefix); i < len(out); {
		_, _ = rand.Read(buf) // crypto/rand.Read never fails (Go 1.24+)
		for _, b := range buf {
			// 248 = 4*62: rejecting higher bytes keeps the draw uniform.
			if b < 248 && i < len(out) {
				out[i] = idAlphabet[b%62]
				i++
			}
		}
	}
	return string(out)
}

// ValidRuleID reports whether id has the shape of the studio host's rule IDs: "ar_"
// and one or more ASCII letters or digits.
func ValidRuleID(id string) bool { return prefixedAlnum(id, PrefixRule) }

// ValidEndpointID reports whether id has the shape of the studio host's endpoint IDs:
// "whe_" and one or more ASCII letters or digits.
func ValidEndpointID(id string) bool { return prefixedAlnum(id, PrefixEndpoint) }

// ValidDeliveryID reports whether id has the shape of a delivery ID: "dlv_"
// and one or more ASCII letters or digits.
func ValidDeliveryID(id string) bool { return prefixedAlnum(id, PrefixDelivery) }

// MaxIDLength bounds every ID the stores hold; a well-formed longer ID
// cannot exist, so it is simply not found.
const MaxIDLength = 64

// ValidTenantID reports whether id can be an account or project ID: 1 to
// 64 ASCII letters, digits, '_' or '-' (operator-made IDs are URL-safe).
func ValidTenantID(id string) bool {
	return len(id) >= 1 && len(id) <= MaxIDLength && every(id, func(c byte) bool { return isAlnum(c) || c == '_' || c == '-' })
}

// The shapes of IDs are checked with plain loops rather than regular
// expressions: compiling those at package init cost more than every check
// a cold start makes (shapes_test.go keeps the expressions as the spec).

func prefixedAlnum(s, prefix string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	return ok && rest != "" && every(rest, isAlnum)
}

// every reports whether ok holds for every byte of s (true for "").
func every(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// ValidSilenceID reports whether id has the shape of a silence ID.
func ValidSilenceID(id string) bool { return prefixedAlnum(id, PrefixSilence) }
