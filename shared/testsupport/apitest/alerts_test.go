package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestCreateRuleReturnsTheNewRecord(t *testing.T) {
	h := newHarness(t)
	got := h.do("POST", "/v1/alert-rules", h.keyA, with(validRule(), "project_id", "proj_a1")).Expect(t, 201).JSON(t)
	if res := h.do("GET", "/v1/alert-rules", h.keyA, nil); !strings.Contains(string(res.Body), `"operator":">"`) {
		t.Errorf("operator is escaped: %s", res.Body)
	}
	id, _ := got["id"].(string)
	if !voiceops.ValidRuleID(id) {
		t.Errorf("id %q does not match ^ar_[A-Za-z0-9]+$", id)
	}
	want := map[string]any{
		"name": "p95 too slow", "project_id": "proj_a1", "metric": "turn_latency_p95", "operator": ">",
		"threshold_value": float64(1500), "window_duration": "5m", "enabled": true, "current_state": "ok",
		"created_at": "2026-11-22T10:00:00.000Z", "updated_at": "2026-11-22T10:00:00.000Z",
		"since": "2026-11-22T10:00:00.000Z", "last_evaluated_at": nil, "current_value": nil,
	}
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	// Account-wide by default, and enabled may be set on create.
	got = h.do("POST", "/v1/alert-rules", h.keyA, with(validRule(), "enabled", false)).Expect(t, 201).JSON(t)
	if got["project_id"] != nil || got["enabled"] != false {
		t.Errorf("project_id %v enabled %v, want null and false", got["project_id"], got["enabled"])
	}
	// The stored rule is what GET returns.
	again := h.do("GET", "/v1/alert-rules/"+got["id"].(string), h.keyA, nil).Expect(t, 200).JSON(t)
	if !reflect.DeepEqual(again, got) {
		t.Errorf("GET = %v, want %v", again, got)
	}
}

func TestAuthentication(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	revoked, k, err := h.prov.CreateKey(ctx, voiceops.KeyAPI, "acct_a", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.prov.RevokeKey(ctx, "acct_a", k.ID); err != nil {
		t.Fatal(err)
	}
	ukKey := keys.New(voiceops.KeyAPI, voiceops.RegionUK)
	cases := []struct {
		name   string
		key    string
		status int
	}{
		{"missing", "", 401},
		{"garbage", "hello", 401},
		{"mistyped", mistype(h.keyA), 401},
		{"unknown but well-formed", keys.New(voiceops.KeyAPI, voiceops.RegionUS), 401},
		{"other region", ukKey, 401},
		{"wrong kind (agent token)", h.agent, 401},
		{"revoked", revoked, 401},
		{"project-scoped", h.projKey, 403},
		{"account-scoped", h.keyA, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := h.do("GET", "/v1/alert-rules", c.key, nil).Expect(t, c.status)
			if c.status != 200 {
				body := res.JSON(t)
				if _, ok := body["errors"]; ok {
					t.Errorf("errors present on %d: %s", c.status, res.Body)
				}
				if body["message"] == "" || body["request_id"] != res.Header.Get("X-Request-Id") {
					t.Errorf("body %s lacks message or the request ID", res.Body)
				}
			}
		})
	}
}

