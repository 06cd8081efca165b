// Package keys makes and checks the service's secret keys.
//
// A key reads "vo_<kind>_<region>_<body>", where body is 40 random base62
// characters followed by a 6-character base62 CRC-32 of everything before it.
// The kind and region are readable, so a key used in the wrong place is
// refused without a database read, and so is a mistyped one (the checksum).
// Only the SHA-256 digest of a key is ever stored.
package keys

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"strings"

	"github.com/voiceops/opsapi/shared/voiceops"
)

const (
	brand       = "vo"
	randomLen   = 40 // about 238 bits
	checksumLen = 6
	// PrefixShown is how many characters after the kind and region a listing
	// shows: enough to tell keys apart, far too few to use.
	PrefixShown = 8
)

// KindInternal is the kind of the internal key of the metric intake; it is
// not an account's key and is never stored in the key table.
const KindInternal voiceops.KeyKind = "internal"

// Errors of Parse. They are all "unauthorized" to callers.
var (
	ErrMalformed = errors.New("malformed key")
	ErrChecksum  = errors.New("key checksum mismatch")
)

// Parsed is a syntactically valid key.
type Parsed struct {
	Kind   voiceops.KeyKind
	Region voiceops.Region
}

// New returns a fresh key of the given kind and region.
func New(kind voiceops.KeyKind, region voiceops.Region) string {
	head := brand + "_" + string(kind) + "_" + string(region) + "_" + voiceops.RandomBase62(randomLen)
	return head + checksum(head)
}

// Parse checks the shape and checksum of a key.
func Parse(key string) (Parsed, error) {
	// strings.Cut, not Split: every authenticated request parses its key,
	// and this allocates nothing.
	b, rest, ok1 := strings.Cut(key, "_")
	kind, rest, ok2 := strings.Cut(rest, "_")
	region, random, ok3 := strings.Cut(rest, "_")
	if !ok1 || !ok2 || !ok3 || b != brand || len(random) != randomLen+checksumLen {
		return Parsed{}, ErrMalformed
	}
	head := key[:len(key)-checksumLen]
	if sum := checksumOf(head); string(sum[:]) != key[len(key)-checksumLen:] {
		return Parsed{}, ErrChecksum
	}
	return Parsed{Kind: voiceops.KeyKind(kind), Region: voiceops.Region(region)}, nil
}

// Digest returns the hex SHA-256 of a key: the only form that is stored.
func Digest(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Prefix returns the part of a key that listings show.
func Prefix(key string) string {
	i := strings.LastIndexByte(key, '_')
	if i < 0 || len(key) < i+1+PrefixShown {
		return key
	}
	return key[:i+1+PrefixShown]
}

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func checksum(s string) string {
	sum := checksumOf(s)
	return string(sum[:])
}

func checksumOf(s string) [checksumLen]byte {
	// The CRC-32 (IEEE) of s, byte by byte from the table: ChecksumIEEE
	// would take s as a []byte copied to the heap on every request.
	v := ^uint32(0)
	for i := 0; i < len(s); i++ {
		v = crc32.IEEETable[byte(v)^s[i]] ^ (v >> 8)
	}
	v = ^v
	var out [checksumLen]byte
	for i := checksumLen - 1; i >= 0; i-- {
		out[i] = alphabet[v%62]
		v /= 62
	}
	return out
}
