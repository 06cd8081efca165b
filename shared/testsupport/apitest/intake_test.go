package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

const testInternalKey = "vo_internal_us_test-internal-key"

// intakeHarness is the studio handler with a metric store behind it.
type intakeHarness struct {
	*harness
	metrics *recordingStore
	logs    *bytes.Buffer
}

// recordingStore is a memory metric store that can be made to fail and
// counts its writes.
type recordingStore struct {
	*memory.Metrics
	mu   sync.Mutex
	adds int
	fail error
}

func (s *recordingStore) AddBuckets(ctx context.Context, bs []buckets.Bucket) error {
	s.mu.Lock()
	s.adds++
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return fail
	}
	return s.Metrics.AddBuckets(ctx, bs)
}

var _ buckets.Store = (*recordingStore)(nil)

func newIntakeHarness(t *testing.T, wrap func(voiceops.Stores) voiceops.Stores) *intakeHarness {
	t.Helper()
	h := newHarnessWith(t, wrap)
	mem := memory.NewMetrics()
	mem.Now = h.clock.Now
	ih := &intakeHarness{harness: h, metrics: &recordingStore{Metrics: mem}, logs: &bytes.Buffer{}}
	stores := h.stores
	if wrap != nil {
		stores = wrap(stores)
	}
	h.h = Studio(Deps{
		Stores: stores, Auth: auth.New(stores.Accounts, voiceops.RegionUS, h.clock.Now), Now: h.clock.Now,
		Log:               slog.New(slog.NewTextHandler(ih.logs, nil)),
		Metrics:           &buckets.Recorder{Store: ih.metrics},
		InternalKeyDigest: keys.Digest(testInternalKey),
	})
	return ih
}

// post sends a body to the intake with an internal key ("" for none).
func (h *intakeHarness) post(key string, body any) response {
	h.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			h.t.Fatal(err)
		}
	}
	req := httptest.NewRequest("POST", "/internal/v1/metric-events", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-Internal-Key", key)
	}
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	res := response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if res.Header.Get("X-Request-Id") == "" {
		h.t.Errorf("no X-Request-Id header")
	}
	if res.Status >= 400 {
		m := res.JSON(h.t)
		if _, ok := m["message"].(string); !ok || m["request_id"] != res.Header.Get("X-Request-Id") {
			h.t.Errorf("error body %s is not the studio host's shape", res.Body)
		}
		if _, has := m["errors"]; has != (res.Status == 400 || res.Status == 422) {
			h.t.Errorf("status %d: errors present = %v: %s", res.Status, has, res.Body)
		}
	}
	return res
}

// summary returns what the store holds for a scope over the last two hours.
func (h *intakeHarness) summary(s metrics.Scope) buckets.Summary {
	h.t.Helper()
	now := h.clock.Now()
	bs, err := h.metrics.ReadBuckets(context.Background(), s, now.Add(-3*time.Hour), now.Add(time.Hour))
	if err != nil {
		h.t.Fatal(err)
	}
	return buckets.Summarize(bs, now.Add(-3*time.Hour), now.Add(time.Hour))
}

func eventsBody(evs ...map[string]any) map[string]any { return map[string]any{"events": evs} }

