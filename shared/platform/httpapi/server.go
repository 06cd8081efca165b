package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/platform/idempotency"
	"github.com/voiceops/opsapi/shared/platform/logctx"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Authenticator finds the principal of a key of a kind (shared/platform/auth).
type Authenticator interface {
	Authenticate(ctx context.Context, key string, kind voiceops.KeyKind) (voiceops.Principal, error)
}

// ProjectReader reads a project: an account-scoped key's request for a
// project must name one that exists.
type ProjectReader interface {
	GetProject(ctx context.Context, accountID, projectID string) (voiceops.Project, error)
}

// FixedDigest is a Config.InternalKey for a digest known at start.
func FixedDigest(digest string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return digest, nil }
}

// Config is what the middleware needs. Only Keys is required by routes
// with a key scheme; Projects by ProjectKey and ChatKeys routes;
// InternalKey by InternalKey routes (nil: every such request is 401).
type Config struct {
	Keys     Authenticator
	Projects ProjectReader
	// InternalKey returns the hex SHA-256 of the internal key: FixedDigest,
	// or internalkey.Lazy's Digest, which reads it on the first internal
	// request (public requests never wait for Secrets Manager). An error
	// answers 500.
	InternalKey func(ctx context.Context) (digest string, err error)
	Now         func() time.Time
	Log         *slog.Logger
	// AccessLog writes the access lines (access.go); Log when nil. A
	// Lambda function's holds them for its metrics' flush (emf.Batch's
	// Held), so that an invocation's access line and metric lines leave
	// in one write.
	AccessLog *slog.Logger
	// CountError, when set, records one api_errors event for the account
	// (and project) of an authenticated request answered 5xx (docs/api.md, "Metric intake": the functions record their own). A failure is
	// logged and never changes the answer.
	CountError func(ctx context.Context, accountID, projectID string, at time.Time) error
	// Deadline bounds each request's work (its context), well under API
	// Gateway's 30 s: DefaultDeadline when zero. Within a Lambda
	// invocation it is also cut to leave ResponseMargin before the
	// invocation's end (deadline.go); infra derives each function's
	// timeout from it (FunctionTimeout).
	Deadline time.Duration
	// Background runs work that must not hold the answer (recording
	// api_errors). Default: a goroutine; tests run it inline.
	Background func(func())
	// Guards are the rate limit and the Idempotency-Key (guards.go); each
	// is off when nil.
	Guards
	// Metrics receives the requests' metrics (access.go); none when nil.
	Metrics telemetry.Recorder
	// NoRouteFamily, when set, tells the error shape of a request that
	// matched no route (404, 405): StageFamily, where one function answers
	// a whole host's unknown paths. Default: by the path (the studio host's
	// prefixes), as on the dev server, which serves both hosts.
	NoRouteFamily func(r *http.Request) Family
}

// DefaultDeadline is the request deadline of most routes. Routes that wait
// for a project's agent and functions (each at most 10 s) use a longer one.
const DefaultDeadline = 10 * time.Second

// AgentDeadline is the deadline of the routes that run a conversation turn:
// the agent and the project's functions may each take 10 s, and API
// Gateway gives up at 30 s.
const AgentDeadline = 25 * time.Second

type server struct {
	Config
	projects projectCache
	// families are the families of the routes served: a host (a function)
	// serving one family answers every request in its error shape,
	// unknown routes and "/" included; the dev server serves both and
	// tells them apart by path.
	families map[Family]bool
}

// New serves the routes of the given groups behind the middleware every
// request goes through: request ID, panic recovery, JSON 404/405, and the
// authentication scheme of each route.
func New(cfg Config, groups ...[]Route) http.Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	// Every line about a request names it (access.go).
	cfg.Log = withRequestIDs(cfg.Log)
	if cfg.AccessLog == nil {
		cfg.AccessLog = cfg.Log
	}
	cfg.AccessLog = withRequestIDs(cfg.AccessLog)
	if cfg.Deadline <= 0 {
		cfg.Deadline = DefaultDeadline
	}
	if cfg.Background == nil {
		cfg.Background = func(f func()) { go f() }
	}
	cfg.Metrics = telemetry.Or(cfg.Metrics)
	s := &server{Config: cfg, families: map[Family]bool{}}
	// mux matches a request once: what no route takes reaches its "/",
	// which asks routes (the same routes, without it) whether the path
	// has other methods (405) or none (404).
	mux, routes := http.NewServeMux(), http.NewServeMux()
	for _, g := range groups {
		for _, rt := range g {
			h := s.route(rt)
			mux.Handle(rt.Pattern(), h)
			routes.Handle(rt.Pattern(), h)
			s.families[rt.Family] = true
		}
	}
	mux.Handle("/", s.miss(routes))
	return s.withRequestID(s.recoverPanics(s.jsonFallback(mux)))
}

