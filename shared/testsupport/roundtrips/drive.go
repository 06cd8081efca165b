package roundtrips

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/platform/catalog"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

// Lambda is a function's HTTP handler (its build).
type Lambda func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Func drives one function's handler and measures its routes.
type Func struct {
	t        *testing.T
	fn       catalog.Function
	h        Lambda
	rec      *Recorder
	measured map[string]string // route key → path measured
}

// Req is a request to the function.
type Req struct {
	Method, Path string
	Header       map[string]string
	Body         string
	// Status is the answer wanted.
	Status int
}

// Resp is the function's answer.
type Resp struct {
	Status int
	Header map[string]string
	Body   string
}

// JSON decodes the body as an object.
func (r Resp) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Body), &m); err != nil {
		t.Fatalf("body %q: %v", r.Body, err)
	}
	return m
}

// Drive returns a driver of the function named name (catalog.Functions).
func Drive(t *testing.T, name string, env *Env, h Lambda) *Func {
	t.Helper()
	fn, ok := catalog.Lookup(name)
	if !ok {
		t.Fatalf("no function %q in the catalog", name)
	}
	return &Func{t: t, fn: fn, h: h, rec: env.Recorder, measured: map[string]string{}}
}

// Do sends r without measuring it: a fixture, or the warm-up.
func (f *Func) Do(r Req) Resp {
	f.t.Helper()
	return f.send(r)
}

func (f *Func) send(r Req) Resp {
	f.t.Helper()
	u, err := url.Parse(r.Path)
	if err != nil {
		f.t.Fatal(err)
	}
	headers := map[string]string{}
	for k, v := range r.Header {
		headers[strings.ToLower(k)] = v
	}
	if r.Body != "" && headers["content-type"] == "" {
		headers["content-type"] = "application/json"
	}
	host := f.fn.Groups[0].Host
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: u.Path, RawQueryString: u.RawQuery, Headers: headers, Body: r.Body,
		StageVariables: map[string]string{httpapi.FamilyStageVariable: string(host)},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: string(host) + ".example.com", Stage: "$default", RequestID: "rt",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.Method, Path: u.Path, Protocol: "HTTP/1.1", SourceIP: "192.0.2.1"},
		},
	}
	res, err := f.h(context.Background(), ev)
	if err != nil {
		f.t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	if r.Status != 0 && res.StatusCode != r.Status {
		f.t.Fatalf("%s %s: %d %s, want %d", r.Method, r.Path, res.StatusCode, res.Body, r.Status)
	}
	return Resp{Status: res.StatusCode, Header: res.Headers, Body: res.Body}
}

// Measure sends r as a request of route and records the AWS calls it made
// until its answer (background work the handler waits for included).
func (f *Func) Measure(route string, r Req) Resp {
	f.t.Helper()
	key := string(f.fn.Groups[0].Host) + " " + route
	if !slices.ContainsFunc(f.fn.Routes(), func(rt catalog.Route) bool { return rt.Pattern() == route }) {
		f.t.Fatalf("%s is no route of function %s", route, f.fn.Name)
	}
	f.rec.Take()
	res := f.send(r)
	f.measured[key] = Path(Steps(f.rec.Take()))
	return res
}

// Check holds the function's measurements to Want: every route of the
// function must have been measured, and each must match its row.
func (f *Func) Check() {
	f.t.Helper()
	for _, rt := range f.fn.Routes() {
		key := string(f.fn.Groups[0].Host) + " " + rt.Pattern()
		got, ok := f.measured[key]
		if !ok {
			f.t.Errorf("%s: not measured; every route of function %s needs a request in its round-trip test", key, f.fn.Name)
			continue
		}
		want, ok := Want[key]
		if !ok {
			f.t.Errorf("%s: no row in roundtrips.Want; measured %q", key, got)
			continue
		}
		if got != want.Path {
			f.t.Errorf("%s: AWS calls\n got %s (%d sequential)\nwant %s (%d sequential)", key, got, count(got), want.Path, count(want.Path))
		}
	}
	if f.t.Failed() {
		f.t.Logf("measured:\n%s", f.dump())
	}
}

func (f *Func) dump() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(f.measured)) {
		fmt.Fprintf(&b, "\t%q: {%q},\n", k, f.measured[k])
	}
	return b.String()
}

// Header builds a header map from pairs.
func Header(kv ...string) map[string]string {
	h := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	return h
}

// Status codes, for brevity in the functions' tests.
const (
	OK        = http.StatusOK
	Created   = http.StatusCreated
	NoContent = http.StatusNoContent
	Accepted  = http.StatusAccepted
)
