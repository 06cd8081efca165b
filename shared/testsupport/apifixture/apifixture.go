// Package apifixture is what the API tests over a memory store share: two
// accounts with their projects and keys (Provision), and requests to a
// handler whose answers are checked against the OpenAPI document (Do).
package apifixture

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/testsupport/spectest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Start is where the fixtures' clocks start.
var Start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// Keys are the fixture's keys.
type Keys struct {
	A, B        string // account-scoped API keys of acct_a and acct_b
	Proj, Proj2 string // project-scoped API keys of acct_a/proj_a1 and acct_a/proj_a2
	Agent       string // agent token of acct_a/proj_a1
	Agent2      string // agent token of acct_a/proj_a2
	// Service and Service2 are the service keys (X-Service-Auth-Token) of
	// acct_a/proj_a1 and acct_a/proj_a2.
	Service, Service2 string
}

// Provision creates, with prov, the accounts acct_a (projects proj_a1 and
// proj_a2) and acct_b (proj_b1), and their keys.
func Provision(tb testing.TB, prov provision.Provisioner) Keys {
	tb.Helper()
	ctx := context.Background()
	for _, a := range []struct {
		id       string
		projects []string
	}{{"acct_a", []string{"proj_a1", "proj_a2"}}, {"acct_b", []string{"proj_b1"}}} {
		if _, err := prov.CreateAccount(ctx, a.id, a.id); err != nil {
			tb.Fatal(err)
		}
		for _, p := range a.projects {
			if _, err := prov.CreateProject(ctx, a.id, p, p); err != nil {
				tb.Fatal(err)
			}
		}
	}
	key := func(kind voiceops.KeyKind, account, project string) string {
		tb.Helper()
		k, _, err := prov.CreateKey(ctx, kind, account, project)
		if err != nil {
			tb.Fatal(err)
		}
		return k
	}
	return Keys{
		A: key(voiceops.KeyAPI, "acct_a", ""), B: key(voiceops.KeyAPI, "acct_b", ""),
		Proj: key(voiceops.KeyAPI, "acct_a", "proj_a1"), Proj2: key(voiceops.KeyAPI, "acct_a", "proj_a2"),
		Agent: key(voiceops.KeyAgent, "acct_a", "proj_a1"), Agent2: key(voiceops.KeyAgent, "acct_a", "proj_a2"),
		Service: key(voiceops.KeyService, "acct_a", "proj_a1"), Service2: key(voiceops.KeyService, "acct_a", "proj_a2"),
	}
}

// Response is a handler's answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body, which must be a JSON object.
func (r Response) JSON(tb testing.TB) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		tb.Fatalf("response body %q is not a JSON object: %v", r.Body, err)
	}
	return m
}

// Expect fails the test unless the response has the wanted status.
func (r Response) Expect(tb testing.TB, status int) Response {
	tb.Helper()
	if r.Status != status {
		tb.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	return r
}

// FieldErrors returns the field names of a studio-host error body.
func (r Response) FieldErrors(tb testing.TB) []string {
	tb.Helper()
	var body struct {
		Message string                `json:"message"`
		Errors  []voiceops.FieldError `json:"errors"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range body.Errors {
		out = append(out, e.Field)
	}
	return out
}

// Do sends a request to h and returns its answer. body is a string or
// []byte sent verbatim, any other value marshalled to JSON, or nil for
// none; key, when set, is the x-api-key; headers are set on the request
// after it, but a Content-Type only on one with a body. Every answer must carry an
// X-Request-Id; with check, every answer but a 405 must match the OpenAPI
// document.
func Do(tb testing.TB, h http.Handler, check bool, method, path, key string, body any, headers map[string]string) Response {
	tb.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			tb.Fatal(err)
		}
	}
	var rd io.Reader
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if ct := headers["Content-Type"]; raw != nil && ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	for k, v := range headers {
		if k != "Content-Type" {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if res.Header.Get("X-Request-Id") == "" {
		tb.Errorf("%s %s: no X-Request-Id header", method, path)
	}
	if check && res.Status != http.StatusMethodNotAllowed {
		if err := spectest.Validator(tb).Check(req, res.Status, res.Header, res.Body); err != nil {
			tb.Errorf("%s %s -> %d %s: response does not match the OpenAPI document: %v", method, path, res.Status, res.Body, err)
		}
	}
	return res
}
