// Package auth turns a presented key into a Principal. Lookups are cached
// briefly in the process, so a warm Lambda answers most requests without
// reading the key table; a revoked key stops working within CacheTTL.
//
// CacheTTL bounds revocation: the key table is read with strong
// consistency, and a cached lookup is trusted for CacheTTL from the moment
// its read began, so every warm instance refuses a revoked key at most
// CacheTTL after the revocation is written. The price is one GetItem (half
// a read unit) per key per CacheTTL per warm instance, whatever the request
// rate: at 5 s, at most 12 reads a minute for a key an instance keeps
// seeing. A revocation marker polled by each instance would cost about the
// same reads (one per instance per interval) and a second write path, so
// the short TTL is the simpler bound.
package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// CacheTTL is how long a looked-up key (found or not) is trusted without
// reading it again: the longest a revoked key keeps working on a warm
// instance.
const CacheTTL = 5 * time.Second

// maxCached bounds the cache; past it the cache is simply emptied, which is
// cheap and keeps a flood of distinct valid keys from growing memory.
const maxCached = 10000

// KeyReader is the part of the account store auth needs.
type KeyReader interface {
	KeyByDigest(ctx context.Context, digest string) (voiceops.Key, error)
}

// Authenticator checks keys of one region.
type Authenticator struct {
	keys   KeyReader
	region voiceops.Region
	now    func() time.Time

	mu    sync.RWMutex
	cache map[[sha256.Size]byte]cached
}

type cached struct {
	key     voiceops.Key
	found   bool
	expires time.Time
}

// New returns an Authenticator for keys of region.
func New(kr KeyReader, region voiceops.Region, now func() time.Time) *Authenticator {
	return &Authenticator{keys: kr, region: region, now: now, cache: map[[sha256.Size]byte]cached{}}
}

var errUnauthorized = &voiceops.Error{Kind: voiceops.KindUnauthorized, Message: "missing or invalid API key"}

// Unauthorized returns the error of a refused key, naming the header.
func Unauthorized(header string) *voiceops.Error {
	return &voiceops.Error{Kind: voiceops.KindUnauthorized, Message: "missing or invalid " + header}
}

// Authenticate returns the principal of key if it is a valid, unrevoked key
// of the wanted kind and of this region. Every refusal is KindUnauthorized
// except store failures, which are internal.
func (a *Authenticator) Authenticate(ctx context.Context, key string, kind voiceops.KeyKind) (voiceops.Principal, error) {
	if key == "" {
		return voiceops.Principal{}, errUnauthorized
	}
	p, err := keys.Parse(key)
	if err != nil || p.Kind != kind || p.Region != a.region {
		return voiceops.Principal{}, errUnauthorized
	}
	var kb [128]byte // the key's bytes on the stack, not the heap (keys are about 50)
	k, found, err := a.lookup(ctx, sha256.Sum256(append(kb[:0], key...)))
	if err != nil {
		return voiceops.Principal{}, err
	}
	if !found || k.Kind != kind || k.RevokedAt != nil {
		return voiceops.Principal{}, errUnauthorized
	}
	return voiceops.Principal{KeyID: k.ID, Kind: k.Kind, AccountID: k.AccountID, ProjectID: k.ProjectID, Environment: k.Environment}, nil
}

// lookup finds a key by its SHA-256 sum, from the cache when it is fresh
// (the hex digest the store keys by is made only on a miss).
func (a *Authenticator) lookup(ctx context.Context, sum [sha256.Size]byte) (voiceops.Key, bool, error) {
	now := a.now()
	a.mu.RLock()
	c, ok := a.cache[sum]
	a.mu.RUnlock()
	if ok && now.Before(c.expires) {
		return c.key, c.found, nil
	}
	k, err := a.keys.KeyByDigest(ctx, hex.EncodeToString(sum[:]))
	found := err == nil
	if err != nil && !errors.Is(err, voiceops.ErrNotFound) {
		return voiceops.Key{}, false, voiceops.Internal(err)
	}
	// Unknown well-formed keys are cached too, so a client retrying with a
	// wrong key does not hit the table. The TTL counts from before the
	// read, so a revocation written while it ran is seen within CacheTTL.
	a.mu.Lock()
	if len(a.cache) >= maxCached {
		a.cache = map[[sha256.Size]byte]cached{}
	}
	a.cache[sum] = cached{key: k, found: found, expires: now.Add(CacheTTL)}
	a.mu.Unlock()
	return k, found, nil
}