func TestIntakeAccepts(t *testing.T) {
	h := newIntakeHarness(t, nil)
	now := h.clock.Now()
	res := h.post(testInternalKey, eventsBody(
		map[string]any{"account_id": "acct_a", "project_id": "proj_a1", "metric": "turn_latency", "value": 812.5, "at": now.Add(-time.Minute).Format(time.RFC3339Nano)},
		map[string]any{"account_id": "acct_a", "project_id": "proj_a1", "metric": "turn_latency", "value": 0},
		map[string]any{"account_id": "acct_a", "project_id": "proj_a2", "metric": "call_volume"}, // value defaults to 1
		map[string]any{"account_id": "acct_a", "project_id": nil, "metric": "api_errors", "value": 3},
		map[string]any{"account_id": "acct_a", "metric": "function_errors", "value": 0},
		map[string]any{"account_id": "acct_a", "project_id": "proj_a2", "metric": "call_crashes", "at": "2026-11-22T09:59:30+01:00"}, // 08:59:30 UTC
		map[string]any{"account_id": "acct_b", "metric": "activity", "value": "ignored"},
		map[string]any{"account_id": "acct_unknown_to_us", "project_id": "proj_x", "metric": "activity"},
	)).Expect(t, http.StatusAccepted)
	if m := res.JSON(t); m["accepted"] != 8.0 || len(m) != 1 {
		t.Errorf("body %s, want {\"accepted\": 8}", res.Body)
	}
	for _, tc := range []struct {
		scope metrics.Scope
		want  buckets.Counts
	}{
		{metrics.Scope{AccountID: "acct_a"}, buckets.NewCounts(map[metrics.Kind]int64{metrics.Activity: 6, metrics.TurnLatency: 2, metrics.APIErrors: 3, metrics.CallVolume: 1, metrics.CallCrashes: 1})},
		{metrics.Scope{AccountID: "acct_a", ProjectID: "proj_a1"}, buckets.NewCounts(map[metrics.Kind]int64{metrics.Activity: 2, metrics.TurnLatency: 2})},
		{metrics.Scope{AccountID: "acct_a", ProjectID: "proj_a2"}, buckets.NewCounts(map[metrics.Kind]int64{metrics.Activity: 2, metrics.CallVolume: 1, metrics.CallCrashes: 1})},
		{metrics.Scope{AccountID: "acct_b"}, buckets.NewCounts(map[metrics.Kind]int64{metrics.Activity: 1})},
		{metrics.Scope{AccountID: "acct_unknown_to_us", ProjectID: "proj_x"}, buckets.NewCounts(map[metrics.Kind]int64{metrics.Activity: 1})},
	} {
		if got := h.summary(tc.scope).Counts; got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.scope, got, tc.want)
		}
	}
	// Events land in the minute of their time: the default is now.
	bs, _ := h.metrics.ReadBuckets(context.Background(), metrics.Scope{AccountID: "acct_a", ProjectID: "proj_a2"}, now.Add(-2*time.Hour), now.Add(time.Minute))
	if len(bs) != 2 || !bs[0].Minute.Equal(time.Date(2026, 11, 22, 8, 59, 0, 0, time.UTC)) || !bs[1].Minute.Equal(metrics.Minute(now)) {
		t.Errorf("minutes of proj_a2: %+v", bs)
	}
	if p50, ok := h.summary(metrics.Scope{AccountID: "acct_a", ProjectID: "proj_a1"}).Value(voiceops.MetricTurnLatencyP95); !ok || p50 < 804 || p50 > 821 {
		t.Errorf("p95 of {0, 812.5} = %d, %v", p50, ok)
	}

	// An empty batch is accepted and records nothing.
	adds := h.metrics.adds
	res = h.post(testInternalKey, `{"events": []}`).Expect(t, http.StatusAccepted)
	if string(bytes.TrimSpace(res.Body)) != `{"accepted":0}` || h.metrics.adds != adds {
		t.Errorf("empty batch: %s, %d writes", res.Body, h.metrics.adds-adds)
	}
}

func TestIntakeBatchLimit(t *testing.T) {
	h := newIntakeHarness(t, nil)
	ev := map[string]any{"account_id": "acct_a", "project_id": "proj_a1", "metric": "call_volume"}
	batch := make([]map[string]any, metrics.MaxBatch)
	for i := range batch {
		batch[i] = ev
	}
	res := h.post(testInternalKey, eventsBody(batch...)).Expect(t, http.StatusAccepted)
	if res.JSON(t)["accepted"] != float64(metrics.MaxBatch) || h.metrics.adds != 1 {
		t.Errorf("1000 events: %s in %d writes", res.Body, h.metrics.adds)
	}
	if got := h.summary(metrics.Scope{AccountID: "acct_a", ProjectID: "proj_a1"}).Counts.Of(metrics.CallVolume); got != metrics.MaxBatch {
		t.Errorf("call_volume %d", got)
	}
	res = h.post(testInternalKey, eventsBody(append(batch, ev)...)).Expect(t, http.StatusUnprocessableEntity)
	if got := res.FieldErrors(t); !slices.Equal(got, []string{"events"}) {
		t.Errorf("1001 events: fields %v", got)
	}
	if h.metrics.adds != 1 {
		t.Errorf("a refused batch was written")
	}
}

