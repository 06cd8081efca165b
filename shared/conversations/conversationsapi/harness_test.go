package conversationsapi

import (
	"github.com/voiceops/opsapi/shared/testsupport/testclock"

	"github.com/voiceops/opsapi/shared/testsupport/apifixture"

	"errors"
	"io"
	"log/slog"
	"net/http"
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
// groups over a memory store, on the fixture every API test shares
// (shared/testsupport/apifixture; shared/testsupport/apitest tests every
// other route).

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
	h := &harness{t: t, stores: memory.New().Stores(), clock: testclock.At(apifixture.Start), check: true}
	k := apifixture.Provision(t, provision.Provisioner{Accounts: h.stores.Accounts, Region: voiceops.RegionUS, Now: h.clock.Now})
	h.keyA, h.keyB, h.projKey, h.projKey2, h.agent = k.A, k.B, k.Proj, k.Proj2, k.Agent
	stores := h.stores
	if wrap != nil {
		stores = wrap(stores)
	}
	h.h = conversationsHandler(stores, authFor(stores, h.clock.Now), h.clock.Now)
	return h
}

// response is a handler's answer (apifixture.Response).
type response = apifixture.Response

// do sends a request with an x-api-key and checks the answer against the
// OpenAPI document.
func (h *harness) do(method, path, key string, body any) response {
	h.t.Helper()
	return apifixture.Do(h.t, h.h, h.check, method, path, key, body, nil)
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
