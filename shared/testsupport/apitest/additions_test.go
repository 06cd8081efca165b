package apitest

import (
	"context"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/testsupport/apifixture"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Our additions: GET /v1/alert-rules/{id}/history, GET /v1/metrics, POST
// /v1/alert-rules/preview and the console's files. Every response is
// checked against the OpenAPI document by the harness.

// withSeries gives the harness a series reader on its own clock and
// returns the minute store behind it.
func withSeries(h *harness) *memory.Metrics {
	ms := memory.NewMetrics()
	ms.Now = h.clock.Now
	hs := memory.NewRollups()
	hs.Now = h.clock.Now
	h.deps.Series = &series.Reader{Minutes: ms, Hours: hs, Now: h.clock.Now}
	h.h = All(h.deps)
	return ms
}

// addErrors stores n API errors of acct_a/proj_a1 in the minute of at.
func addErrors(t *testing.T, ms *memory.Metrics, at time.Time, n int) {
	t.Helper()
	events := []metrics.Event{{AccountID: "acct_a", ProjectID: "proj_a1", Kind: metrics.Activity, At: at}}
	for range n {
		events = append(events, metrics.Count(metrics.APIErrors, "acct_a", "proj_a1", at))
	}
	if err := ms.AddBuckets(context.Background(), buckets.Aggregate(events)); err != nil {
		t.Fatal(err)
	}
}

func TestRuleHistory(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	id := h.do("POST", "/v1/alert-rules", h.keyA, validRule()).Expect(t, 201).JSON(t)["id"].(string)
	ep := h.do("POST", "/v1/webhook-endpoints", h.keyA, validEndpoint()).Expect(t, 201).JSON(t)["id"].(string)
	// The evaluator fires the rule (its write carries the change and the event).
	r, err := h.stores.Rules.GetRule(ctx, "acct_a", id)
	if err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Minute)
	fired, ev := r.Evaluated(voiceops.Outcome{Value: 2000}, h.clock.Now()) // p95 2000 ms > 1500
	if ev == nil {
		t.Fatal("no event")
	}
	if err := h.stores.Rules.UpdateRule(ctx, fired, r.Version, false, *ev); err != nil {
		t.Fatal(err)
	}
	if err := h.deps.Outbox.Fanout(ctx, *ev); err != nil {
		t.Fatal(err)
	}
	// Then the operator disables it: alert -> unknown, resolved.
	h.clock.Advance(time.Minute)
	h.do("PATCH", "/v1/alert-rules/"+id, h.keyA, map[string]any{"enabled": false}).Expect(t, 200)

	page := h.do("GET", "/v1/alert-rules/"+id+"/history", h.keyA, nil).Expect(t, 200).JSON(t)
	data := page["data"].([]any)
	if len(data) != 2 || page["cursor"] != nil {
		t.Fatalf("history = %v, want 2 changes and no cursor", page)
	}
	newest, oldest := data[0].(map[string]any), data[1].(map[string]any)
	if newest["from_state"] != "alert" || newest["to_state"] != "unknown" || newest["value"] != float64(2000) || newest["event_id"] == nil ||
		newest["at"] != "2026-11-22T10:02:00.000Z" {
		t.Errorf("newest change = %v", newest)
	}
	if oldest["from_state"] != "ok" || oldest["to_state"] != "alert" || oldest["event_id"] != ev.ID || oldest["at"] != "2026-11-22T10:01:00.000Z" {
		t.Errorf("oldest change = %v", oldest)
	}
	ds := oldest["deliveries"].([]any)
	if len(ds) != 1 || ds[0].(map[string]any)["endpoint_id"] != ep || ds[0].(map[string]any)["status"] != "pending" {
		t.Errorf("deliveries of the trigger = %v, want the one pending delivery to %s", ds, ep)
	}

	// Pages of one, chained by the cursor.
	first := h.do("GET", "/v1/alert-rules/"+id+"/history?limit=1", h.keyA, nil).Expect(t, 200).JSON(t)
	cursor, _ := first["cursor"].(string)
	if len(first["data"].([]any)) != 1 || cursor == "" {
		t.Fatalf("first page = %v", first)
	}
	second := h.do("GET", "/v1/alert-rules/"+id+"/history?limit=1&cursor="+url.QueryEscape(cursor), h.keyA, nil).Expect(t, 200).JSON(t)
	if d := second["data"].([]any); len(d) != 1 || d[0].(map[string]any)["to_state"] != "alert" || second["cursor"] != nil {
		t.Errorf("second page = %v", second)
	}

	for _, c := range []struct {
		name, path, key string
		status          int
		field           string
	}{
		{"limit 0", "/v1/alert-rules/" + id + "/history?limit=0", h.keyA, 400, "limit"},
		{"limit 101", "/v1/alert-rules/" + id + "/history?limit=101", h.keyA, 400, "limit"},
		{"bad cursor", "/v1/alert-rules/" + id + "/history?cursor=abc", h.keyA, 400, "cursor"},
		{"malformed ID", "/v1/alert-rules/nope/history", h.keyA, 422, "rule_id"},
		{"another account's rule", "/v1/alert-rules/" + id + "/history", h.keyB, 404, ""},
		{"project key", "/v1/alert-rules/" + id + "/history", h.projKey, 403, ""},
		{"no key", "/v1/alert-rules/" + id + "/history", "", 401, ""},
	} {
		res := h.do("GET", c.path, c.key, nil).Expect(t, c.status)
		if c.field != "" && !slices.Contains(res.FieldErrors(t), c.field) {
			t.Errorf("%s: errors %v, want one naming %s", c.name, res.FieldErrors(t), c.field)
		}
	}

	// The history is read beside the rule: once the rule is gone (or is
	// another account's), whatever history remains is not shown, and the
	// 404 is the one of a rule that never existed.
	unknown := h.do("GET", "/v1/alert-rules/ar_neverexisted/history", h.keyA, nil).Expect(t, 404)
	other := h.do("GET", "/v1/alert-rules/"+id+"/history", h.keyB, nil).Expect(t, 404)
	h.do("DELETE", "/v1/alert-rules/"+id, h.keyA, nil).Expect(t, 204)
	gone := h.do("GET", "/v1/alert-rules/"+id+"/history", h.keyA, nil).Expect(t, 404)
	withoutID := func(res apifixture.Response) map[string]any {
		m := res.JSON(t)
		delete(m, "request_id")
		return m
	}
	for name, res := range map[string]apifixture.Response{"another account's rule": other, "a deleted rule": gone} {
		if got, want := withoutID(res), withoutID(unknown); !reflect.DeepEqual(got, want) {
			t.Errorf("history of %s: body %v, want the unknown rule's %v", name, got, want)
		}
	}
}

