package voiceops

import (
	"crypto/rand"
	"regexp"
)

// ID prefixes of doc 1 and of the operator's resources.
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
func NewID(prefix string) string {
	return prefix + RandomBase62(22)
}

// RandomBase62 returns n characters drawn uniformly from [0-9A-Za-z].
func RandomBase62(n int) string {
	out := make([]byte, n)
	buf := make([]byte, n+n/2)
	for i := 0; i < n; {
		_, _ = rand.Read(buf) // crypto/rand.Read never fails (Go 1.24+)
		for _, b := range buf {
			// 248 = 4*62: rejecting higher bytes keeps the draw uniform.
			if b < 248 && i < n {
				out[i] = idAlphabet[b%62]
				i++
			}
		}
	}
	return string(out)
}

var (
	ruleIDPattern     = regexp.MustCompile(`^ar_[A-Za-z0-9]+$`)
	endpointIDPattern = regexp.MustCompile(`^whe_[A-Za-z0-9]+$`)
	deliveryIDPattern = regexp.MustCompile(`^dlv_[A-Za-z0-9]+$`)
	// Operator-made IDs: the prefix and up to 64 URL-safe characters.
	accountIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// ValidRuleID reports whether id has the shape of doc 1's rule IDs.
func ValidRuleID(id string) bool { return ruleIDPattern.MatchString(id) }

// ValidEndpointID reports whether id has the shape of doc 1's endpoint IDs.
func ValidEndpointID(id string) bool { return endpointIDPattern.MatchString(id) }

// ValidDeliveryID reports whether id has the shape of a delivery ID.
func ValidDeliveryID(id string) bool { return deliveryIDPattern.MatchString(id) }

// MaxIDLength bounds every ID the stores hold; a well-formed longer ID
// cannot exist, so it is simply not found.
const MaxIDLength = 64

// ValidTenantID reports whether id can be an account or project ID.
func ValidTenantID(id string) bool { return accountIDPattern.MatchString(id) }