func TestIntakeInternalKey(t *testing.T) {
	h := newIntakeHarness(t, nil)
	body := eventsBody(map[string]any{"account_id": "acct_a", "metric": "activity"})
	for name, key := range map[string]string{
		"missing":          "",
		"wrong":            "vo_internal_us_not-the-key",
		"an account key":   h.keyA,
		"almost the key":   testInternalKey + " ",
		"the key's digest": keys.Digest(testInternalKey),
	} {
		t.Run(name, func(t *testing.T) {
			h.post(key, body).Expect(t, http.StatusUnauthorized)
		})
	}
	if h.metrics.adds != 0 {
		t.Errorf("unauthorized requests recorded %d times", h.metrics.adds)
	}
	// Without a configured key, nothing gets in.
	for _, digest := range []string{"", "not hex", "abcd"} {
		srv := Intake(Deps{Metrics: &buckets.Recorder{Store: memory.NewMetrics()}, InternalKeyDigest: digest, Log: suiteLogger()})
		req := httptest.NewRequest("POST", "/internal/v1/metric-events", strings.NewReader(`{"events":[]}`))
		req.Header.Set("X-Internal-Key", testInternalKey)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("digest %q: %d, want 401", digest, rec.Code)
		}
	}
}

// TestIntakeHandler: the intake function serves the intake route only.
func TestIntakeHandler(t *testing.T) {
	mem := memory.NewMetrics()
	h := Intake(Deps{Metrics: &buckets.Recorder{Store: mem}, InternalKeyDigest: keys.Digest(testInternalKey),
		Log: suiteLogger()})
	do := func(method, path, body string) int {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("X-Internal-Key", testInternalKey)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if st := do("POST", "/internal/v1/metric-events", `{"events":[{"account_id":"acct_a","metric":"activity"}]}`); st != 202 {
		t.Errorf("intake: %d", st)
	}
	if st := do("GET", "/internal/v1/metric-events", ""); st != 405 {
		t.Errorf("GET intake: %d, want 405", st)
	}
	if st := do("GET", "/v1/alert-rules", ""); st != 404 {
		t.Errorf("alert rules on the intake function: %d, want 404", st)
	}
	// Without a store the intake cannot acknowledge anything.
	h = Intake(Deps{InternalKeyDigest: keys.Digest(testInternalKey), Log: suiteLogger()})
	if st := do("POST", "/internal/v1/metric-events", `{"events":[]}`); st != 500 {
		t.Errorf("no store: %d, want 500", st)
	}
}

func TestIntakeValidation(t *testing.T) {
	h := newIntakeHarness(t, nil)
	now := h.clock.Now()
	valid := map[string]any{"account_id": "acct_a", "project_id": "proj_a1", "metric": "turn_latency", "value": 100}
	ev := func(kv ...any) map[string]any { return with(valid, kv...) }
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }
	for _, tc := range []struct {
		name   string
		body   any
		status int
		fields []string
	}{
		{"no events", map[string]any{}, 422, []string{"events"}},
		{"events null", `{"events": null}`, 422, []string{"events"}},
		{"events an object", `{"events": {}}`, 422, []string{"events"}},
		{"an unknown top-level field", map[string]any{"events": []any{}, "source": "x"}, 422, []string{"source"}},
		{"an event not an object", `{"events": [1]}`, 422, []string{"events[0]"}},
		{"an event null", `{"events": [null]}`, 422, []string{"events[0]"}},
		{"no account", eventsBody(valid, ev("account_id", deleteField)), 422, []string{"events[1].account_id"}},
		{"account null", eventsBody(ev("account_id", nil)), 422, []string{"events[0].account_id"}},
		{"account not a string", eventsBody(ev("account_id", 5)), 422, []string{"events[0].account_id"}},
		{"account malformed", eventsBody(ev("account_id", "acct/a")), 422, []string{"events[0].account_id"}},
		{"account empty", eventsBody(ev("account_id", "")), 422, []string{"events[0].account_id"}},
		{"project malformed", eventsBody(ev("project_id", "proj a1")), 422, []string{"events[0].project_id"}},
		{"project too long", eventsBody(ev("project_id", strings.Repeat("p", 65))), 422, []string{"events[0].project_id"}},
		{"project not a string", eventsBody(ev("project_id", true)), 422, []string{"events[0].project_id"}},
		{"no metric", eventsBody(ev("metric", deleteField)), 422, []string{"events[0].metric"}},
		{"an unknown metric", eventsBody(ev("metric", "turn_latency_p95")), 422, []string{"events[0].metric"}},
		{"latency without value", eventsBody(ev("value", deleteField)), 422, []string{"events[0].value"}},
		{"latency null", eventsBody(ev("value", nil)), 422, []string{"events[0].value"}},
		{"latency negative", eventsBody(ev("value", -1)), 422, []string{"events[0].value"}},
		{"latency a string", eventsBody(ev("value", "100")), 422, []string{"events[0].value"}},
		{"latency too high", eventsBody(ev("value", 86_400_001)), 422, []string{"events[0].value"}},
		{"latency huge", `{"events": [{"account_id": "acct_a", "metric": "turn_latency", "value": 1e400}]}`, 422, []string{"events[0].value"}},
		{"count fractional", eventsBody(ev("metric", "api_errors", "value", 1.5)), 422, []string{"events[0].value"}},
		{"count as float", `{"events": [{"account_id": "acct_a", "metric": "call_volume", "value": 2.0}]}`, 422, []string{"events[0].value"}},
		{"count negative", eventsBody(ev("metric", "call_volume", "value", -1)), 422, []string{"events[0].value"}},
		{"count a string", eventsBody(ev("metric", "call_crashes", "value", "2")), 422, []string{"events[0].value"}},
		{"count null", eventsBody(ev("metric", "function_errors", "value", nil)), 422, []string{"events[0].value"}},
		{"count too high", eventsBody(ev("metric", "call_volume", "value", int64(1)<<31)), 422, []string{"events[0].value"}},
		{"at not a time", eventsBody(ev("at", "yesterday")), 422, []string{"events[0].at"}},
		{"at without zone", eventsBody(ev("at", "2026-11-22T09:59:00")), 422, []string{"events[0].at"}},
		{"at a number", eventsBody(ev("at", 1795341600)), 422, []string{"events[0].at"}},
		{"at too old", eventsBody(ev("at", at(-2*time.Hour-time.Millisecond))), 422, []string{"events[0].at"}},
		{"at too far ahead", eventsBody(ev("at", at(time.Minute+time.Millisecond))), 422, []string{"events[0].at"}},
		{"an unknown event field", eventsBody(ev("region", "us")), 422, []string{"events[0].region"}},
		{"every problem of every event", eventsBody(valid, map[string]any{"metric": "cpu", "value": "x", "extra": 1}, ev("at", "x", "value", -5)), 422,
			[]string{"events[1].account_id", "events[1].metric", "events[1].extra", "events[2].value", "events[2].at"}},
		{"not JSON", `{"events": [`, 400, []string{}},
		{"an array", `[]`, 400, []string{}},
		{"trailing data", `{"events": []} {}`, 400, []string{}},
		{"too large", `{"events": [], "pad": "` + strings.Repeat("x", httpapi.MaxBodyBytes) + `"}`, 413, nil},

		{"at exactly 2 hours old", eventsBody(ev("at", at(-2*time.Hour))), 202, nil},
		{"at 1 minute ahead", eventsBody(ev("at", at(time.Minute))), 202, nil},
		{"at without fraction", eventsBody(ev("at", "2026-11-22T09:30:00Z")), 202, nil},
		{"latency max", eventsBody(ev("value", 86_400_000)), 202, nil},
		{"latency fractional", eventsBody(ev("value", 0.25)), 202, nil},
		{"count 0", eventsBody(ev("metric", "call_volume", "value", 0)), 202, nil},
		{"activity with any value", eventsBody(ev("metric", "activity", "value", map[string]any{"a": 1})), 202, nil},
		{"activity without value", eventsBody(ev("metric", "activity", "value", deleteField)), 202, nil},
		{"project null", eventsBody(ev("project_id", nil)), 202, nil},
		{"no project", eventsBody(ev("project_id", deleteField)), 202, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adds := h.metrics.adds
			res := h.post(testInternalKey, tc.body).Expect(t, tc.status)
			if tc.status >= 400 {
				if h.metrics.adds != adds {
					t.Errorf("a refused batch was written")
				}
				if got := res.FieldErrors(t); tc.fields != nil && !slices.Equal(got, tc.fields) && !(len(got) == 0 && len(tc.fields) == 0) {
					t.Errorf("fields %v, want %v: %s", got, tc.fields, res.Body)
				}
			}
		})
	}
}

