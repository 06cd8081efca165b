package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/voiceops/opsapi/shared/platform/idempotency"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The request guards every keyed route goes through once its caller is
// authenticated (docs/api.md, "Rate limits and retries"): the rate limit of
// the caller's key, then, on create-like routes (Route.Create), the
// Idempotency-Key.

// RateLimiter takes one request from the bucket of an API key
// (ratelimit.Limiter).
type RateLimiter interface {
	Take(ctx context.Context, accountID, keyID string) (ratelimit.Decision, error)
}

var _ RateLimiter = (*ratelimit.Limiter)(nil)

// Guards are the request guards of a server.
type Guards struct {
	// Limiter, when set, limits the requests of every API key.
	Limiter RateLimiter
	// Idempotency, when set, keeps the Idempotency-Key records of the
	// create-like routes.
	Idempotency idempotency.Store
}

// GuardStore is a store of both guards (shared/store/dynamo.Requests,
// shared/store/memory.Requests).
type GuardStore interface {
	ratelimit.Store
	idempotency.Store
}

// NewGuards returns both guards over st, every key at ratelimit.Default
// unless its account has an override.
func NewGuards(st GuardStore, now func() time.Time) Guards {
	return Guards{Limiter: &ratelimit.Limiter{Store: st, Now: now}, Idempotency: st}
}

// limit applies the caller's rate limit and reports it in the RateLimit
// headers. Routes without a key (internal, public) are not limited here:
// the region ceiling (infra/api.go) bounds them. When the limiter's store
// fails the request goes on (logged): an outage of the limiter must not
// become an outage of the API.
func (s *server) limit(w http.ResponseWriter, r *http.Request, c Caller) error {
	if s.Limiter == nil || c.Key.KeyID == "" {
		return nil
	}
	d, err := s.Limiter.Take(r.Context(), c.AccountID, c.Key.KeyID)
	if err != nil {
		s.Log.ErrorContext(r.Context(), "rate limiter failed; request let through", "request_id", RequestID(r.Context()), "account_id", c.AccountID, "error", err)
		return nil
	}
	h := w.Header()
	h.Set("RateLimit-Policy", ratelimit.PolicyHeader(d.Limit))
	h.Set("RateLimit", ratelimit.StateHeader(d))
	if d.Allowed {
		return nil
	}
	wait := ratelimit.RetryAfterSeconds(d)
	h.Set("Retry-After", strconv.FormatInt(wait, 10))
	return voiceops.Errorf(voiceops.KindRateLimited,
		"rate limit exceeded: this API key may send %d requests a second, with bursts of %d; retry after %d s", d.Limit.Rate, d.Limit.Burst, wait)
}

var (
	errIdemKey = BadRequest(idempotency.Header, fmt.Sprintf("must be 1 to %d visible ASCII characters", idempotency.MaxKeyLength))
	errBusy    = voiceops.Errorf(voiceops.KindConflict,
		"a request with this Idempotency-Key is still in progress; retry after it has been answered")
	errAbandoned = voiceops.Errorf(voiceops.KindConflict,
		"the first request with this Idempotency-Key ended without an answer, so whether it took effect is unknown; check for the resource, then retry with a new key")
	errKeyReused = voiceops.Errorf(voiceops.KindKeyReused,
		"this Idempotency-Key was used in the last 24 hours with another request (method, path or body); use a new key for a new request")
)

// finishTimeout bounds the write of the response record, made with its own
// context: the request's may be done by then.
const finishTimeout = 5 * time.Second

// idempotent serves a create-like request that carries an Idempotency-Key:
// the first request with the key claims it, runs and records its answer;
// the same request again replays that answer; another request with the key
// is 422; a request while the first runs is 409.
func (s *server) idempotent(w http.ResponseWriter, r *http.Request, rt Route, c Caller, key string) error {
	if !idempotency.ValidKey(key) {
		return errIdemKey
	}
	body, err := readBody(w, r, MaxBodyBytes)
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return errTooLarge
		}
		return BadRequest("body", "cannot be read")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	sc := idempotency.Scope{AccountID: c.AccountID, KeyID: c.Key.KeyID, Key: key}
	out, rec, err := idempotency.Begin(r.Context(), s.Idempotency, sc, idempotency.Fingerprint(r.Method, r.URL.RequestURI(), body), s.Now())
	if err != nil {
		return err
	}
	switch out {
	case idempotency.Replay:
		s.Metrics.Record(telemetry.IdempotentReplays, 1, hostOf(r))
		h := w.Header()
		if rec.Response.ContentType != "" {
			h.Set("Content-Type", rec.Response.ContentType)
		}
		h.Set(idempotency.ReplayedHeader, "true")
		if rec.Response.RequestID != "" {
			h.Set("X-Request-Id", rec.Response.RequestID)
		}
		w.WriteHeader(rec.Response.Status)
		_, _ = w.Write(rec.Response.Body)
		return nil
	case idempotency.Busy:
		s.Metrics.Record(telemetry.IdempotencyConflicts, 1, hostOf(r))
		return errBusy
	case idempotency.Abandoned:
		s.Metrics.Record(telemetry.IdempotencyConflicts, 1, hostOf(r))
		return errAbandoned
	case idempotency.Mismatch:
		s.Metrics.Record(telemetry.IdempotencyConflicts, 1, hostOf(r))
		return errKeyReused
	}
	// Every answer from here on, error or not, is the key's first response.
	rw := &recorder{ResponseWriter: w}
	s.serve(rw, r, rt, c)
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), finishTimeout)
	defer cancel()
	resp := idempotency.Response{Status: rw.status, ContentType: rw.Header().Get("Content-Type"), Body: rw.body.Bytes(), RequestID: RequestID(r.Context())}
	if err := s.Idempotency.Finish(ctx, sc, rec.Token, resp); err != nil {
		// The answer is sent; the key stays in flight, so a replay is 409
		// and never runs the request again.
		s.Log.ErrorContext(ctx, "recording the Idempotency-Key's response failed", "request_id", RequestID(r.Context()), "account_id", c.AccountID, "error", err)
	}
	return nil
}

// recorder passes a response through while keeping its status and body.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}
