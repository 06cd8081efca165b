package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/platform/logctx"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
)

// The access line and the request metrics: every request ends with one
// log line naming it (our request ID, API Gateway's and Lambda's when it
// came through the Lambda adapter, method, route, status, duration, the
// caller's account and project; never a key, a query or a body) and one
// observation of each request metric (telemetry: Requests, 4xx, 5xx, 429
// and Latency by host and route). The IDs ride in the context (logctx),
// so every other line logged while serving the request carries them too.

// The attribute keys of the IDs.
const (
	LogRequestID       = "request_id"
	LogAPIGWRequestID  = "apigw_request_id"
	LogLambdaRequestID = "lambda_request_id"
	LogAccountID       = "account_id"
	LogProjectID       = "project_id"
)

// HostStudio and HostBase are the Host dimension's values.
const (
	HostStudio = "studio"
	HostBase   = "base"
)

// unmatched is the Route of a request that matched no route.
const unmatched = "unmatched"

// access is what the middleware learns about a request while serving it,
// and the request's context (its ID and its deadline): one allocation
// with its response writer, where context.WithValue and
// context.WithDeadline took five (the value, the timer context, the timer
// and two closures) per request (reqctx.go).
type access struct {
	context.Context // the parent: the log context's IDs and the caller's cancellation
	id              string
	start           time.Time
	deadline        time.Time
	mu              sync.Mutex // guards route and the context's state (reqctx.go)
	route           string
	w               statusWriter
	// dims are the request metrics' Host and Route: a Recorder takes them
	// as a slice, which this one is without an allocation per call.
	dims [2]string
	// idHeader is the X-Request-Id header's value, not a slice of its own.
	idHeader [1]string
	reqState
}

type accessKey struct{}

// begin starts a request's access record, puts its ID in the log context
// and returns the request's context, which ends at deadline (or with its
// parent, or when the request ends: access.cancel).
func (s *server) begin(ctx context.Context, id string, start, deadline time.Time, w http.ResponseWriter) *access {
	a := &access{id: id, start: start, deadline: deadline, route: unmatched, w: statusWriter{ResponseWriter: w}}
	a.Context = logctx.With(ctx, slog.String(LogRequestID, id))
	return a
}

// RequestID is the ID of the request being served (X-Request-Id).
func RequestID(ctx context.Context) string {
	if a, ok := ctx.Value(accessKey{}).(*access); ok {
		return a.id
	}
	return ""
}

// noteRoute records the route pattern a request matched.
func noteRoute(ctx context.Context, pattern string) {
	if a, ok := ctx.Value(accessKey{}).(*access); ok {
		a.mu.Lock()
		a.route = pattern
		a.mu.Unlock()
	}
}

// noteCaller adds the authenticated caller's account and project to the
// request's log context: the access line and every later line name them.
func noteCaller(ctx context.Context, c Caller) {
	if c.AccountID == "" {
		return
	}
	attrs := []slog.Attr{slog.String(LogAccountID, c.AccountID)}
	if c.ProjectID != "" {
		attrs = append(attrs, slog.String(LogProjectID, c.ProjectID))
	}
	logctx.With(ctx, attrs...)
}

// end writes the access line and the request metrics. The IDs and the
// caller come from the log context (New makes the logger add them).
func (s *server) end(ctx context.Context, r *http.Request, a *access, status int) {
	if status == 0 {
		status = http.StatusOK
	}
	now := time.Now()
	ms := float64(now.Sub(a.start).Microseconds()) / 1000
	a.mu.Lock()
	route := a.route
	a.mu.Unlock()
	host := hostOf(r)
	level := slog.LevelInfo
	if status >= http.StatusInternalServerError {
		level = slog.LevelError
	}
	// The record goes to the handler as Logger.LogAttrs would send it,
	// without the caller's program counter: a stack walk per request, for
	// a source that the functions' and the dev server's handlers never
	// write (no AddSource).
	if h := s.AccessLog.Handler(); h.Enabled(ctx, level) {
		rec := slog.NewRecord(now, level, "request", 0)
		rec.AddAttrs(slog.String("method", r.Method), slog.String("route", route), slog.String("host", host),
			slog.Int("status", status), slog.Float64("duration_ms", ms))
		_ = h.Handle(ctx, rec)
	}

	m := s.Metrics
	a.dims = [2]string{host, route}
	dims := a.dims[:]
	m.Record(telemetry.Requests, 1, dims...)
	m.Record(telemetry.Latency, ms, dims...)
	switch {
	case status >= 500:
		m.Record(telemetry.Errors5xx, 1, dims...)
	case status >= 400:
		m.Record(telemetry.Errors4xx, 1, dims...)
		if status == http.StatusTooManyRequests {
			m.Record(telemetry.Throttled, 1, dims...)
		}
	}
}

// hostOf names the host a request is for, by its path's family (the dev
// server serves both hosts on one address).
func hostOf(r *http.Request) string {
	if familyOf(r) == StudioErrors {
		return HostStudio
	}
	return HostBase
}

// statusWriter remembers the status a response was sent with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
