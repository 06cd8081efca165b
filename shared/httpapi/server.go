package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Authenticator finds the principal of a key of a kind (shared/auth).
type Authenticator interface {
	Authenticate(ctx context.Context, key string, kind voiceops.KeyKind) (voiceops.Principal, error)
}

// ProjectReader reads a project: an account-scoped key's request for a
// project must name one that exists.
type ProjectReader interface {
	GetProject(ctx context.Context, accountID, projectID string) (voiceops.Project, error)
}

// Config is what the middleware needs. Only Keys is required by routes
// with a key scheme; Projects by ProjectKey and ChatKeys routes;
// InternalKeyDigest by InternalKey routes (empty: every such request is 401).
type Config struct {
	Keys              Authenticator
	Projects          ProjectReader
	InternalKeyDigest string // hex SHA-256 of the internal key
	Now               func() time.Time
	Log               *slog.Logger
	// CountError, when set, records one api_errors event for the account
	// (and project) of an authenticated request answered 5xx (DECISIONS.md,
	// "Metric events": the functions record their own). A failure is
	// logged and never changes the answer.
	CountError func(ctx context.Context, accountID, projectID string, at time.Time) error
}

type server struct {
	Config
	projects projectCache
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
	s := &server{Config: cfg}
	mux := http.NewServeMux()
	for _, g := range groups {
		for _, rt := range g {
			mux.Handle(rt.Pattern(), s.route(rt))
		}
	}
	return s.withRequestID(s.recoverPanics(s.jsonFallback(mux)))
}

// route authenticates a request by the route's scheme, runs the handler and
// answers its error in the route's family.
func (s *server) route(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := s.authenticate(r, rt.Auth)
		if err == nil {
			defer s.countPanic(r, c)
			err = rt.Handle(w, r, c)
		}
		if err != nil {
			WriteError(w, r, s.Log, rt.Family, err)
			if StatusOf(voiceops.KindOf(err), rt.Family) >= http.StatusInternalServerError {
				s.countError(r, c)
			}
		}
	})
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

func (s *server) countError(r *http.Request, c Caller) {
	if s.CountError == nil || c.AccountID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 2*time.Second)
	defer cancel()
	if err := s.CountError(ctx, c.AccountID, c.ProjectID, s.Now()); err != nil {
		s.Log.ErrorContext(ctx, "recording api_errors failed", "request_id", RequestID(r.Context()), "account_id", c.AccountID, "error", err)
	}
}

type ctxKey int

const requestIDKey ctxKey = iota

// RequestID is the ID of the request being served (X-Request-Id).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// withRequestID gives every request an ID, in the X-Request-Id header of the
// response and in every log line about it.
func (s *server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := "req_" + voiceops.RandomBase62(20)
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey, id)))
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
				WriteError(w, r, s.Log, familyOf(r), voiceops.Errorf(voiceops.KindInternal, "internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// jsonFallback answers requests that match no route (404) or no method of a
// route (405) with a JSON body instead of the mux's plain text.
func (s *server) jsonFallback(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{header: http.Header{}}
		h.ServeHTTP(rec, r)
		if allow := rec.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		msg := "no such route: " + r.Method + " " + r.URL.Path
		status := rec.status
		if status == http.StatusMethodNotAllowed {
			msg = "method " + r.Method + " is not allowed on " + r.URL.Path
		} else {
			status = http.StatusNotFound
		}
		if familyOf(r) == Doc2 {
			WriteJSON(w, status, Doc2Error{ErrorMessage: msg, RequestID: RequestID(r.Context())})
			return
		}
		WriteJSON(w, status, Doc1Error{Message: msg, RequestID: RequestID(r.Context())})
	})
}

type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(status int)      { r.status = status }
