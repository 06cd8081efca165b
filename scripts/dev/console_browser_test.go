package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	_ "time/tzdata" // the custom silence's end is entered in a fixed zone, whatever the host's

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The console's browser test: headless Chromium (Debian's chromium,
// installed by scripts/test.sh) driven by chromedp against the dev server.
// Any error in the browser's console fails it, but for the 422s the forms
// are made to answer. With CONSOLE_SCREENSHOTS=docs/console it
// rewrites the screenshots of docs/console.md (a path relative to the
// repository's root).

var screenshotDir = os.Getenv("CONSOLE_SCREENSHOTS")

// chromium returns the browser's path; without one the test skips, or
// fails in CI (scripts/test.sh installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (scripts/test.sh installs it with apt-get)")
	}
	t.Skip("chromium is not installed: apt-get install -y chromium")
	return ""
}

// browser starts headless Chromium with a fresh profile and returns a tab
// context; every console error, uncaught exception and browser log error
// is collected.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	// A test's whole session within 3 minutes (each takes seconds): past
	// that the browser is killed and every pending call returns, so a
	// stuck page fails its test instead of holding the package's run.
	session, cancelSession := context.WithTimeout(context.Background(), 3*time.Minute)
	actx, cancelAlloc := chromedp.NewExecAllocator(session, opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc(); cancelSession() })
	var mu sync.Mutex
	var errs []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				errs = append(errs, m.String()+" "+m.URL)
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), errs...) }
}

// shot saves a screenshot of the viewport for docs/console.md (only when
// asked: the committed ones stay as they are otherwise).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if screenshotDir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := screenshotDir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join("..", "..", dir) // the test runs in scripts/dev
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// layoutJS reports what a phone-sized page must not do: scroll sideways,
// put a control out of the window's width (where only a table's own
// sideways scroll reaches it) or out of its label's box, break a state
// badge or a table button's one word over lines, draw chart text under 10 px (its CSS size
// times the SVG's scale), repeat an axis label, or draw a legend swatch
// larger than a small square.
const layoutJS = `(() => {
  const out = [];
  const se = document.scrollingElement;
  if (se.scrollWidth > innerWidth) out.push("page " + se.scrollWidth + " px wide in a " + innerWidth + " px window");
  for (const c of document.querySelectorAll("main input, main select, main textarea, main button, main a.button")) {
    const r = c.getBoundingClientRect();
    if (r.width > 0 && (r.left < 0 || r.right > innerWidth)) { out.push((c.id || c.className || c.tagName) + " ends at " + Math.round(r.right) + " px in a " + innerWidth + " px window"); break; }
  }
  for (const b of [...document.querySelectorAll("main .badge, main td button")].filter((b) => !b.textContent.includes(" "))) {
    const range = document.createRange();
    range.selectNodeContents(b);
    if (new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1) { out.push(JSON.stringify(b.textContent) + " breaks over lines"); break; }
  }
  for (const c of document.querySelectorAll("main label > input, main label > select, main label > textarea")) {
    const r = c.getBoundingClientRect(), box = c.parentElement.getBoundingClientRect();
    if (r.width > 0 && r.right > box.right + 0.5) out.push((c.id || c.className) + " sticks out of its label by " + Math.round(r.right - box.right) + " px");
  }
  for (const svg of document.querySelectorAll("svg.chart")) {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    for (const t of svg.querySelectorAll("text")) {
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (px < 10) { out.push("chart text " + JSON.stringify(t.textContent) + " is " + px.toFixed(1) + " px"); break; }
    }
    for (const axis of ["y", "x"]) {
      const labels = [...svg.querySelectorAll("text.tick." + axis)].map((t) => t.textContent);
      if (new Set(labels).size !== labels.length) out.push(axis + " ticks repeat: " + labels.join(", "));
    }
  }
  for (const sw of document.querySelectorAll(".legend .swatch")) {
    const r = sw.getBoundingClientRect();
    if (r.width > 16 || r.height > 16) out.push("legend swatch " + r.width + "x" + r.height);
  }
  return out;
})()`