func TestCreateRuleValidation(t *testing.T) {
	h := newHarness(t)
	long := strings.Repeat("x", 256)
	cases := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"missing everything", map[string]any{}, []string{"name", "metric", "operator", "threshold_value", "window_duration"}},
		{"threshold 1.5", with(validRule(), "threshold_value", 1.5), []string{"threshold_value"}},
		{"threshold string", with(validRule(), "threshold_value", "5"), []string{"threshold_value"}},
		{"threshold negative", with(validRule(), "threshold_value", -1), []string{"threshold_value"}},
		{"threshold 2^31", with(validRule(), "threshold_value", int64(1)<<31), []string{"threshold_value"}},
		{"threshold null", with(validRule(), "threshold_value", nil), []string{"threshold_value"}},
		{"name empty", with(validRule(), "name", ""), []string{"name"}},
		{"name 256", with(validRule(), "name", long), []string{"name"}},
		{"name control", with(validRule(), "name", "a\tb"), []string{"name"}},
		{"name number", with(validRule(), "name", 5), []string{"name"}},
		{"name null", with(validRule(), "name", nil), []string{"name"}},
		{"metric", with(validRule(), "metric", "cpu"), []string{"metric"}},
		{"operator", with(validRule(), "operator", "=="), []string{"operator"}},
		{"window", with(validRule(), "window_duration", "15m"), []string{"window_duration"}},
		{"enabled string", with(validRule(), "enabled", "yes"), []string{"enabled"}},
		{"enabled null", with(validRule(), "enabled", nil), []string{"enabled"}},
		{"unknown field", with(validRule(), "severity", "high"), []string{"severity"}},
		{"server field", with(validRule(), "current_state", "alert"), []string{"current_state"}},
		{"unknown project", with(validRule(), "project_id", "proj_zz"), []string{"project_id"}},
		{"other account's project", with(validRule(), "project_id", "proj_b1"), []string{"project_id"}},
		{"project number", with(validRule(), "project_id", 7), []string{"project_id"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := h.do("POST", "/v1/alert-rules", h.keyA, c.body).Expect(t, 422)
			if got := res.FieldErrors(t); !slices.Equal(got, c.fields) {
				t.Errorf("error fields %v, want %v (%s)", got, c.fields, res.Body)
			}
		})
	}
	t.Run("exponent and fraction literals", func(t *testing.T) {
		for _, lit := range []string{"1e3", "5.0", "-0.5", "01x"} {
			body := `{"name":"n","metric":"api_errors","operator":">","window_duration":"5m","threshold_value":` + lit + `}`
			res := h.do("POST", "/v1/alert-rules", h.keyA, body)
			if lit == "01x" {
				res.Expect(t, 400) // not JSON at all
				continue
			}
			res.Expect(t, 422)
		}
	})
	if n := len(h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any)); n != 0 {
		t.Errorf("invalid creates stored %d rules", n)
	}
}

func TestUnreadableBodiesAre400(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name, body, contentType string
		status                  int
	}{
		{"not JSON", `{"name":`, "application/json", 400},
		{"array", `[1,2]`, "application/json", 400},
		{"string", `"x"`, "application/json", 400},
		{"null", `null`, "application/json", 400},
		{"trailing data", `{"name":"x"} {}`, "application/json", 400},
		{"empty", ``, "application/json", 400},
		{"wrong content type", `{"name":"x"}`, "text/plain", 400},
		{"no content type", `{"name":"x"}`, "", 400},
		{"too large", `{"name":"` + strings.Repeat("x", httpapi.MaxBodyBytes) + `"}`, "application/json", 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := h.doWith("POST", "/v1/alert-rules", h.keyA, c.body, c.contentType).Expect(t, c.status)
			body := res.JSON(t)
			if _, has := body["errors"]; has != (c.status == 400) {
				t.Errorf("errors present = %v on %d: %s", has, c.status, res.Body)
			}
		})
	}
	// Charset parameters are fine.
	h.doWith("POST", "/v1/alert-rules", h.keyA, validRule(), "application/json; charset=utf-8").Expect(t, 201)
}

func TestRuleLimit(t *testing.T) {
	h := newHarness(t)
	for i := 0; i < voiceops.MaxRulesPerAccount; i++ {
		h.do("POST", "/v1/alert-rules", h.keyA, with(validRule(), "name", fmt.Sprint("r", i))).Expect(t, 201)
	}
	res := h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Expect(t, 409)
	if _, ok := res.JSON(t)["errors"]; ok {
		t.Errorf("409 carries errors: %s", res.Body)
	}
	// Another account is not affected.
	h.do("POST", "/v1/alert-rules", h.keyB, validRule()).Expect(t, 201)
	// Deleting frees a place.
	id := h.do("GET", "/v1/alert-rules", h.keyA, nil).JSON(t)["data"].([]any)[0].(map[string]any)["id"].(string)
	h.do("DELETE", "/v1/alert-rules/"+id, h.keyA, nil).Expect(t, 204)
	h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Expect(t, 201)
}

func TestRuleLimitUnderConcurrency(t *testing.T) {
	h := newHarness(t)
	// 59 requests at one instant: past the default burst of the rate limit,
	// which this test is not about; the operator's override lifts it.
	if err := h.requests.SetAccountLimit(context.Background(), "acct_a", &ratelimit.Limit{Rate: 100, Burst: 100}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < voiceops.MaxRulesPerAccount-1; i++ {
		h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Expect(t, 201)
	}
	var wg sync.WaitGroup
	statuses := make([]int, 50) // CONTRIBUTING.md, testing notes: 50 concurrent creates at 9 rules
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Status
		}()
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		switch s {
		case 201:
			created++
		case 409:
		default:
			t.Errorf("unexpected status %d", s)
		}
	}
	if created != 1 {
		t.Errorf("%d concurrent creates succeeded, want exactly 1", created)
	}
}