// withRequestIDs makes log add the request's IDs from the context to each
// line (logctx), if it does not already.
func withRequestIDs(log *slog.Logger) *slog.Logger {
	if _, ok := log.Handler().(*logctx.Handler); ok {
		return log
	}
	return slog.New(logctx.New(log.Handler()))
}

// route authenticates a request by the route's scheme, applies the request
// guards (guards.go), runs the handler and answers its error in the route's
// family.
func (s *server) route(rt Route) http.Handler {
	pattern := rt.Pattern()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.Deadline > 0 {
			ctx, cancel := context.WithTimeout(r.Context(), rt.Deadline)
			defer cancel()
			r = r.WithContext(ctx)
		}
		noteRoute(r.Context(), pattern)
		c, err := s.authenticate(r, rt.Auth)
		noteCaller(r.Context(), c)
		// Every request made with a valid key takes a token, also one
		// refused for its target (403, 404): another tenant's paths are no
		// way around the key's limit.
		if lerr := s.limit(w, r, c); lerr != nil {
			err = lerr
		}
		if err == nil {
			// A header sent empty is a malformed key (400), not no key.
			if keys := r.Header.Values(idempotency.Header); rt.Create && s.Idempotency != nil && len(keys) > 0 {
				err = s.idempotent(w, r, rt, c, keys[0])
			} else {
				s.serve(w, r, rt, c)
				return
			}
		}
		if err != nil {
			s.fail(w, r, rt, c, err)
		}
	})
}

// serve runs the handler of an authenticated request and answers its error.
func (s *server) serve(w http.ResponseWriter, r *http.Request, rt Route, c Caller) {
	defer s.countPanic(r, c)
	if err := rt.Handle(w, r, c); err != nil {
		s.fail(w, r, rt, c, err)
	}
}

// fail answers err in the route's family, counting a 5xx as an API error.
func (s *server) fail(w http.ResponseWriter, r *http.Request, rt Route, c Caller, err error) {
	WriteError(w, r, s.Log, rt.Family, err)
	if StatusOf(voiceops.KindOf(err), rt.Family) >= http.StatusInternalServerError {
		s.countError(r, c)
	}
}

// countPanic, deferred, counts a handler's panic (recoverPanics answers it
// with 500) as an API error, then lets the panic go on.
func (s *server) countPanic(r *http.Request, c Caller) {
	if v := recover(); v != nil {
		if v != http.ErrAbortHandler {
			s.countError(r, c)
		}
		panic(v)
	}
}

// countError records the api_errors event of a 5xx in the background: the
// answer never waits for it (with the store down, it would wait for the
// metrics table too). In a Lambda function the invocation returns its
// answer once the write is done (LambdaHandler: a frozen environment would
// lose it), within ResponseMargin; it is best effort, like every metric of
// an error.
func (s *server) countError(r *http.Request, c Caller) {
	if s.CountError == nil || c.AccountID == "" {
		return
	}
	rid, at := RequestID(r.Context()), s.Now()
	background(r.Context(), s.Background, func() {
		ctx, cancel := context.WithTimeout(context.Background(), countErrorTimeout)
		defer cancel()
		if err := s.CountError(ctx, c.AccountID, c.ProjectID, at); err != nil {
			s.Log.ErrorContext(ctx, "recording api_errors failed", "request_id", rid, "account_id", c.AccountID, "error", err)
		}
	})
}

// NoSniff tells browsers to take every answer as its Content-Type says:
// a JSON error that quotes a request's text is never run as a page.
func NoSniff(h http.Header) { h["X-Content-Type-Options"] = nosniff }

