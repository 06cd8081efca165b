package conversationsapi

import (
	"github.com/voiceops/opsapi/shared/testsupport/testclock"

	"github.com/voiceops/opsapi/shared/testsupport/spectest"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The conversations tests reach into the list's query and encoder, so they
// live here with a harness of their own: the conversations function's
// groups over a memory store (shared/testsupport/apitest tests every other route).

// conversationsHandler serves the conversations function's groups.
func conversationsHandler(stores voiceops.Stores, keys httpapi.Authenticator, now func() time.Time) http.Handler {
	return httpapi.New(httpapi.Config{Keys: keys, Projects: stores.Accounts, Now: now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		(&Conversations{Store: stores.Conversations, Now: now}).Routes(),
		(&Concurrency{Store: stores.Conversations, Now: now}).Routes(),
		(&Handoff{Store: stores.Conversations}).Routes())
}

// harness serves the conversations groups over a memory store with two
// accounts: acct_a (projects proj_a1, proj_a2) and acct_b (proj_b1).
type harness struct {
	t        testing.TB
	h        http.Handler
	stores   voiceops.Stores
	clock    *testclock.Clock
	keyA     string // account-scoped api key of acct_a
	keyB     string // account-scoped api key of acct_b
	projKey  string // project-scoped api key of acct_a/proj_a1
	projKey2 string // project-scoped api key of acct_a/proj_a2
	agent    string // agent token of acct_a/proj_a1
	check    bool   // validate responses against the OpenAPI document
}

func newHarness(t testing.TB) *harness { return newHarnessWith(t, nil) }

// newHarnessWith lets a test wrap the stores (to count calls).
func newHarnessWith(t testing.TB, wrap func(voiceops.Stores) voiceops.Stores) *harness {
	t.Helper()
	ctx := context.Background()
	h := &harness{t: t, stores: memory.New().Stores(), clock: testclock.At(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)), check: true}
	prov := provision.Provisioner{Accounts: h.stores.Accounts, Region: voiceops.RegionUS, Now: h.clock.Now}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []struct {
		id       string
		projects []string
	}{{"acct_a", []string{"proj_a1", "proj_a2"}}, {"acct_b", []string{"proj_b1"}}} {
		_, err := prov.CreateAccount(ctx, a.id, a.id)
		must(err)
		for _, p := range a.projects {
			_, err := prov.CreateProject(ctx, a.id, p, p)
			must(err)
		}
	}
	key := func(kind voiceops.KeyKind, account, project string) string {
		k, _, err := prov.CreateKey(ctx, kind, account, project)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	h.keyA, h.keyB = key(voiceops.KeyAPI, "acct_a", ""), key(voiceops.KeyAPI, "acct_b", "")
	h.projKey, h.projKey2 = key(voiceops.KeyAPI, "acct_a", "proj_a1"), key(voiceops.KeyAPI, "acct_a", "proj_a2")
	h.agent = key(voiceops.KeyAgent, "acct_a", "proj_a1")
	stores := h.stores
	if wrap != nil {
		stores = wrap(stores)
	}
	h.h = conversationsHandler(stores, authFor(stores, h.clock.Now), h.clock.Now)
	return h
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) JSON(tb testing.TB) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		tb.Fatalf("response body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

func (r response) expect(tb testing.TB, status int) response {
	tb.Helper()
	if r.status != status {
		tb.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	return r
}

// do sends a request with an x-api-key and checks the answer against the
// OpenAPI document.
func (h *harness) do(method, path, key string, body any) response {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	res := response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	if res.header.Get("X-Request-Id") == "" {
		h.t.Errorf("%s %s: no X-Request-Id header", method, path)
	}
	if h.check && res.status != http.StatusMethodNotAllowed {
		if err := spectest.Validator(h.t).Check(req, res.status, res.header, res.body); err != nil {
			h.t.Errorf("%s %s -> %d %s: response does not match the OpenAPI document: %v", method, path, res.status, res.body, err)
		}
	}
	return res
}

func authFor(stores voiceops.Stores, now func() time.Time) httpapi.Authenticator {
	return auth.New(stores.Accounts, voiceops.RegionUS, now)
}

// benchEvent is an API Gateway request as the benchmarks send it.
func benchEvent(method, path, key, body string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: path,
		Headers: map[string]string{"x-api-key": key, "content-type": "application/json"},
		Body:    body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path},
		},
	}
}

// errDynamo is a store failure carrying internal text that must not leak.
var errDynamo = errors.New("ProvisionedThroughputExceededException: table voiceops-us-config")
