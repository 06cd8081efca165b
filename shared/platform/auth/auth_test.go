package auth

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// countingKeys is a key table that counts its reads.
type countingKeys struct {
	mu    sync.Mutex
	keys  map[string]voiceops.Key
	reads int
	err   error
}

func (c *countingKeys) KeyByDigest(_ context.Context, digest string) (voiceops.Key, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	if c.err != nil {
		return voiceops.Key{}, c.err
	}
	k, ok := c.keys[digest]
	if !ok {
		return voiceops.Key{}, voiceops.ErrNotFound
	}
	return k, nil
}

func TestCacheAndRevocation(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	secret := keys.New(voiceops.KeyAPI, voiceops.RegionUS)
	store := &countingKeys{keys: map[string]voiceops.Key{
		keys.Digest(secret): {ID: "key_1", Kind: voiceops.KeyAPI, AccountID: "acct", ProjectID: "proj"},
	}}
	a := New(store, voiceops.RegionUS, clock)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		p, err := a.Authenticate(ctx, secret, voiceops.KeyAPI)
		if err != nil || p.AccountID != "acct" || p.ProjectID != "proj" || p.KeyID != "key_1" {
			t.Fatalf("Authenticate = %+v, %v", p, err)
		}
	}
	if store.reads != 1 {
		t.Errorf("%d reads for 5 warm requests, want 1", store.reads)
	}
	// Revocation is seen once the cached entry expires.
	revokedAt := now
	store.keys[keys.Digest(secret)] = voiceops.Key{ID: "key_1", Kind: voiceops.KeyAPI, AccountID: "acct", RevokedAt: &revokedAt}
	if _, err := a.Authenticate(ctx, secret, voiceops.KeyAPI); err != nil {
		t.Errorf("still cached: %v", err)
	}
	now = now.Add(CacheTTL)
	if _, err := a.Authenticate(ctx, secret, voiceops.KeyAPI); voiceops.KindOf(err) != voiceops.KindUnauthorized {
		t.Errorf("revoked key after the TTL: %v", err)
	}
}

func TestRefusalsWithoutReads(t *testing.T) {
	store := &countingKeys{keys: map[string]voiceops.Key{}}
	a := New(store, voiceops.RegionUS, time.Now)
	ctx := context.Background()
	for name, key := range map[string]string{
		"empty":        "",
		"garbage":      "not a key",
		"other region": keys.New(voiceops.KeyAPI, voiceops.RegionEU),
		"other kind":   keys.New(voiceops.KeyAgent, voiceops.RegionUS),
	} {
		if _, err := a.Authenticate(ctx, key, voiceops.KeyAPI); voiceops.KindOf(err) != voiceops.KindUnauthorized {
			t.Errorf("%s: %v", name, err)
		}
	}
	if store.reads != 0 {
		t.Errorf("%d reads for keys refusable by their shape", store.reads)
	}
	// Unknown but well-formed: one read, then cached briefly.
	k := keys.New(voiceops.KeyAPI, voiceops.RegionUS)
	for i := 0; i < 3; i++ {
		if _, err := a.Authenticate(ctx, k, voiceops.KeyAPI); voiceops.KindOf(err) != voiceops.KindUnauthorized {
			t.Errorf("unknown key: %v", err)
		}
	}
	if store.reads != 1 {
		t.Errorf("%d reads for a repeated unknown key, want 1", store.reads)
	}
}

func TestStoreFailureIsInternal(t *testing.T) {
	store := &countingKeys{err: errors.New("throttled")}
	a := New(store, voiceops.RegionUS, time.Now)
	_, err := a.Authenticate(context.Background(), keys.New(voiceops.KeyAPI, voiceops.RegionUS), voiceops.KeyAPI)
	if voiceops.KindOf(err) != voiceops.KindInternal {
		t.Errorf("store failure: %v (kind %v), want internal", err, voiceops.KindOf(err))
	}
	// A failure is not cached.
	store.err = nil
	_, _ = a.Authenticate(context.Background(), keys.New(voiceops.KeyAPI, voiceops.RegionUS), voiceops.KeyAPI)
	if store.reads != 2 {
		t.Errorf("reads = %d", store.reads)
	}
}

// TestRevocationWithinFiveSeconds: a revoked key is refused on
// every warm instance at most 5 s after the revocation is written, and
// within those 5 s a key costs no read per request: one read per key per
// 5 s per instance.
func TestRevocationWithinFiveSeconds(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	clock := func() time.Time { return now }
	secret := keys.New(voiceops.KeyAPI, voiceops.RegionUS)
	store := &countingKeys{keys: map[string]voiceops.Key{
		keys.Digest(secret): {ID: "key_1", Kind: voiceops.KeyAPI, AccountID: "acct"},
	}}
	a := New(store, voiceops.RegionUS, clock)
	ctx := context.Background()

	// A warm instance: 1000 requests spread over just under 5 s, one read.
	for i := range 1000 {
		now = start.Add(time.Duration(i) * 4999 * time.Microsecond)
		if _, err := a.Authenticate(ctx, secret, voiceops.KeyAPI); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if store.reads != 1 {
		t.Fatalf("%d reads for 1000 requests within 5 s, want 1", store.reads)
	}

	// Revoked right after the instance read it (the worst case): refused
	// once 5 s have passed since that read.
	revokedAt := start
	store.mu.Lock()
	store.keys[keys.Digest(secret)] = voiceops.Key{ID: "key_1", Kind: voiceops.KeyAPI, AccountID: "acct", RevokedAt: &revokedAt}
	store.mu.Unlock()
	now = start.Add(5 * time.Second)
	if _, err := a.Authenticate(ctx, secret, voiceops.KeyAPI); voiceops.KindOf(err) != voiceops.KindUnauthorized {
		t.Fatalf("revoked key 5 s after the last read: %v, want refused", err)
	}
	if store.reads != 2 {
		t.Errorf("%d reads, want 2 (one per 5 s)", store.reads)
	}
}