// nosniff is the header's one value, shared by every answer (not a slice
// per request): full, so that an Add copies it.
var nosniff = []string{"nosniff"}

// withRequestID gives every request an ID, in the X-Request-Id header of the
// response and in every log line about it, and its deadline (one request
// copy for both).
func (s *server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := voiceops.RandomID("req_", 20)
		deadline := s.Deadline
		if _, ok := r.Context().Deadline(); ok {
			// A Lambda invocation's: the request's is cut to leave the margin
			// (no clock read for a request without one, as on the dev server).
			deadline = requestDeadline(r.Context(), s.Deadline, s.Now())
		}
		// The duration is measured on the monotonic clock, not Config.Now: a
		// test's fake clock would make every request take no time. The
		// deadline counts from the same instant (one clock read, not two).
		start := time.Now()
		a := s.begin(r.Context(), id, start, start.Add(deadline), w)
		h := w.Header()
		a.idHeader[0] = id
		h["X-Request-Id"] = a.idHeader[:] // full: an Add copies it
		NoSniff(h)
		defer a.cancel()
		next.ServeHTTP(&a.w, r.WithContext(a))
		s.end(a, r, a, a.w.status)
	})
}

// recoverPanics turns a panic into a logged 500 instead of a dropped
// connection.
func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.Log.ErrorContext(r.Context(), "panic", "request_id", RequestID(r.Context()), "panic", v)
				WriteError(w, r, s.Log, s.familyOf(r), voiceops.Errorf(voiceops.KindInternal, "internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// jsonFallback answers a path that is not clean with 404 before the mux
// sees it.
func (s *server) jsonFallback(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !canonical(r.URL.Path) && !canonicalDir(r.URL.Path) {
			// The mux would redirect to the cleaned path (a 307 to another
			// route, in text/html): a path is taken as written or not at all.
			s.noRoute(w, r, http.StatusNotFound)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// miss answers requests that match no route (404) or no method of a route
// (405) with a JSON body instead of the mux's plain text.
func (s *server) miss(routes *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, _ := routes.Handler(r)
		rec := &statusRecorder{header: http.Header{}}
		h.ServeHTTP(rec, r)
		if allow := rec.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		s.noRoute(w, r, rec.status)
	})
}

// noRoute answers a request that matches no route (404) or no method of a
// route (405) in the family of its path.
func (s *server) noRoute(w http.ResponseWriter, r *http.Request, status int) {
	// The path as sent on the wire, percent-encoded: it quotes no markup
	// or quote character back (r.URL.Path is decoded).
	p := r.URL.EscapedPath()
	msg := "no such route: " + r.Method + " " + p
	if status == http.StatusMethodNotAllowed {
		msg = "method " + r.Method + " is not allowed on " + p
	} else {
		status = http.StatusNotFound
	}
	family := s.familyOf
	if s.NoRouteFamily != nil {
		family = s.NoRouteFamily
	}
	if family(r) == BaseErrors {
		WriteJSON(w, status, BaseErrorBody{ErrorMessage: msg, RequestID: RequestID(r.Context())})
		return
	}
	WriteJSON(w, status, StudioErrorBody{Message: msg, RequestID: RequestID(r.Context())})
}

// canonical reports whether p is a clean absolute path: no empty, "." or
// ".." segment and no trailing slash (but "/" itself).
func canonical(p string) bool {
	return p != "" && p[0] == '/' && path.Clean(p) == p
}

// canonicalDir reports whether p is a canonical path with one trailing
// slash: a directory, which only a "/dir/{rest...}" route takes (the
// console's /console/); any other route answers it 404 as before.
func canonicalDir(p string) bool {
	return len(p) > 1 && strings.HasSuffix(p, "/") && canonical(strings.TrimSuffix(p, "/"))
}

type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(status int)      { r.status = status }

// familyOf is the family whose error shape answers a request that reached
// no route: the host's, when it serves one family, else the path's.
func (s *server) familyOf(r *http.Request) Family {
	if len(s.families) == 1 {
		for f := range s.families {
			return f
		}
	}
	return familyOf(r)
}