// TestConsoleInTheBrowser walks every page of the console at 1280 px,
// using it as an operator would (filters, forms with a field error,
// edits saved and refused, endpoints of each kind, the delivery log's
// filter and payloads, silences of 1 h, 4 h and until a typed time,
// history with endpoint names, conversations without typed IDs), then
// revisits each page at 390 px: no sideways scroll, controls in reach,
// chart text at least 10 px, distinct ticks.
// No error in the browser's console.
func TestConsoleInTheBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test takes several seconds")
	}
	ctx, consoleErrors := browser(t)
	creds, stop := startDev(t, "-eval-every", "1s", "-allow-loopback-webhooks", "-retry-schedule", "0s,1h")
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	acct := creds.Accounts[0]
	proj := acct.Projects[0]
	studio := creds.AgentStudioURL

	// A receiver that refuses the first delivery (400: failed, no retry)
	// and accepts the rest.
	var mu sync.Mutex
	calls := 0
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	ep := studioCall(t, studio, "POST", "/v1/webhook-endpoints", "x-api-key", acct.APIKey,
		`{"name":"pager","url":"`+receiver.URL+`/hook","event_types":["alerts.triggered","alerts.resolved"]}`)
	epID := ep["id"].(string)
	rule := studioCall(t, studio, "POST", "/v1/alert-rules", "x-api-key", acct.APIKey,
		`{"name":"API errors","project_id":"`+proj.ProjectID+`","metric":"api_errors","operator":">=","threshold_value":3,"window_duration":"5m"}`)
	ruleID := rule["id"].(string)
	studioCall(t, studio, "POST", "/v1/alert-rules", "x-api-key", acct.APIKey,
		`{"name":"Slow turns","metric":"turn_latency_p95","operator":">","threshold_value":1500,"window_duration":"10m"}`)
	intake := func(n int) {
		var events []string
		for range n {
			events = append(events, `{"account_id":"`+acct.AccountID+`","project_id":"`+proj.ProjectID+`","metric":"api_errors"}`)
		}
		studioCall(t, studio, "POST", "/internal/v1/metric-events", "X-Internal-Key", creds.InternalKey, `{"events":[`+strings.Join(events, ",")+`]}`)
	}
	intake(1)
	base := "/v1/" + acct.AccountID + "/" + proj.ProjectID + "/chat/"
	st, created := chatCall(t, creds.BaseURL, proj.APIKey, proj.AgentToken, "POST", base+"create", `{"channel":"webchat"}`)
	if st != 200 {
		t.Fatalf("chat create: %d %v", st, created)
	}
	convID := created["conversation_id"].(string)
	if st, ans := chatCall(t, creds.BaseURL, proj.APIKey, proj.AgentToken, "POST", base+"respond", `{"conversation_id":"`+convID+`","message":"I need a human"}`); st != 200 {
		t.Fatalf("chat respond: %d %v", st, ans)
	}

	// do runs steps with a bound: a wait that never ends fails the test.
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		if err := chromedp.Do(c, steps...); err != nil {
			page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash + " | " + document.getElementById("main").innerText`))
			t.Fatalf("%s: %v\npage: %.600s", what, err, page)
		}
	}
	js := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	// until polls a JavaScript condition for up to 10 s.
	until := func(what, cond string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!(`+cond+`)`))
			if err == nil && ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not so after 10 s (%v)\npage: %.600s", what, err, js(`location.hash + " | " + document.getElementById("main").innerText`))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	text := func(sel string) string {
		t.Helper()
		return js(`(document.querySelector(` + strconv.Quote(sel) + `) || {}).innerText || ""`)
	}
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(sel)+`).length`))
		if err != nil {
			t.Fatalf("counting %s: %v", sel, err)
		}
		return n
	}
	// set gives a field a value and fires the event the page listens to.
	set := func(sel, value string) {
		t.Helper()
		js(`(() => { const el = document.querySelector(` + strconv.Quote(sel) + `); el.value = ` + strconv.Quote(value) +
			`; el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); return ""; })()`)
	}
	click := func(sel string) { t.Helper(); do("click "+sel, chromedp.Click(chromedp.CSS(sel))) }
	open := func(hash, ready string) {
		t.Helper()
		js(`(() => { location.hash = ` + strconv.Quote(hash) + `; return ""; })()`)
		until("open "+hash, ready)
	}
	layout := func(page string) {
		t.Helper()
		res, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](layoutJS))
		if err != nil {
			t.Fatalf("layout of %s: %v", page, err)
		}
		for _, p := range res {
			t.Errorf("%s: %s", page, p)
		}
	}
	rows := func(table string) string { return `document.querySelectorAll("#` + table + ` tbody tr")` }
	// get reads the API as the console's key does.
	get := func(path string) map[string]any {
		t.Helper()
		return studioCall(t, studio, "GET", path, "x-api-key", acct.APIKey, "")
	}
	// silencedUntil lists, by ID, the ends of the rule's silences in effect.
	silencedUntil := func(rule string) map[string]time.Time {
		t.Helper()
		out := map[string]time.Time{}
		for _, raw := range get("/v1/silences")["data"].([]any) {
			s := raw.(map[string]any)
			ends, err := time.Parse(time.RFC3339Nano, s["ends_at"].(string))
			if err != nil {
				t.Fatalf("silence %v: %v", s["id"], err)
			}
			for _, m := range s["matchers"].([]any) {
				if m := m.(map[string]any); m["name"] == "rule_id" && m["value"] == rule && ends.After(time.Now()) {
					out[s["id"].(string)] = ends
				}
			}
		}
		return out
	}
	near := func(a, b time.Time) bool { d := a.Sub(b); return d > -time.Minute && d < time.Minute }

	// Signed out: the key form, and neither the navigation nor "Sign out".
	start := time.Now()
	do("the key form", chromedp.Navigate(studio+"/console/"), chromedp.WaitVisible(chromedp.ID("key")))
	t.Logf("console first load (to the key form): %v", time.Since(start))
	if d := js(`getComputedStyle(document.getElementById("nav")).display`); d != "none" {
		t.Errorf("signed out, the navigation's display is %q, want none", d)
	}
	shot(t, ctx, "signin")

	// The rules: states, the alert firing on the open page, the filters.
	do("sign in", chromedp.SendKeys(chromedp.ID("key"), acct.APIKey), chromedp.Click(chromedp.ID("signin")))
	ruleRow := `#rules tr[data-rule="` + ruleID + `"]`
	until("the rule is ok", `document.querySelector('`+ruleRow+` .badge[data-state="ok"]')`)
	intake(5)
	fired := time.Now()
	until("the rule fires on the open page", `document.querySelector('`+ruleRow+` .badge[data-state="alert"]')`)
	t.Logf("state change shown %v after the intake answered", time.Since(fired).Round(10*time.Millisecond))
	if n := count("#rules tbody tr[data-rule]"); n != 2 {
		t.Errorf("rules on the page: %d, want 2", n)
	}
	filters := []struct{ sel, value, want string }{
		{"#r-search", "api ERR", "API errors"},
		{"#r-state", "alert", "API errors"},
		{"#r-metric", "turn_latency_p95", "Slow turns"},
		{"#r-project", "-", "Slow turns"},
		{"#r-project", proj.ProjectID, "API errors"},
	}
	for _, f := range filters {
		set(f.sel, f.value)
		until(f.sel+" = "+f.value, rows("rules")+`.length === 1 && document.querySelector("#rules tbody").innerText.includes(`+strconv.Quote(f.want)+`)`)
		set(f.sel, "")
	}
	set("#r-state", "no_data")
	until("no rule is no_data", `document.querySelector("#rules tbody").innerText.includes("No rule matches the filters.")`)
	if got := text("#r-count"); got != "0 of 2" {
		t.Errorf("filtered count %q, want 0 of 2", got)
	}
	set("#r-state", "")
	until("both rules again", rows("rules")+`.length === 2`)
	layout("rules")
	shot(t, ctx, "rules")

	// Active alerts: how long it has been firing; a silence of 1 h from it.
	open("#/alerts", `document.querySelector('#alerts tr[data-rule="`+ruleID+`"] .firing-for')`)
	if ff := text(`#alerts tr[data-rule="` + ruleID + `"] .firing-for`); !regexp.MustCompile(`^\d+ s$`).MatchString(ff) {
		t.Errorf("firing for %q, want a few seconds", ff)
	}
	if title := js(`document.querySelector('#alerts time').title`); !strings.HasSuffix(title, " UTC") {
		t.Errorf("a time's title %q, want the UTC time", title)
	}
	layout("alerts")
	shot(t, ctx, "alerts")
	click(`#alerts tr[data-rule="` + ruleID + `"] button.s-1h`)
	until("silenced", `document.getElementById("status").innerText.startsWith("Silenced API errors until")`)

	// Silences: the new one in effect, ended from the page.
	open("#/silences", `document.querySelector("#silences-active tr[data-silence]")`)
	active := text("#silences-active tbody")
	if !strings.Contains(active, "rule API errors") || !strings.Contains(active, "active") {
		t.Errorf("silences in effect: %q, want the rule's, active", active)
	}
	layout("silences")
	shot(t, ctx, "silences")
	click("#silences-active button.end")
	until("the silence ended", `document.querySelector("#silences-past tr[data-silence] .badge[data-state=ended]") && document.querySelector("#silences-active tbody").innerText.includes("No silence in effect.")`)
	if n := len(silencedUntil(ruleID)); n != 0 {
		t.Errorf("%d silences of the rule in effect after ending it, want 0", n)
	}

	// Silences of 4 h and until a time entered in the browser's zone (set
	// to one with a half-hour offset): the API keeps the ends asked for.
	open("#/alerts", `document.querySelector('#alerts tr[data-rule="`+ruleID+`"] button.s-4h')`)
	asked := time.Now()
	click(`#alerts tr[data-rule="` + ruleID + `"] button.s-4h`)
	until("silenced for 4 h", `document.getElementById("status").innerText.startsWith("Silenced API errors until")`)
	fourHours := silencedUntil(ruleID)
	if len(fourHours) != 1 {
		t.Fatalf("silences of the rule in effect: %v, want the one of 4 h", fourHours)
	}
	for _, ends := range fourHours {
		if !near(ends, asked.Add(4*time.Hour)) {
			t.Errorf("the 4 h silence ends at %v, want within a minute of %v", ends, asked.Add(4*time.Hour))
		}
	}
	zone, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: zone.String()}); err != nil {
		t.Fatalf("the browser's time zone: %v", err)
	}
	entered := time.Now().In(zone).Add(150 * time.Minute).Truncate(time.Minute)
	js(`(() => { document.getElementById("status").textContent = ""; return ""; })()`)
	set(`#alerts tr[data-rule="`+ruleID+`"] input.s-until`, entered.Format("2006-01-02T15:04"))
	click(`#alerts tr[data-rule="` + ruleID + `"] button.s-custom`)
	until("silenced until the time entered", `document.getElementById("status").innerText.startsWith("Silenced API errors until")`)
	custom := ""
	for id, ends := range silencedUntil(ruleID) {
		if _, old := fourHours[id]; !old {
			custom = id
			if !near(ends, entered) {
				t.Errorf("the custom silence ends at %v, want within a minute of %v (entered %s in %s)", ends, entered, entered.Format("2006-01-02T15:04"), zone)
			}
		}
	}
	if custom == "" {
		t.Fatalf("no new silence of the rule after the custom end was entered")
	}
	open("#/silences", `document.querySelectorAll("#silences-active tr[data-silence]").length === 2`)
	if shown := text(`#silences-active tr[data-silence="` + custom + `"] td:nth-child(4)`); shown != entered.Format("2006-01-02 15:04:05") {
		t.Errorf("the custom silence's end shown %q, want %q (the browser's local time)", shown, entered.Format("2006-01-02 15:04:05"))
	}
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{}); err != nil {
		t.Fatalf("the browser's time zone back: %v", err)
	}

	// The rule's page: chart, history naming the endpoint, preview.
	open("#/rules/"+ruleID, `document.querySelector("#rule-chart svg") && document.querySelector("#history .hist-delivery a")`)
	if name := text("#history .hist-delivery a"); name != "pager" {
		t.Errorf("history names the endpoint %q, want pager (not %s)", name, epID)
	}
	if !strings.Contains(text("#history tbody"), "alert") {
		t.Errorf("history %q, want the change to alert", text("#history tbody"))
	}
	set("#p-threshold", "50")
	click("#preview")
	until("the preview", `document.getElementById("preview-summary")`)
	if summary := text("#preview-summary"); !strings.Contains(summary, "threshold 50: 0 alert(s)") {
		t.Errorf("preview summary %q, want no alert at threshold 50", summary)
	}
	if ticks := js(`[...document.querySelectorAll("#rule-chart text.tick.y")].map((t) => t.textContent).join(",")`); !regexp.MustCompile(`^0,(\d+,)+\d+$`).MatchString(ticks) {
		t.Errorf("y ticks %q, want 0 then distinct steps", ticks)
	}
	layout("rule")
	shot(t, ctx, "rule")

	// A new rule: a bad threshold shows its error by the field; then it is made.
	open("#/rules/new", `document.getElementById("rule-form")`)
	set("#f-name", "Crashes")
	set("#f-metric", "call_crashes")
	set("#f-threshold", "-1")
	click("#rule-save")
	until("the threshold's error", `document.querySelector('[data-field="threshold_value"] .field-error')`)
	if e := text(`[data-field="threshold_value"] .field-error`); !strings.Contains(e, "between 0 and") {
		t.Errorf("threshold error %q", e)
	}
	if n := count(".field-error"); n != 1 {
		t.Errorf("%d field errors shown, want 1", n)
	}
	layout("new rule")
	shot(t, ctx, "rule-new")
	set("#f-threshold", "2")
	click("#rule-save")
	until("the new rule's page", `location.hash.startsWith("#/rules/ar_") && document.querySelector("#main h1").innerText.includes("Crashes")`)

	// Editing it: a new name and threshold are saved; a refused edit shows
	// its error by the field and changes nothing.
	crashesID := strings.TrimPrefix(js(`location.hash`), "#/rules/")
	until("the edit form", `document.getElementById("rule-form") && document.getElementById("f-name").value === "Crashes"`)
	set("#f-name", "Crashes in calls")
	set("#f-threshold", "5")
	click("#rule-save")
	until("the edit saved", `document.getElementById("status").innerText === "Saved." && document.querySelector("#main h1").innerText.includes("Crashes in calls")`)
	if cond := text("#main dl.facts dd"); cond != "call_crashes >= 5 over 5m" {
		t.Errorf("the edited rule's condition on its page: %q", cond)
	}
	checkRule := func(when, name string, threshold float64) {
		t.Helper()
		r := get("/v1/alert-rules/" + crashesID)
		if r["name"] != name || r["threshold_value"] != threshold {
			t.Errorf("%s, the API has the rule named %q with threshold %v, want %q and %v", when, r["name"], r["threshold_value"], name, threshold)
		}
	}
	checkRule("after the edit", "Crashes in calls", 5)
	set("#f-name", "Crashes, renamed again")
	set("#f-threshold", "-1")
	click("#rule-save")
	until("the refused edit's error", `document.querySelector('#rule-form [data-field="threshold_value"] .field-error')`)
	if n := count("#rule-form .field-error"); n != 1 {
		t.Errorf("%d field errors on the refused edit, want 1", n)
	}
	checkRule("after the refused edit", "Crashes in calls", 5)
	if h1 := text("#main h1"); !strings.Contains(h1, "Crashes in calls") {
		t.Errorf("after the refused edit, the page's title is %q", h1)
	}

	// Endpoints of each kind through the form; a bad routing key first.
	open("#/endpoints/new", `document.getElementById("endpoint-form")`)
	set("#e-kind", "pagerduty")
	if js(`String(document.getElementById("e-url").closest("label").hidden) + document.getElementById("e-routing-key").closest("label").hidden`) != "truefalse" {
		t.Errorf("pagerduty's form shows the URL or hides the routing key")
	}
	set("#e-name", "On call")
	set("#e-routing-key", "short")
	click("#endpoint-save")
	until("the routing key's error", `document.querySelector('[data-field="routing_key"] .field-error')`)
	shot(t, ctx, "endpoint-new")
	set("#e-routing-key", strings.Repeat("a1", 16))
	click("#endpoint-save")
	until("the pagerduty endpoint", `location.hash.startsWith("#/endpoints/whe_") && document.querySelector("#main dl.facts") && document.querySelector("#main dl.facts").innerText.includes("pagerduty")`)
	open("#/endpoints/new", `document.getElementById("endpoint-form")`)
	set("#e-kind", "slack")
	set("#e-name", "Team channel")
	set("#e-url", receiver.URL+"/slack")
	click("#endpoint-save")
	until("the slack endpoint", `location.hash.startsWith("#/endpoints/whe_") && document.querySelector("#main dl.facts") && document.querySelector("#main dl.facts").innerText.includes("slack")`)
	open("#/endpoints/new", `document.getElementById("endpoint-form")`)
	set("#e-name", "Ticketing")
	set("#e-url", receiver.URL+"/tickets")
	set("#e-headers", "X-Team: ops")
	click("#endpoint-save")
	until("the webhook's secret", `document.getElementById("new-secret")`)
	if s := text("#new-secret"); !strings.HasPrefix(s, "whsec_") {
		t.Errorf("signing secret shown %q", s)
	}
	click("#to-endpoint")
	until("the webhook endpoint", `document.querySelector("#main dl.facts") && document.querySelector("#main h1").innerText === "Ticketing"`)
	if h := js(`document.getElementById("e-headers").value`); h != "X-Team: ops" {
		t.Errorf("the webhook's headers in its form: %q", h)
	}
	ticketsID := strings.TrimPrefix(js(`location.hash`), "#/endpoints/")
	checkEndpoint := func(when, name, url string) {
		t.Helper()
		e := get("/v1/webhook-endpoints/" + ticketsID)
		if e["name"] != name || e["url"] != url {
			t.Errorf("%s, the API has the endpoint %q at %q, want %q at %q", when, e["name"], e["url"], name, url)
		}
		if h, _ := e["headers"].(map[string]any); h["X-Team"] != "ops" {
			t.Errorf("%s, the endpoint's headers are %v, want X-Team: ops", when, e["headers"])
		}
	}
	set("#e-url", receiver.URL+"/tickets/v2")
	click("#endpoint-save")
	until("the endpoint's edit saved", `document.getElementById("status").innerText === "Saved." && document.querySelector("#main dl.facts").innerText.includes("/tickets/v2")`)
	checkEndpoint("after the edit", "Ticketing", receiver.URL+"/tickets/v2")
	set("#e-name", "Ticketing, renamed")
	set("#e-url", "not a url")
	click("#endpoint-save")
	until("the refused URL's error", `document.querySelector('#endpoint-form [data-field="url"] .field-error')`)
	if n := count("#endpoint-form .field-error"); n != 1 {
		t.Errorf("%d field errors on the refused edit, want 1 (the URL's): %q", n, text("#endpoint-form"))
	}
	checkEndpoint("after the refused edit", "Ticketing", receiver.URL+"/tickets/v2")
	open("#/endpoints", `document.querySelectorAll("#endpoints tbody tr[data-endpoint]").length === 4`)
	if kinds := js(`[...document.querySelectorAll("#endpoints td.kind")].map((t) => t.textContent).sort().join(",")`); kinds != "pagerduty,slack,webhook,webhook" {
		t.Errorf("endpoint kinds %q", kinds)
	}
	layout("endpoints")
	shot(t, ctx, "endpoints")

	// The delivery log: the status filter, a retry, the payload.
	open("#/endpoints/"+epID, `document.querySelector('#deliveries .badge[data-state="failed"]')`)
	set("#d-status", "delivered")
	until("no delivered delivery", `document.querySelector("#deliveries tbody").innerText.includes("No delivery with this status.")`)
	set("#d-status", "failed")
	until("the failed delivery alone", `document.querySelectorAll("#deliveries tr[data-delivery]").length === 1`)
	set("#d-status", "")
	click(`#deliveries tr[data-status="failed"] button.retry`)
	until("two attempts", `document.querySelectorAll("#deliveries tbody tr:first-child .attempts div").length === 2`)
	if attempts := text("#deliveries tbody tr:first-child .attempts"); !strings.Contains(attempts, "→ 400") || !strings.Contains(attempts, "→ 204") {
		t.Errorf("attempts on the page: %q, want a 400 then a 204", attempts)
	}
	click("#deliveries tbody tr:first-child button.show-payload")
	until("the payload", `document.querySelector("#deliveries pre.payload-body")`)
	if body := text("#deliveries pre.payload-body"); !strings.Contains(body, `"event_type": "alerts.triggered"`) || !strings.Contains(body, ruleID) {
		t.Errorf("payload shown: %.300q, want the triggered event of %s", body, ruleID)
	}
	layout("endpoint")
	shot(t, ctx, "endpoint")

	// Conversations: the account and project come from the key.
	open("#/conversations", `document.querySelector('#conversations a[href="#/conversations/`+convID+`"]')`)
	if v := js(`document.getElementById("s-project").value`); v != proj.ProjectID || count("input#s-account, input#s-project") != 0 {
		t.Errorf("the project picked is %q (want %s), with %d ID inputs to type into", v, proj.ProjectID, count("input#s-account, input#s-project"))
	}
	if a := text("#s-account"); !strings.Contains(a, acct.AccountID) {
		t.Errorf("account shown %q", a)
	}
	layout("conversations")
	shot(t, ctx, "conversations")
	click(`#conversations a[href="#/conversations/` + convID + `"]`)
	until("the transcript", `document.querySelector("#transcript .turn")`)
	if transcript, handoff := text("#transcript"), text("#handoff"); !strings.Contains(transcript, "I need a human") || !strings.Contains(handoff, "support-queue") {
		t.Errorf("transcript %q, handoff %q", transcript, handoff)
	}
	layout("transcript")
	shot(t, ctx, "transcript")
	open("#/concurrency", `document.querySelector("#concurrency svg")`)
	layout("concurrency")
	shot(t, ctx, "concurrency")

	// Every page again on a phone.
	do("390 px", chromedp.EmulateViewport(390, 844))
	// then puts a page in the state to check: a field error shown, a payload open.
	for _, p := range []struct {
		name, hash, ready string
		then              func()
	}{
		{"rules", "#/rules", `document.querySelector('` + ruleRow + ` svg')`, nil},
		{"alerts", "#/alerts", `document.querySelector("#alerts .firing-for")`, nil},
		{"silences", "#/silences", `document.querySelector("#silences-past tr[data-silence]") && document.querySelector("#silences-active tr[data-silence]")`, nil},
		{"rule", "#/rules/" + ruleID, `document.querySelector("#rule-chart svg") && document.querySelector("#history .hist-delivery") && document.querySelector("#rule-silence form.silence")`, nil},
		{"rule-new", "#/rules/new", `document.getElementById("rule-form")`, func() {
			set("#f-name", "Crashes")
			set("#f-threshold", "-1")
			click("#rule-save")
			until("the threshold's error at 390 px", `document.querySelector('[data-field="threshold_value"] .field-error')`)
		}},
		{"endpoints", "#/endpoints", `document.querySelector("#endpoints tr[data-endpoint]")`, nil},
		{"endpoint-new", "#/endpoints/new", `document.getElementById("endpoint-form")`, nil},
		{"endpoint", "#/endpoints/" + epID, `document.querySelector("#deliveries tr[data-delivery]")`, func() {
			click("#deliveries tbody tr:first-child button.show-payload")
			until("the payload at 390 px", `document.querySelector("#deliveries pre.payload-body")`)
			// The log fits the phone's width (the first attempt's time
			// stands for the created time there): nothing to scroll
			// sideways to, so an open payload is read from its start.
			if fit := js(`(() => { const tb = document.querySelector("#deliveries"); return tb.offsetWidth + " in " + tb.closest(".scroll").clientWidth; })()`); !fitsIn(fit) {
				t.Errorf("the delivery log with a payload open is %s px wide: it scrolls sideways", fit)
			}
		}},
		{"conversations", "#/conversations", `document.querySelector("#conversations tbody a")`, nil},
		{"transcript", "#/conversations/" + convID, `document.querySelector("#transcript .turn")`, nil},
		{"concurrency", "#/concurrency", `document.querySelector("#concurrency svg")`, nil},
	} {
		open(p.hash, p.ready)
		if p.then != nil {
			p.then()
		}
		layout(p.name + " at 390 px")
		shot(t, ctx, p.name+"-phone")
	}
	click("#signout")
	until("signed out", `document.getElementById("key")`)
	if d := js(`getComputedStyle(document.getElementById("nav")).display`); d != "none" {
		t.Errorf("signed out at 390 px, the navigation's display is %q", d)
	}
	layout("sign-in at 390 px")
	shot(t, ctx, "signin-phone")

	// The 422s the forms were made to answer (two new, two edits, one on
	// the phone) are the only errors.
	var unexpected []string
	expected := 0
	for _, e := range consoleErrors() {
		if strings.Contains(e, "422") && (strings.Contains(e, "/v1/alert-rules") || strings.Contains(e, "/v1/webhook-endpoints")) {
			expected++
			continue
		}
		unexpected = append(unexpected, e)
	}
	if len(unexpected) > 0 {
		t.Errorf("errors in the browser's console:\n%s", strings.Join(unexpected, "\n"))
	}
	if expected != 5 {
		t.Errorf("%d 422s in the browser's log, want the 5 the forms were made to answer", expected)
	}
}

// fitsIn reads "W in B" (a width and its box's, in px): W <= B.
func fitsIn(s string) bool {
	ws, bs, _ := strings.Cut(s, " in ")
	w, err1 := strconv.Atoi(ws)
	b, err2 := strconv.Atoi(bs)
	return err1 == nil && err2 == nil && w <= b
}