func TestIntakeStoreFailureIs500(t *testing.T) {
	h := newIntakeHarness(t, nil)
	h.metrics.fail = errors.New("ProvisionedThroughputExceededException: table voiceops-us-metrics")
	res := h.post(testInternalKey, eventsBody(map[string]any{"account_id": "acct_a", "metric": "activity"})).Expect(t, 500)
	if m := res.JSON(t); m["message"] != "internal error" || strings.Contains(string(res.Body), "voiceops-us") {
		t.Errorf("body %s", res.Body)
	}
	if !strings.Contains(h.logs.String(), "voiceops-us-metrics") || !strings.Contains(h.logs.String(), res.Header.Get("X-Request-Id")) {
		t.Errorf("the cause is not logged with the request ID: %s", h.logs)
	}
}

// panickingRules panics on every list.
type panickingRules struct{ voiceops.RuleStore }

func (panickingRules) ListRules(context.Context, string) ([]voiceops.AlertRule, error) {
	panic("a bug")
}

// TestAPIErrorsAreRecorded: a studio-host request answered 5xx for an
// authenticated account records one api_errors event for that account;
// other answers record nothing; a failing metric store never changes the
// response.
func TestAPIErrorsAreRecorded(t *testing.T) {
	h := newIntakeHarness(t, func(s voiceops.Stores) voiceops.Stores {
		s.Rules = failingRules{s.Rules}
		return s
	})
	acctA := metrics.Scope{AccountID: "acct_a"}
	apiErrors := func() int64 {
		v, _ := h.summary(acctA).Value(voiceops.MetricAPIErrors)
		return v
	}
	h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 500)
	h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Expect(t, 500)
	if got := apiErrors(); got != 2 {
		t.Errorf("api_errors after two 500s: %d, want 2", got)
	}
	if bs, _ := h.metrics.ReadBuckets(context.Background(), metrics.Scope{AccountID: "acct_b"}, h.clock.Now().Add(-time.Hour), h.clock.Now().Add(time.Hour)); len(bs) != 0 {
		t.Errorf("another account got api_errors: %+v", bs)
	}

	// 4xx and 2xx are not API errors; nor is a request without a valid key.
	adds := h.metrics.adds
	h.do("GET", "/v1/alert-rules/ar_x1", h.keyA, nil).Expect(t, 500) // GetRule fails too
	h.do("GET", "/v1/webhook-endpoints/whe_nope", h.keyA, nil).Expect(t, 404)
	h.do("GET", "/v1/alert-rules", h.projKey, nil).Expect(t, 403)
	h.do("GET", "/v1/alert-rules", "", nil).Expect(t, 401)
	h.do("GET", "/v1/webhook-endpoints", h.keyA, nil).Expect(t, 200)
	if h.metrics.adds != adds+1 || apiErrors() != 3 {
		t.Errorf("%d writes, api_errors %d; want 1 more write (the 500) and 3", h.metrics.adds-adds, apiErrors())
	}

	// A store that cannot record: the 500 is the same, the failure logged.
	h.metrics.fail = errors.New("metrics table down")
	res := h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 500)
	if m := res.JSON(t); m["message"] != "internal error" {
		t.Errorf("body %s", res.Body)
	}
	if !strings.Contains(h.logs.String(), "recording api_errors failed") || !strings.Contains(h.logs.String(), "metrics table down") {
		t.Errorf("the recording failure is not logged: %s", h.logs)
	}
}