func TestMetricSeries(t *testing.T) {
	h := newHarness(t)
	ms := withSeries(h)
	now := h.clock.Now() // 10:00
	addErrors(t, ms, now.Add(-30*time.Minute), 3)
	addErrors(t, ms, now.Add(-10*time.Minute), 2)
	q := func(v url.Values) string { return "/v1/metrics?" + v.Encode() }
	got := h.do("GET", q(url.Values{"metric": {"api_errors"}, "project_id": {"proj_a1"}, "from": {"2026-11-22T09:00:00Z"}, "to": {"2026-11-22T10:00:00Z"}, "step": {"1m"}}), h.keyA, nil).Expect(t, 200).JSON(t)
	data := got["data"].([]any)
	if len(data) != 60 || got["step"] != "1m" || got["project_id"] != "proj_a1" {
		t.Fatalf("series = %d points, step %v", len(data), got["step"])
	}
	for i, p := range data {
		v := p.(map[string]any)["value"]
		switch i {
		case 30:
			if v != float64(3) {
				t.Errorf("09:30 = %v, want 3", v)
			}
		case 50:
			if v != float64(2) {
				t.Errorf("09:50 = %v, want 2", v)
			}
		default:
			if v != nil {
				t.Errorf("minute %d = %v, want null (no data)", i, v)
			}
		}
	}
	// The account's series holds its projects' data; 15-minute steps sum them.
	acct := h.do("GET", q(url.Values{"metric": {"api_errors"}, "from": {"2026-11-22T09:00:00Z"}, "to": {"2026-11-22T10:00:00Z"}, "step": {"15m"}}), h.keyA, nil).Expect(t, 200).JSON(t)
	vals := []any{}
	for _, p := range acct["data"].([]any) {
		vals = append(vals, p.(map[string]any)["value"])
	}
	if want := []any{nil, nil, float64(3), float64(2)}; !slices.Equal(vals, want) || acct["project_id"] != nil {
		t.Errorf("account series in 15m steps = %v (project %v), want %v", vals, acct["project_id"], want)
	}
	// Defaults: the last 24 hours at the finest step that fits (1m).
	def := h.do("GET", q(url.Values{"metric": {"api_errors"}}), h.keyA, nil).Expect(t, 200).JSON(t)
	if def["step"] != "1m" || len(def["data"].([]any)) != 1440 || def["to"] != "2026-11-22T10:00:00.000Z" {
		t.Errorf("default series: step %v, %d points, to %v", def["step"], len(def["data"].([]any)), def["to"])
	}
	// to may be the step after now's (an hour ahead in hourly steps).
	ahead := h.do("GET", q(url.Values{"metric": {"api_errors"}, "to": {"2026-11-22T11:00:00Z"}, "step": {"1h"}}), h.keyA, nil).Expect(t, 200).JSON(t)
	if ahead["to"] != "2026-11-22T11:00:00.000Z" {
		t.Errorf("to an hour ahead: to %v", ahead["to"])
	}
	// A week: hourly.
	week := h.do("GET", q(url.Values{"metric": {"api_errors"}, "from": {"2026-11-15T10:00:00Z"}}), h.keyA, nil).Expect(t, 200).JSON(t)
	if week["step"] != "1h" || len(week["data"].([]any)) != 168 {
		t.Errorf("a week: step %v, %d points", week["step"], len(week["data"].([]any)))
	}

	for _, c := range []struct {
		name  string
		v     url.Values
		key   string
		code  int
		field string
	}{
		{"no metric", url.Values{}, h.keyA, 400, "metric"},
		{"unknown metric", url.Values{"metric": {"cpu"}}, h.keyA, 400, "metric"},
		{"bad step", url.Values{"metric": {"api_errors"}, "step": {"2m"}}, h.keyA, 400, "step"},
		{"bad from", url.Values{"metric": {"api_errors"}, "from": {"yesterday"}}, h.keyA, 400, "from"},
		{"backwards", url.Values{"metric": {"api_errors"}, "from": {"2026-11-22T11:00:00Z"}, "to": {"2026-11-22T10:00:00Z"}}, h.keyA, 400, "from"},
		{"past the roll-ups", url.Values{"metric": {"api_errors"}, "from": {"2026-10-01T00:00:00Z"}, "step": {"1d"}}, h.keyA, 400, "from"},
		{"minutes past their retention", url.Values{"metric": {"api_errors"}, "from": {"2026-11-19T00:00:00Z"}, "to": {"2026-11-19T01:00:00Z"}, "step": {"1m"}}, h.keyA, 400, "step"},
		{"too many points", url.Values{"metric": {"api_errors"}, "from": {"2026-11-21T00:00:00Z"}, "step": {"1m"}}, h.keyA, 400, "step"},
		{"unknown parameter", url.Values{"metric": {"api_errors"}, "scope": {"x"}}, h.keyA, 400, "scope"},
		{"to years ahead", url.Values{"metric": {"api_errors"}, "from": {"2026-10-24T00:00:00Z"}, "to": {"2030-11-22T10:00:00Z"}, "step": {"1d"}}, h.keyA, 400, "to"},
		{"to two steps ahead", url.Values{"metric": {"api_errors"}, "to": {"2026-11-22T12:00:00Z"}, "step": {"1h"}}, h.keyA, 400, "to"},
		{"another account's project", url.Values{"metric": {"api_errors"}, "project_id": {"proj_b1"}}, h.keyA, 404, ""},
		{"project key", url.Values{"metric": {"api_errors"}}, h.projKey, 403, ""},
	} {
		res := h.do("GET", q(c.v), c.key, nil)
		if res.Status != c.code {
			t.Errorf("%s: status %d, want %d: %s", c.name, res.Status, c.code, res.Body)
			continue
		}
		if c.field != "" && !slices.Contains(res.FieldErrors(t), c.field) {
			t.Errorf("%s: errors %v, want one naming %s", c.name, res.FieldErrors(t), c.field)
		}
	}
}