func TestGetRule(t *testing.T) {
	h := newHarness(t)
	id := h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Expect(t, 201).JSON(t)["id"].(string)
	h.do("GET", "/v1/alert-rules/"+id, h.keyA, nil).Expect(t, 200)
	// Another account's rule is 404, never 403.
	h.do("GET", "/v1/alert-rules/"+id, h.keyB, nil).Expect(t, 404)
	h.do("GET", "/v1/alert-rules/ar_doesNotExist1", h.keyA, nil).Expect(t, 404)
	h.do("GET", "/v1/alert-rules/ar_"+strings.Repeat("a", 200), h.keyA, nil).Expect(t, 404)
	for _, bad := range []string{"nope", "ar_", "ar_abc-def", "whe_abc", "AR_abc"} {
		res := h.do("GET", "/v1/alert-rules/"+bad, h.keyA, nil).Expect(t, 422)
		if got := res.FieldErrors(t); !slices.Equal(got, []string{"rule_id"}) {
			t.Errorf("%s: fields %v", bad, got)
		}
	}
}

func TestListRuleFilters(t *testing.T) {
	h := newHarness(t)
	mk := func(body map[string]any) string {
		h.clock.Advance(time.Second)
		return h.do("POST", "/v1/alert-rules", h.keyA, body).Expect(t, 201).JSON(t)["id"].(string)
	}
	r1 := mk(with(validRule(), "project_id", "proj_a1"))
	r2 := mk(with(validRule(), "metric", "api_errors", "enabled", false))
	r3 := mk(with(validRule(), "metric", "call_volume", "project_id", "proj_a2"))
	h.do("POST", "/v1/alert-rules", h.keyB, validRule()).Expect(t, 201)
	h.setState(r3, voiceops.StateAlert, 12)
	ids := func(query string) []string {
		var out []string
		for _, r := range h.do("GET", "/v1/alert-rules"+query, h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any) {
			out = append(out, r.(map[string]any)["id"].(string))
		}
		return out
	}
	cases := map[string][]string{
		"":                       {r1, r2, r3},
		"?enabled=true":          {r1, r3},
		"?enabled=false":         {r2},
		"?metric=api_errors":     {r2},
		"?project_id=proj_a1":    {r1},
		"?project_id=proj_b1":    nil,
		"?state=alert":           {r3},
		"?state=ok":              {r1, r2},
		"?state=ok&enabled=true": {r1},
		"?unrelated=1":           {r1, r2, r3},
	}
	for q, want := range cases {
		if got := ids(q); !slices.Equal(got, want) {
			t.Errorf("GET /v1/alert-rules%s = %v, want %v", q, got, want)
		}
	}
	for q, field := range map[string]string{"?metric=cpu": "metric", "?enabled=maybe": "enabled", "?state=firing": "state", "?project_id=": "project_id"} {
		res := h.do("GET", "/v1/alert-rules"+q, h.keyA, nil).Expect(t, 400)
		if got := res.FieldErrors(t); !slices.Equal(got, []string{field}) {
			t.Errorf("%s: fields %v, want [%s]", q, got, field)
		}
	}
}

