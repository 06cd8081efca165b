package apitest

import (
	"github.com/voiceops/opsapi/shared/testsupport/testclock"

	"github.com/voiceops/opsapi/shared/testsupport/apifixture"

	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/alerts/evalgraph"
	"github.com/voiceops/opsapi/shared/alerts/evaluator"
	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// harness is the studio handler over a memory store with two accounts:
// acct_a (projects proj_a1, proj_a2) and acct_b (proj_b1).
type harness struct {
	t       testing.TB
	h       http.Handler
	tel     *emf.Batch // the handlers' metrics, flushed after each request
	store   *memory.Store
	stores  voiceops.Stores
	clock   *testclock.Clock
	keyA    string // account-scoped api key of acct_a
	keyB    string // account-scoped api key of acct_b
	projKey string // project-scoped api key of acct_a/proj_a1
	agent   string // agent token of acct_a/proj_a1
	agent2  string // agent token of acct_a/proj_a2
	// projKey2 is a project-scoped api key of acct_a/proj_a2.
	projKey2 string
	prov     provision.Provisioner
	check    bool // validate responses against the OpenAPI document
	fanMu    sync.Mutex
	fanned   []voiceops.AlertEvent // events handed to the outbox's Fanout
	queue    *recordingQueue

	// service and service2 are the service keys (X-Service-Auth-Token) of
	// acct_a/proj_a1 and acct_a/proj_a2; calls is the outbound call store.
	service, service2 string
	calls             *memory.Calls
	// dials is the outbound queue: the dial jobs the trigger sent.
	dials *dialQueue
	// requests holds the rate-limit buckets and Idempotency-Key records.
	requests *memory.Requests
	// deps is what h.h was composed from.
	deps Deps
	// metrics holds the metric data (the engine's events, API errors, the
	// intake's), on h.clock; its additions and touches go on stream.
	metrics *memory.Metrics
	// stream is the metrics table's stream: the scopes whose data was
	// stored or touched, until deliverStream hands them to evaluator.
	stream *scopeStream
	// evaluator is the evaluator function's graph on the harness's stores
	// (shared/alerts/evalgraph).
	evaluator *evaluator.Evaluator
}

// scopeStream is the metrics table's stream in the harness: the memory
// metric store notifies it of the scopes it stored data for (or touched),
// and a test delivers them to the evaluator as the stream's event source
// mapping would, after the request that wrote them.
type scopeStream struct {
	mu     sync.Mutex
	scopes []metrics.Scope
}

func (s *scopeStream) add(scopes []metrics.Scope) {
	s.mu.Lock()
	s.scopes = append(s.scopes, scopes...)
	s.mu.Unlock()
}

// take removes and returns the scopes on the stream, each once, in order.
func (s *scopeStream) take() []metrics.Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []metrics.Scope
	seen := make(map[metrics.Scope]bool, len(s.scopes))
	for _, sc := range s.scopes {
		if !seen[sc] {
			seen[sc] = true
			out = append(out, sc)
		}
	}
	s.scopes = nil
	return out
}

// deliverStream evaluates the scopes on the stream with the evaluator
// function's graph (its stream batch: EvaluateScopes), and returns them
// with the evaluation's stats.
func (h *harness) deliverStream() ([]metrics.Scope, evaluator.Stats) {
	h.t.Helper()
	scopes := h.stream.take()
	if len(scopes) == 0 {
		return nil, evaluator.Stats{}
	}
	st, err := h.evaluator.EvaluateScopes(context.Background(), scopes)
	if err != nil {
		h.t.Fatalf("evaluating %v: %v", scopes, err)
	}
	return scopes, st
}

// dialQueue keeps the dial jobs it is sent; err, when set, fails them.
type dialQueue struct {
	mu   sync.Mutex
	jobs []voiceops.DialJob
	err  error
}

func (q *dialQueue) SendDial(_ context.Context, j voiceops.DialJob, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	if delay != 0 {
		return fmt.Errorf("the trigger delayed its job by %s", delay)
	}
	q.jobs = append(q.jobs, j)
	return nil
}

func (q *dialQueue) sent() []voiceops.DialJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.jobs)
}

// recordingOutbox is the real outbox, noting the events fanned out.
type recordingOutbox struct {
	*delivery.Outbox
	h *harness
}

func (o recordingOutbox) Fanout(ctx context.Context, e voiceops.AlertEvent) error {
	o.h.fanMu.Lock()
	o.h.fanned = append(o.h.fanned, e)
	o.h.fanMu.Unlock()
	return o.Outbox.Fanout(ctx, e)
}

// recordingQueue keeps the messages sent, for tests to look at.
type recordingQueue struct {
	mu   sync.Mutex
	msgs []queue.Message
	fail error
}

func (q *recordingQueue) Send(_ context.Context, m queue.Message, _ time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail != nil {
		return q.fail
	}
	q.msgs = append(q.msgs, m)
	return nil
}

func newHarness(t testing.TB) *harness {
	return newHarnessWith(t, nil)
}