func TestAPIErrorsOfPanics(t *testing.T) {
	h := newIntakeHarness(t, func(s voiceops.Stores) voiceops.Stores {
		s.Rules = panickingRules{s.Rules}
		return s
	})
	h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 500)
	if v, ok := h.summary(metrics.Scope{AccountID: "acct_a"}).Value(voiceops.MetricAPIErrors); !ok || v != 1 {
		t.Errorf("api_errors after a panic: %d, %v; want 1", v, ok)
	}
}

// TestAPIErrorsWithoutRecorder: no Deps.Metrics, nothing recorded, no panic.
func TestAPIErrorsWithoutRecorder(t *testing.T) {
	h := newHarnessWith(t, func(s voiceops.Stores) voiceops.Stores {
		s.Rules = failingRules{s.Rules}
		return s
	})
	h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 500)
}

func ExampleIntake() {
	digest := keys.Digest("the-internal-key")
	h := Intake(Deps{Metrics: &buckets.Recorder{Store: memory.NewMetrics()}, InternalKeyDigest: digest,
		Log: suiteLogger()})
	req := httptest.NewRequest("POST", "/internal/v1/metric-events", strings.NewReader(
		`{"events": [{"account_id": "acct_demo1", "project_id": "proj_demo1a", "metric": "turn_latency", "value": 840}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Internal-Key", "the-internal-key")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	fmt.Println(rec.Code, strings.TrimSpace(rec.Body.String()))
	// Output: 202 {"accepted":1}
}