// setState moves a rule as the evaluator would.
func (h *harness) setState(id string, st voiceops.State, value int64) {
	h.t.Helper()
	ctx := context.Background()
	for _, acct := range []string{"acct_a", "acct_b"} {
		r, err := h.stores.Rules.GetRule(ctx, acct, id)
		if err != nil {
			continue
		}
		now := h.clock.Now()
		r.State, r.Since, r.LastEvaluatedAt, r.CurrentValue = st, &now, &now, &value
		r.Version++
		if err := h.stores.Rules.UpdateRule(ctx, r, r.Version-1, false); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	h.t.Fatalf("no rule %s", id)
}

func TestActiveAlerts(t *testing.T) {
	h := newHarness(t)
	a1 := h.do("POST", "/v1/alert-rules", h.keyA, with(validRule(), "project_id", "proj_a1")).Expect(t, 201).JSON(t)["id"].(string)
	h.clock.Advance(time.Second)
	a2 := h.do("POST", "/v1/alert-rules", h.keyA, with(validRule(), "metric", "call_crashes")).Expect(t, 201).JSON(t)["id"].(string)
	h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Expect(t, 201)
	h.clock.Advance(time.Minute)
	h.setState(a1, voiceops.StateAlert, 1800)
	h.setState(a2, voiceops.StateAlert, 3)
	got := h.do("GET", "/v1/alerts", h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any)
	if len(got) != 2 {
		t.Fatalf("%d active alerts, want 2", len(got))
	}
	first := got[0].(map[string]any)
	want := map[string]any{
		"alert_rule_id": a1, "name": "p95 too slow", "metric": "turn_latency_p95", "operator": ">",
		"threshold_value": float64(1500), "window_duration": "5m", "since": "2026-11-22T10:01:01.000Z",
		"project_id": "proj_a1", "last_evaluated_at": "2026-11-22T10:01:01.000Z", "current_value": float64(1800),
	}
	if !reflect.DeepEqual(first, want) {
		t.Errorf("active alert = %v, want %v", first, want)
	}
	if n := len(h.do("GET", "/v1/alerts?metric=call_crashes", h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any)); n != 1 {
		t.Errorf("metric filter: %d alerts, want 1", n)
	}
	if n := len(h.do("GET", "/v1/alerts?project_id=proj_a1", h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any)); n != 1 {
		t.Errorf("project filter: %d alerts, want 1", n)
	}
	if n := len(h.do("GET", "/v1/alerts", h.keyB, nil).Expect(t, 200).JSON(t)["data"].([]any)); n != 0 {
		t.Errorf("account B sees %d of A's alerts", n)
	}
	h.do("GET", "/v1/alerts?metric=cpu", h.keyA, nil).Expect(t, 400)
}

func TestPatchRule(t *testing.T) {
	h := newHarness(t)
	created := h.do("POST", "/v1/alert-rules", h.keyA, with(validRule(), "project_id", "proj_a1")).Expect(t, 201).JSON(t)
	id := created["id"].(string)
	path := "/v1/alert-rules/" + id
	h.clock.Advance(time.Minute)

	// {} changes nothing, not even updated_at.
	if got := h.do("PATCH", path, h.keyA, map[string]any{}).Expect(t, 200).JSON(t); !reflect.DeepEqual(got, created) {
		t.Errorf("PATCH {} = %v, want %v", got, created)
	}
	got := h.do("PATCH", path, h.keyA, map[string]any{"name": "renamed", "threshold_value": 2000, "project_id": nil}).Expect(t, 200).JSON(t)
	if got["name"] != "renamed" || got["threshold_value"] != float64(2000) || got["project_id"] != nil ||
		got["updated_at"] != "2026-11-22T10:01:00.000Z" || got["metric"] != "turn_latency_p95" || got["created_at"] != created["created_at"] {
		t.Errorf("PATCH result %v", got)
	}
	if again := h.do("GET", path, h.keyA, nil).Expect(t, 200).JSON(t); !reflect.DeepEqual(again, got) {
		t.Errorf("GET after PATCH = %v, want %v", again, got)
	}
	// Moving to another project checks it exists in this account.
	h.do("PATCH", path, h.keyA, map[string]any{"project_id": "proj_a2"}).Expect(t, 200)
	for name, body := range map[string]map[string]any{
		"unknown project":   {"project_id": "proj_zz"},
		"other's project":   {"project_id": "proj_b1"},
		"null name":         {"name": nil},
		"null metric":       {"metric": nil},
		"float threshold":   {"threshold_value": 2.5},
		"bad window":        {"window_duration": "1h"},
		"unknown field":     {"nickname": "x"},
		"read-only field":   {"id": "ar_x"},
		"null enabled":      {"enabled": nil},
		"negative treshold": {"threshold_value": -3},
	} {
		t.Run(name, func(t *testing.T) {
			h.do("PATCH", path, h.keyA, body).Expect(t, 422)
		})
	}
	if after := h.do("GET", path, h.keyA, nil).Expect(t, 200).JSON(t); after["project_id"] != "proj_a2" || after["name"] != "renamed" {
		t.Errorf("invalid PATCHes changed the rule: %v", after)
	}
	// Disabling sets the state to unknown, since now.
	h.clock.Advance(time.Minute)
	got = h.do("PATCH", path, h.keyA, map[string]any{"enabled": false}).Expect(t, 200).JSON(t)
	if got["enabled"] != false || got["current_state"] != "unknown" || got["since"] != "2026-11-22T10:02:00.000Z" {
		t.Errorf("disabled rule: %v", got)
	}
	h.do("PATCH", path, h.keyB, map[string]any{"name": "stolen"}).Expect(t, 404)
	h.do("PATCH", "/v1/alert-rules/bad-id", h.keyA, map[string]any{}).Expect(t, 422)
	h.do("PATCH", "/v1/alert-rules/ar_missing", h.keyA, map[string]any{"name": "x"}).Expect(t, 404)
	h.doWith("PATCH", path, h.keyA, `{"name":"x"`, "application/json").Expect(t, 400)
}

func TestDeleteRule(t *testing.T) {
	h := newHarness(t)
	id := h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Expect(t, 201).JSON(t)["id"].(string)
	h.do("DELETE", "/v1/alert-rules/"+id, h.keyB, nil).Expect(t, 404)
	res := h.do("DELETE", "/v1/alert-rules/"+id, h.keyA, nil).Expect(t, 204)
	if len(res.Body) != 0 {
		t.Errorf("204 with body %q", res.Body)
	}
	h.do("GET", "/v1/alert-rules/"+id, h.keyA, nil).Expect(t, 404)
	h.do("DELETE", "/v1/alert-rules/"+id, h.keyA, nil).Expect(t, 404)
	h.do("DELETE", "/v1/alert-rules/x", h.keyA, nil).Expect(t, 422)
}

func TestUnknownRoutesAnswerJSON(t *testing.T) {
	h := newHarness(t)
	h.check = false // not in the document, by definition
	res := h.do("GET", "/nope", h.keyA, nil).Expect(t, 404)
	if res.JSON(t)["message"] == "" {
		t.Errorf("404 body %s", res.Body)
	}
	res = h.do("PUT", "/v1/alert-rules", h.keyA, validRule()).Expect(t, http.StatusMethodNotAllowed)
	if res.Header.Get("Allow") == "" || res.JSON(t)["message"] == "" {
		t.Errorf("405 without Allow or message: %v %s", res.Header, res.Body)
	}
}

func TestDisablingOrDeletingAFiringRuleResolvesIt(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	mk := func() string {
		return h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Expect(t, 201).JSON(t)["id"].(string)
	}
	firing, quiet, doomed := mk(), mk(), mk()
	h.setState(firing, voiceops.StateAlert, 2000)
	h.setState(doomed, voiceops.StateAlert, 2000)
	h.clock.Advance(time.Minute)

	h.do("PATCH", "/v1/alert-rules/"+quiet, h.keyA, map[string]any{"enabled": false}).Expect(t, 200)
	h.do("DELETE", "/v1/alert-rules/"+quiet, h.keyA, nil).Expect(t, 204)
	if len(h.fanned) != 0 {
		t.Fatalf("a rule that was not firing sent %d events", len(h.fanned))
	}
	h.do("PATCH", "/v1/alert-rules/"+firing, h.keyA, map[string]any{"enabled": false}).Expect(t, 200)
	h.do("DELETE", "/v1/alert-rules/"+doomed, h.keyA, nil).Expect(t, 204)
	if len(h.fanned) != 2 {
		t.Fatalf("%d events, want 2 resolved", len(h.fanned))
	}
	for i, want := range []struct{ rule, state string }{{firing, "unknown"}, {doomed, "unknown"}} {
		e := h.fanned[i]
		var body struct {
			EventType string `json:"event_type"`
			Alert     struct {
				ID, PreviousState, CurrentState, ResolvedAt string
			} `json:"alert"`
		}
		if err := json.Unmarshal(e.Body, &body); err != nil {
			t.Fatal(err)
		}
		if e.Type != voiceops.EventResolved || e.RuleID != want.rule || body.EventType != "alerts.resolved" {
			t.Errorf("event %d: %+v %s", i, e, e.Body)
		}
		if !strings.Contains(string(e.Body), `"previous_state":"alert","current_state":"unknown"`) ||
			!strings.Contains(string(e.Body), `"resolved_at":"2026-11-22T10:01:00.000Z"`) {
			t.Errorf("event %d body: %s", i, e.Body)
		}
		// The event is stored with the change, so the repair pass has it
		// even if the fan-out had failed.
		if _, err := h.stores.Events.GetEvent(ctx, "acct_a", e.ID); err != nil {
			t.Errorf("event %d not stored: %v", i, err)
		}
	}
}

// mistype changes the key's last character to another one (a fixed
// replacement would leave the key as it is whenever it already ends so).
func mistype(key string) string {
	last := byte('x')
	if key[len(key)-1] == last {
		last = 'y'
	}
	return key[:len(key)-1] + string(last)
}
