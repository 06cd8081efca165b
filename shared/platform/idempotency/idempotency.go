// Package idempotency is the Idempotency-Key of create-like requests
// (docs/api.md, "Rate limits and retries"): the record kept for each key, its
// states, and the store interface that shared/store/memory and shared/store/dynamo
// implement (contract: shared/store/storetest). The HTTP middleware that uses it
// is in shared/platform/httpapi.
//
// A record has two states. It is written in flight (with a random token)
// BEFORE the work starts, and becomes done, with the response, after it. A
// crash between the work and the record therefore leaves the record in
// flight, never absent: a replay of the key is answered 409 and never does
// the work again. A record that stays in flight past its lease is reported
// as such (the outcome of the first request is unknown: the client looks
// for the resource, then retries with a new key).
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// TTL is how long a key is remembered from its first request.
const TTL = 24 * time.Hour

// MaxKeyLength bounds the header's value.
const MaxKeyLength = 255

// Header is the request header that carries the key.
const Header = "Idempotency-Key"

// ReplayedHeader marks a response that replays the stored first one.
const ReplayedHeader = "Idempotent-Replayed"

// ErrNotClaimed is Finish's error when the record is no longer the claim of
// the token (it expired and another request claimed the key).
var ErrNotClaimed = voiceops.Errorf(voiceops.KindConflict, "the idempotency record is not this request's claim")

// Scope names one key: keys are scoped to the API key that sent them, so two
// API keys (or two tenants) never share a record.
type Scope struct {
	AccountID string
	KeyID     string // the API key's ID (voiceops.Principal.KeyID)
	Key       string // the Idempotency-Key header's value
}

// State is where a record stands.
type State string

const (
	InFlight State = "in_flight"
	Done     State = "done"
)

// Response is the first response to a key, replayed to the requests that
// repeat it.
type Response struct {
	Status      int
	ContentType string
	Body        []byte
	// RequestID is the first request's X-Request-Id: a replay answers
	// with it, so that it matches the request_id of a replayed error body
	// and the logs of the request that did the work.
	RequestID string
}

// Record is what is kept for one key.
type Record struct {
	Scope
	// Fingerprint identifies the request (method, path, query and body):
	// a request with another fingerprint under the same key is refused.
	Fingerprint string
	State       State
	// Token is the claim's random ID: only its holder can finish it.
	Token      string
	CreatedAt  time.Time
	LeaseUntil time.Time
	Response   Response // Done only
}

// Expired reports whether the key is forgotten at now.
func (r Record) Expired(now time.Time) bool { return !now.Before(r.CreatedAt.Add(TTL)) }

// Store keeps the records.
type Store interface {
	// Begin claims rec.Scope for rec (in flight) when no live record holds
	// it, returning (rec, true). Otherwise it returns the live record and
	// false, changing nothing. Atomic: of concurrent Begins of a scope,
	// exactly one claims it.
	Begin(ctx context.Context, rec Record, now time.Time) (Record, bool, error)
	// Finish makes the in-flight claim token of s done with resp; it is
	// ErrNotClaimed when s holds no such claim.
	Finish(ctx context.Context, s Scope, token string, resp Response) error
}

// ValidKey reports whether k can be a key: 1 to 255 visible ASCII
// characters (what UUIDs and the usual client libraries send).
func ValidKey(k string) bool {
	if k == "" || len(k) > MaxKeyLength {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// Fingerprint identifies a request by its method, path with query and body
// bytes. The body is compared as sent: a retry re-sends the same bytes.
// Method and path are length-prefixed, so no split of the same bytes
// between the three gives the same fingerprint (FuzzFingerprint).
func Fingerprint(method, requestURI string, body []byte) string {
	h := sha256.New()
	var n [8]byte
	for _, part := range []string{method, requestURI} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Outcome is what a request with a key does.
type Outcome int

const (
	// Proceed: the request claimed the key; it runs and then finishes.
	Proceed Outcome = iota
	// Replay: the key is done: answer its stored response.
	Replay
	// Busy: the first request with the key is still running (409).
	Busy
	// Abandoned: the first request's lease ran out without a response:
	// its outcome is unknown, and it is never run again (409).
	Abandoned
	// Mismatch: the key was used for another request (422).
	Mismatch
)

// Lease is how long a claim is expected to be held: more than the longest
// request deadline (httpapi.AgentDeadline) and API Gateway's 30 s.
const Lease = time.Minute

// Begin decides what a request with the key of s and fingerprint fp does,
// claiming the key when it is free.
func Begin(ctx context.Context, st Store, s Scope, fp string, now time.Time) (Outcome, Record, error) {
	claim := Record{Scope: s, Fingerprint: fp, State: InFlight, Token: voiceops.RandomBase62(22), CreatedAt: now, LeaseUntil: now.Add(Lease)}
	rec, claimed, err := st.Begin(ctx, claim, now)
	switch {
	case err != nil:
		return 0, Record{}, err
	case claimed:
		return Proceed, rec, nil
	case rec.Fingerprint != fp:
		return Mismatch, rec, nil
	case rec.State == Done:
		return Replay, rec, nil
	case now.Before(rec.LeaseUntil):
		return Busy, rec, nil
	}
	return Abandoned, rec, nil
}