func TestRulePreview(t *testing.T) {
	h := newHarness(t)
	ms := withSeries(h)
	now := h.clock.Now()
	for i := 20; i < 25; i++ { // a burst of 2 errors a minute, 09:20 to 09:24
		addErrors(t, ms, now.Add(time.Duration(i-60)*time.Minute), 2)
	}
	addErrors(t, ms, now.Add(-5*time.Minute), 0) // activity only
	body := with(validRule(), "project_id", "proj_a1", "metric", "api_errors", "operator", ">=", "threshold_value", 6, "window_duration", "5m",
		"from", "2026-11-22T09:00:00Z", "to", "2026-11-22T10:00:00Z")
	got := h.do("POST", "/v1/alert-rules/preview", h.keyA, body).Expect(t, 200).JSON(t)
	data := got["data"].([]any)
	if len(data) != 60 {
		t.Fatalf("%d points, want 60", len(data))
	}
	states := map[string]int{}
	for _, p := range data {
		states[p.(map[string]any)["state"].(string)]++
	}
	trs := got["transitions"].([]any)
	var types []any
	for _, tr := range trs {
		types = append(types, tr.(map[string]any)["event_type"])
	}
	// no_data until the burst, ok, alert while 6+ errors are in the window,
	// ok, then no_data once the window is quiet, activity at 09:55.
	if states["alert"] == 0 || !slices.Contains(types, any("alerts.triggered")) || !slices.Contains(types, any("alerts.resolved")) {
		t.Errorf("preview states %v, transitions %v", states, trs)
	}
	// Nothing stored or sent.
	if rules := h.do("GET", "/v1/alert-rules", h.keyA, nil).Expect(t, 200).JSON(t)["data"].([]any); len(rules) != 0 {
		t.Errorf("the preview stored a rule: %v", rules)
	}
	h.fanMu.Lock()
	fanned := len(h.fanned)
	h.fanMu.Unlock()
	if fanned != 0 {
		t.Errorf("the preview sent %d events", fanned)
	}
	// A higher threshold never fires.
	quiet := h.do("POST", "/v1/alert-rules/preview", h.keyA, with(body, "threshold_value", 100)).Expect(t, 200).JSON(t)
	for _, tr := range quiet["transitions"].([]any) {
		if tr.(map[string]any)["to_state"] == "alert" {
			t.Errorf("threshold 100 fired: %v", tr)
		}
	}

	for _, c := range []struct {
		name  string
		body  any
		code  int
		field string
	}{
		{"not JSON", "{", 400, ""},
		{"no range", with(validRule(), "from", nil), 422, "from"},
		{"over a day", with(body, "from", "2026-11-21T09:00:00Z"), 422, "to"},
		{"in the future", with(body, "to", "2026-11-22T12:00:00Z"), 422, "to"},
		{"minutes gone", with(body, "from", "2026-11-19T09:00:00Z", "to", "2026-11-19T10:00:00Z"), 422, "from"},
		{"bad time", with(body, "from", "9am"), 422, "from"},
		{"unknown field", with(body, "colour", "red"), 422, "colour"},
		{"bad threshold", with(body, "threshold_value", 1.5), 422, "threshold_value"},
		{"another account's project", with(body, "project_id", "proj_b1"), 422, "project_id"},
	} {
		res := h.do("POST", "/v1/alert-rules/preview", h.keyA, c.body)
		if res.Status != c.code {
			t.Errorf("%s: status %d, want %d: %s", c.name, res.Status, c.code, res.Body)
			continue
		}
		if c.field != "" && !slices.Contains(res.FieldErrors(t), c.field) {
			t.Errorf("%s: errors %v, want one naming %s", c.name, res.FieldErrors(t), c.field)
		}
	}
}

func TestConsoleFiles(t *testing.T) {
	h := newHarness(t)
	h.check = false // HTML and scripts: not in the API document
	for _, c := range []struct {
		path, ctype string
		status      int
	}{
		{"/console/", "text/html", 200}, {"/console/index.html", "text/html", 200},
		{"/console/app.js", "text/javascript", 200}, {"/console/app.css", "text/css", 200},
		{"/console/nope.js", "application/json", 404}, {"/console", "text/html", 200},
	} {
		res := h.do("GET", c.path, "", nil)
		if res.Status != c.status || !strings.HasPrefix(res.Header.Get("Content-Type"), c.ctype) {
			t.Errorf("GET %s: %d %q, want %d %s", c.path, res.Status, res.Header.Get("Content-Type"), c.status, c.ctype)
		}
		if c.status == 200 {
			csp := res.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") || res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("GET %s: CSP %q", c.path, csp)
			}
		}
	}
	// No inline script or style in the page: the CSP would refuse it.
	page := string(h.do("GET", "/console/", "", nil).Body)
	for _, bad := range []string{"<script>", "style=", "<style", "onclick="} {
		if strings.Contains(page, bad) {
			t.Errorf("index.html holds %q", bad)
		}
	}
}
