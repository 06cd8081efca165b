// Package catalogtest holds a handler to the catalog (shared/platform/catalog): it
// sends one request for each catalog route, without credentials, and reads
// the route pattern the handler matched from its request metrics (the
// Route dimension, telemetry.Requests). A route the handler does not
// mount, mounts under another pattern, or a route of another function it
// serves, fails the test. Used by each function's catalog_test.go and by
// the HTTP test suite (shared/testsupport/apitest).
package catalogtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/platform/catalog"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
)

// Unmatched is the Route dimension of a request that matched no route.
const Unmatched = "unmatched"

// Routes is a telemetry.Recorder that keeps the Route dimension of the
// last request counted.
type Routes struct {
	mu   sync.Mutex
	last string
}

// Record implements telemetry.Recorder.
func (r *Routes) Record(m telemetry.Metric, _ float64, dims ...string) {
	if m.Name != telemetry.Requests.Name {
		return
	}
	if i := slices.Index(m.Dims, telemetry.DimRoute); i >= 0 && i < len(dims) {
		r.mu.Lock()
		r.last = dims[i]
		r.mu.Unlock()
	}
}

// take returns the route of the last request counted and forgets it.
func (r *Routes) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	last := r.last
	r.last = ""
	return last
}

// TB is what the checks report to (a *testing.T).
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Lambda is a function's Lambda handler.
type Lambda = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// ServesFunction checks the Lambda handler of the catalog function name:
// each of its routes is served by that route's own pattern, and every
// other catalog route (of any function, either host) matches none but the
// function's own. newHandler builds the handler with the recorder as its
// request metrics; nothing else of its dependencies is needed (a request
// without credentials is refused or fails after its route is matched).
func ServesFunction(t TB, name string, newHandler func(telemetry.Recorder) Lambda) {
	t.Helper()
	f, ok := catalog.Lookup(name)
	if !ok {
		t.Fatalf("%s is not a function of shared/platform/catalog", name)
	}
	rec := &Routes{}
	h := newHandler(rec)
	check(t, "functions/"+name, f.Routes(), func(r catalog.Route) string {
		p := r.SamplePath()
		_, _ = h(context.Background(), events.APIGatewayV2HTTPRequest{
			Version: "2.0", RawPath: p, Headers: map[string]string{},
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				DomainName: "test.example", Stage: "$default",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.Method, Path: p, Protocol: "HTTP/1.1"},
			},
		})
		return rec.take()
	})
}

// ServesHTTP checks an http.Handler whose request metrics go to rec: each
// of routes is served by its own pattern, and every other catalog route
// matches none but those.
func ServesHTTP(t TB, what string, routes []catalog.Route, h http.Handler, rec *Routes) {
	t.Helper()
	check(t, what, routes, func(r catalog.Route) string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(r.Method, r.SamplePath(), nil))
		_, _ = io.Copy(io.Discard, w.Body)
		return rec.take()
	})
}

// check probes every catalog route with serve, which returns the pattern
// the request matched.
func check(t TB, what string, own []catalog.Route, serve func(catalog.Route) string) {
	t.Helper()
	mine := map[string]bool{}
	for _, r := range own {
		mine[r.Pattern()] = true
	}
	probed := map[string]bool{}
	for _, h := range catalog.Hosts {
		for _, r := range catalog.OnHost(h) {
			if probed[r.Pattern()] {
				continue // the same route on both hosts (/openapi.json)
			}
			probed[r.Pattern()] = true
			got := serve(r)
			switch {
			case mine[r.Pattern()] && got != r.Pattern():
				t.Errorf("%s: %s %s is served as %q; the catalog lists the route %s", what, r.Method, r.SamplePath(), got, r.Pattern())
			case !mine[r.Pattern()] && got != Unmatched && !mine[got]:
				t.Errorf("%s serves %s (as %q), which the catalog does not give it", what, r.Pattern(), got)
			}
		}
	}
}
