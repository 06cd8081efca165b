// Package api is the HTTP transport of the service: one file per endpoint
// group, each with a routes function listing every route of the group. The
// handlers are plain net/http; lambda.go adapts any of them to API Gateway.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/voiceops/opsapi/shared/auth"
	"github.com/voiceops/opsapi/shared/conversation"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Deps is what the handlers need. Time is injected for tests.
type Deps struct {
	Stores    voiceops.Stores
	Auth      *auth.Authenticator
	Now       func() time.Time
	Log       *slog.Logger
	URLPolicy voiceops.URLPolicy
	// Metrics records the product's own api_errors (a doc-1 request of an
	// authenticated account answered 5xx) and the events of the metric
	// intake. Nil: nothing is recorded, and the intake answers 500.
	Metrics *metrics.Recorder
	// InternalKeyDigest is the hex SHA-256 of the internal key that
	// POST /internal/v1/metric-events requires in X-Internal-Key. Empty:
	// every intake request is 401.
	InternalKeyDigest string
	// Outbox fans out the events the API writes (a firing rule disabled or
	// deleted), sends test events and retries deliveries. A fan-out failure
	// is logged, not answered: the event is stored, and the evaluator's
	// repair pass fans it out.
	Outbox Outbox
	// Conversations runs chat and voice conversations (doc 2).
	Conversations *conversation.Engine
	// DNI holds the projects' DNI pools (POST /v1/conversations/dni-reservation).
	DNI voiceops.DNIStore
	// Calls holds outbound calls (doc 2, functions/calls). Nil: the
	// outbound calling routes answer 500.
	Calls voiceops.CallStore
}

// server holds the dependencies of every route group.
type server struct {
	Deps
	projects projectCache
}

// routesFunc registers one endpoint group on a mux.
type routesFunc func(s *server, mux *http.ServeMux)

// newHandler builds a handler serving the given groups, wrapped in the
// middleware every request goes through.
func newHandler(d Deps, groups ...routesFunc) http.Handler {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	s := &server{Deps: d}
	mux := http.NewServeMux()
	for _, g := range groups {
		g(s, mux)
	}
	return s.withRequestID(s.recoverPanics(s.jsonFallback(mux)))
}

// Alerts serves the alerts group (functions/alerts).
func Alerts(d Deps) http.Handler { return newHandler(d, alertsRoutes) }

// Webhooks serves the webhook endpoints group (functions/webhooks).
func Webhooks(d Deps) http.Handler { return newHandler(d, webhooksRoutes, deliveriesRoutes) }

// Studio serves every group of the studio host (doc 1): the dev server and
// the handler tests use it.
func Studio(d Deps) http.Handler {
	return newHandler(d, alertsRoutes, webhooksRoutes, deliveriesRoutes, intakeRoutes)
}

// Intake serves the internal metric intake (functions/intake).
func Intake(d Deps) http.Handler { return newHandler(d, intakeRoutes) }

// Chat serves the chat group (functions/chat).
func Chat(d Deps) http.Handler { return newHandler(d, chatRoutes) }

// Calls serves the telephony system's voice intake and outbound calling
// (functions/calls).
func Calls(d Deps) http.Handler { return newHandler(d, voiceRoutes, dniRoutes, outboundRoutes) }

// Conversations serves the conversations group (functions/conversations):
// the conversations list (v3 and v1), the concurrency series and the
// handoff state.
func Conversations(d Deps) http.Handler {
	return newHandler(d, conversationsRoutes, concurrencyRoutes, handoffRoutes)
}

// Events serves the events group (functions/events): the external events
// webhook and the bridge-ended notification.
func Events(d Deps) http.Handler { return newHandler(d, eventsRoutes) }

// All serves every route of both hosts: the dev server uses it.
func All(d Deps) http.Handler {
	return newHandler(d, alertsRoutes, webhooksRoutes, deliveriesRoutes, intakeRoutes, chatRoutes, voiceRoutes, dniRoutes, outboundRoutes,
		conversationsRoutes, concurrencyRoutes, handoffRoutes, eventsRoutes)
}

