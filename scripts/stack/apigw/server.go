package apigw

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// IntegrationTimeout is the HTTP API's ceiling on an integration.
const IntegrationTimeout = 30 * time.Second

// Invoke runs a function synchronously with a payload.
type Invoke func(ctx context.Context, function string, payload []byte) (out []byte, functionError bool, err error)

// API serves one HTTP API.
type API struct {
	Name    string
	ID      string
	Account string
	// StageVariables are the stage's, carried by every event.
	StageVariables map[string]string
	Router         *Router
	Invoke         Invoke
	Timeout        time.Duration // IntegrationTimeout when zero
	CORS           *CORS         // the API's CorsConfiguration; nil for none
	Now            func() time.Time
	Log            *slog.Logger
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := newRequestID()
	w.Header().Set("Apigw-Requestid", reqID)
	var resp Response
	if pre, ok := a.CORS.preflightOf(r); ok {
		resp = pre
	} else {
		resp = a.handle(r, reqID)
		if a.CORS != nil {
			a.CORS.respond(r, &resp)
		}
	}
	for k, vs := range resp.Headers {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

func (a *API) handle(r *http.Request, reqID string) Response {
	m, ok := a.Router.Match(r.Method, r.URL.Path)
	if !ok {
		return Gateway(http.StatusNotFound, "Not Found")
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 10<<20))
	if err != nil {
		return Gateway(http.StatusRequestEntityTooLarge, "Request Entity Too Large")
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	ev := BuildEvent(r, body, m, EventContext{AccountID: a.Account, APIID: a.ID, DomainName: r.Host, Stage: "$default", StageVariables: a.StageVariables, RequestID: reqID, Now: now()})
	payload, err := json.Marshal(ev)
	if err != nil {
		return Gateway(http.StatusInternalServerError, "Internal Server Error")
	}
	timeout := a.Timeout
	if timeout == 0 {
		timeout = IntegrationTimeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	type result struct {
		out   []byte
		fnErr bool
		err   error
	}
	done := make(chan result, 1)
	// The function keeps running past the integration timeout, as it does
	// deployed; only the client stops waiting.
	go func() {
		out, fnErr, err := a.Invoke(context.WithoutCancel(ctx), m.Function, payload)
		done <- result{out, fnErr, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			if a.Log != nil {
				a.Log.Error("integration failed", "api", a.Name, "route", m.Key, "function", m.Function, "err", res.err)
			}
			return Gateway(http.StatusInternalServerError, "Internal Server Error")
		}
		return DecodeResponse(res.out, res.fnErr)
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Gateway(http.StatusServiceUnavailable, "Service Unavailable")
		}
		return Gateway(http.StatusInternalServerError, "Internal Server Error")
	}
}

func newRequestID() string {
	b := make([]byte, 9)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b) + "="
}