// newHarnessWith lets a test wrap the stores (to inject failures or count calls).
func newHarnessWith(t testing.TB, wrap func(voiceops.Stores) voiceops.Stores) *harness {
	t.Helper()
	ctx := context.Background()
	h := &harness{t: t, store: memory.New(), clock: testclock.At(apifixture.Start), check: true, queue: &recordingQueue{}}
	h.stores = h.store.Stores()
	h.prov = provision.Provisioner{Accounts: h.stores.Accounts, Region: voiceops.RegionUS, Now: h.clock.Now}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	k := apifixture.Provision(t, h.prov)
	h.keyA, h.keyB, h.projKey, h.projKey2 = k.A, k.B, k.Proj, k.Proj2
	h.agent, h.agent2, h.service, h.service2 = k.Agent, k.Agent2, k.Service, k.Service2
	h.calls = memory.NewCalls()
	h.dials = &dialQueue{}
	h.requests = memory.NewRequests()
	for _, p := range []string{"proj_a1", "proj_a2"} {
		must(agent.PutConfig(ctx, h.store.AgentConfigs(), agent.DemoConfig("acct_a", p)))
	}
	// acct_a may call the tests' UK numbers too (+447911123456 is a
	// Guernsey mobile to libphonenumber); acct_b keeps its region's default
	// destination policy (US and CA).
	must(h.store.Destinations().SetDestinationPolicy(ctx, "acct_a", &destination.Policy{Countries: []string{"CA", "GB", "GG", "US"}}))
	stores := h.stores
	if wrap != nil {
		stores = wrap(stores)
	}
	// The metric data and its stream, on the harness's clock.
	h.metrics, h.stream = memory.NewMetrics(), &scopeStream{}
	h.metrics.Now = h.clock.Now
	h.metrics.OnAdd(h.stream.add)
	h.store.WakeWith(h.metrics.Touch) // wake-ups reach the stream, as deployed
	log, tel := suiteLogger(), suiteMetrics
	if _, bench := t.(*testing.B); bench {
		log, tel = benchSinks(t)
	}
	h.tel = tel
	rollups := memory.NewRollups()
	rollups.Now = h.clock.Now
	outbox := recordingOutbox{Outbox: delivery.NewOutbox(stores, h.queue, h.clock.Now), h: h}
	h.evaluator = evalgraph.New(evalgraph.Deps{Stores: stores, Metrics: h.metrics, Rollups: rollups, Fanout: outbox.Fanout,
		Now: h.clock.Now, Log: log})
	h.deps = Deps{
		Stores: stores, Auth: auth.New(stores.Accounts, voiceops.RegionUS, h.clock.Now), Now: h.clock.Now,
		Log:               log,
		AccessLog:         lambdamain.AccessLogger(tel),
		Outbox:            outbox,
		Metrics:           &buckets.Recorder{Store: h.metrics},
		Series:            &series.Reader{Minutes: h.metrics, Hours: rollups, Now: h.clock.Now},
		InternalKeyDigest: keys.Digest(testInternalKey),
		DNI:               h.store.DNI(),
		Calls:             h.calls,
		Dial:              h.dials,
		Guards:            httpapi.NewGuards(h.requests, h.clock.Now),
		Telemetry:         tel,
		Destinations:      h.store.Destinations(),
		// The chat, calls and events functions' engine graph.
		Conversations: convgraph.New(convgraph.Deps{Conversations: stores.Conversations, Configs: h.store.AgentConfigs(), DNI: h.store.DNI(),
			Metrics: h.metrics, Now: h.clock.Now, Log: log}),
	}
	h.h = flushing(h.tel, All(h.deps))
	noteSecrets(h.keyA, h.keyB, h.projKey, h.projKey2, h.agent, h.agent2, h.service, h.service2)
	return h
}

// response is a handler's answer (apifixture.Response).
type response = apifixture.Response

// do sends a request: body is a string sent verbatim (as JSON), or any other
// value marshalled to JSON, or nil for none.
func (h *harness) do(method, path, key string, body any) response {
	h.t.Helper()
	return h.doWith(method, path, key, body, "application/json")
}

func (h *harness) doWith(method, path, key string, body any, contentType string) response {
	h.t.Helper()
	return h.doHeaders(method, path, key, body, map[string]string{"Content-Type": contentType})
}

// doHeaders sends a request with the given headers (a Content-Type is only
// set on a request with a body); paths under /nope are no route of the
// document.
func (h *harness) doHeaders(method, path, key string, body any, headers map[string]string) response {
	h.t.Helper()
	return apifixture.Do(h.t, h.h, h.check && !strings.HasPrefix(path, "/nope"), method, path, key, body, headers)
}

func validRule() map[string]any {
	return map[string]any{"name": "p95 too slow", "metric": "turn_latency_p95", "operator": ">", "threshold_value": 1500, "window_duration": "5m"}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == deleteField {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

type deleteMarker struct{}

var deleteField = deleteMarker{}

func validEndpoint() map[string]any {
	return map[string]any{"name": "pager", "url": "https://hooks.example.com/alerts", "event_types": []string{"alerts.triggered", "alerts.resolved"}}
}