// fanout hands events to the outbox, best effort (see Deps.Outbox).
func (s *server) fanout(ctx context.Context, events []voiceops.AlertEvent) {
	if s.Outbox == nil {
		return // the repair pass will fan them out
	}
	for _, e := range events {
		if err := s.Outbox.Fanout(ctx, e); err != nil {
			s.Log.ErrorContext(ctx, "fanning out an event; the evaluator will retry", "event_id", e.ID, "request_id", requestID(ctx), "error", err)
		}
	}
}

type ctxKey int

const requestIDKey ctxKey = iota

func requestID(ctx context.Context) string {
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
				s.Log.ErrorContext(r.Context(), "panic", "request_id", requestID(r.Context()), "panic", v)
				writeError(w, r, s.Log, familyOf(r), voiceops.Errorf(voiceops.KindInternal, "internal error"))
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
		if familyOf(r) == doc2 {
			writeJSON(w, status, doc2Error{ErrorMessage: msg, RequestID: requestID(r.Context())})
			return
		}
		writeJSON(w, status, doc1Error{Message: msg, RequestID: requestID(r.Context())})
	})
}

// familyOf tells which document a path belongs to, for routes that did not
// match: doc 1 lives under /v1/alert*, /v1/webhook* and /internal/v1/metric*.
func familyOf(r *http.Request) family {
	p := r.URL.Path
	for _, prefix := range []string{"/v1/alert", "/v1/webhook", "/internal/v1/metric", "/openapi"} {
		if len(p) >= len(prefix) && p[:len(prefix)] == prefix {
			return doc1
		}
	}
	if p == "/" {
		return doc1
	}
	return doc2
}

type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(status int)      { r.status = status }

// doc1Func is a doc-1 handler: it runs after authentication with an
// account-scoped API key and returns errors for writeError to answer.
type doc1Func func(w http.ResponseWriter, r *http.Request, p voiceops.Principal) error

// doc1 authenticates a doc-1 request (x-api-key, account-scoped) and answers
// any error in doc 1's shape.
func (s *server) doc1(h doc1Func) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.Auth.Authenticate(r.Context(), r.Header.Get("x-api-key"), voiceops.KeyAPI)
		if err == nil && p.ProjectID != "" {
			err = voiceops.Errorf(voiceops.KindForbidden, "this endpoint needs an account-scoped API key; the key is scoped to one project")
		}
		if err == nil {
			defer s.countPanic(r, p)
			err = h(w, r, p)
		}
		if err != nil {
			writeError(w, r, s.Log, doc1, err)
			if p.AccountID != "" && statusOf(voiceops.KindOf(err), doc1) >= http.StatusInternalServerError {
				s.countAPIError(r, p)
			}
		}
	})
}

// countPanic, deferred, counts a handler's panic (recoverPanics answers it
// with 500) as an API error, then lets the panic go on.
func (s *server) countPanic(r *http.Request, p voiceops.Principal) {
	if v := recover(); v != nil {
		if v != http.ErrAbortHandler {
			s.countAPIError(r, p)
		}
		panic(v)
	}
}

// countAPIError records one api_errors event for the principal's account
// (and project): the functions of this product record their own
// (DECISIONS.md, "Metric events"). A failure to record is logged and never
// changes the response.
func (s *server) countAPIError(r *http.Request, p voiceops.Principal) {
	if s.Metrics == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 2*time.Second)
	defer cancel()
	if err := s.Metrics.Record(ctx, metrics.Count(metrics.APIErrors, p.AccountID, p.ProjectID, s.Now())); err != nil {
		s.Log.ErrorContext(ctx, "recording api_errors failed", "request_id", requestID(r.Context()), "account_id", p.AccountID, "error", err)
	}
}
