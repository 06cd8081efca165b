package voiceops

import (
	"crypto/rand"
	"strings"
	"sync"
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
	var outArr [64]byte // on the stack for the usual IDs
	out := outArr[:0]
	if len(prefix)+n <= len(outArr) {
		out = outArr[:len(prefix)+n]
	} else {
		out = make([]byte, len(prefix)+n)
	}
	copy(out, prefix)
	r := randPool.Get().(*randBuf)
	for i := len(prefix); i < len(out); {
		// 248 = 4*62: rejecting higher bytes keeps the draw uniform.
		if b := r.next(); b < 248 {
			out[i] = idAlphabet[b%62]
			i++
		}
	}
	randPool.Put(r)
	return string(out)
}

// randChunk is the bytes read from crypto/rand at once into a randBuf:
// about 20 IDs, where each ID made its own getrandom call (a system call,
// about a tenth of a rule create's own work).
const randChunk = 512

// randBuf holds crypto/rand's output not yet used: each byte goes to one
// ID, and is zeroed once taken, so no two IDs share randomness and the
// buffer never holds a byte of an ID already made.
type randBuf struct {
	b    [randChunk]byte
	used int
}

var randPool = sync.Pool{New: func() any { return &randBuf{used: randChunk} }}

func (r *randBuf) next() byte {
	if r.used == len(r.b) {
		_, _ = rand.Read(r.b[:]) // crypto/rand.Read never fails (Go 1.24+)
		r.used = 0
	}
	b := r.b[r.used]
	r.b[r.used] = 0
	r.used++
	return b
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
