package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The console's browser test: headless Chromium (Debian's chromium,
// installed by scripts/test.sh) driven by chromedp against the dev server.
// Any error in the browser's console fails it. With -update-screenshots it
// rewrites the screenshots of docs/console.md under docs/console/.

var updateScreenshots = os.Getenv("UPDATE_SCREENSHOTS") != ""

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
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
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

// shot saves a screenshot of the page for docs/console.md (only when asked:
// the committed ones stay as they are otherwise).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !updateScreenshots {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "docs", "console", name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConsoleInTheBrowser is the browser test: enter the key, see
// the rules with their states, make an alert fire through the metric
// intake and see the open page change without a reload, read the rule's
// history, retry a failed delivery and see the new attempt, read a
// transcript; no error in the browser's console.
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
	// Some activity, and a chat conversation to read.
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

	state := func(sel string) string {
		res, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), "data-state"))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return res.Value
	}
	// do runs steps with a bound: a wait that never ends fails the test.
	do := func(steps ...chromedp.Action[chromedp.Void]) error {
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		return chromedp.Do(c, steps...)
	}
	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return s
	}
	count := func(sel string) int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(sel)+`).length`))
		if err != nil {
			t.Fatalf("counting %s: %v", sel, err)
		}
		return n
	}
	// Enter the key; see the rules with their states.
	start := time.Now()
	if err := do(
		chromedp.Navigate(studio+"/console/"),
		chromedp.WaitVisible(chromedp.ID("key")),
	); err != nil {
		t.Fatal(err)
	}
	t.Logf("console first load (to the key form): %v", time.Since(start))
	shot(t, ctx, "signin")
	if err := do(
		chromedp.SendKeys(chromedp.ID("key"), acct.APIKey),
		chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-rule="`+ruleID+`"] .badge`)),
	); err != nil {
		t.Fatal(err)
	}
	sel := `tr[data-rule="` + ruleID + `"] .badge`
	deadline := time.Now().Add(10 * time.Second)
	for s := state(sel); s != "ok"; s = state(sel) {
		if time.Now().After(deadline) {
			t.Fatalf("rule state on the page = %q, want ok", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rows := count("#rules tbody tr"); rows != 2 {
		t.Errorf("rules on the page: %d, want 2", rows)
	}

	// The alert fires through the intake; the open page shows it without a reload.
	intake(5)
	fired := time.Now()
	for s := state(sel); s != "alert"; s = state(sel) {
		if time.Since(fired) > 10*time.Second {
			t.Fatalf("rule state on the open page = %q 10 s after the breach, want alert", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("state change shown %v after the intake answered (evaluation within about 1 s, page poll 1 s)", time.Since(fired).Round(10*time.Millisecond))
	time.Sleep(1500 * time.Millisecond) // the sparkline's refresh is every 30 s: the shot shows the state
	shot(t, ctx, "rules")

	// The rule's page: chart, history with the trigger and its delivery.
	if err := do(
		chromedp.Navigate(studio+"/console/#/rules/"+ruleID),
		chromedp.WaitVisible(chromedp.CSS("#rule-chart svg")),
		chromedp.WaitVisible(chromedp.CSS(`#history tbody tr`)),
	); err != nil {
		t.Fatal(err)
	}
	hist := text("#history tbody")
	if !strings.Contains(hist, "alert") || !strings.Contains(hist, epID) {
		t.Errorf("history on the page: %q, want the change to alert and its delivery to %s", hist, epID)
	}
	// Preview a higher threshold: nothing would have fired.
	if err := do(
		chromedp.SetValue(chromedp.ID("p-threshold"), "50"),
		chromedp.Click(chromedp.ID("preview")),
		chromedp.WaitVisible(chromedp.ID("preview-summary")),
	); err != nil {
		t.Fatal(err)
	}
	summary := text("#preview-summary")
	if !strings.Contains(summary, "threshold 50: 0 alert(s)") {
		t.Errorf("preview summary %q, want no alert at threshold 50", summary)
	}
	shot(t, ctx, "rule")

	// The endpoint's page: the failed delivery, retried from the page.
	dsel := `#deliveries tbody tr`
	if err := do(
		chromedp.Navigate(studio+"/console/#/endpoints/"+epID),
		chromedp.WaitVisible(chromedp.CSS(dsel+` .badge[data-state="failed"]`)),
		chromedp.Click(chromedp.CSS(dsel+` button.retry`)),
	); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		n := count("#deliveries tbody tr:first-child .attempts div")
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("attempts shown after the retry: %d, want 2", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	attempts := text("#deliveries tbody tr:first-child .attempts")
	if !strings.Contains(attempts, "→ 400") || !strings.Contains(attempts, "→ 204") {
		t.Errorf("attempts on the page: %q, want a 400 then a 204", attempts)
	}
	shot(t, ctx, "endpoint")

	// A transcript, with the handoff.
	if err := do(
		chromedp.Navigate(studio+"/console/#/conversations"),
		chromedp.WaitVisible(chromedp.ID("s-account")),
		chromedp.SendKeys(chromedp.ID("s-account"), acct.AccountID),
		chromedp.SendKeys(chromedp.ID("s-project"), proj.ProjectID),
		chromedp.Click(chromedp.ID("s-show")),
		chromedp.WaitVisible(chromedp.CSS(`#conversations a[href="#/conversations/`+convID+`"]`)),
	); err != nil {
		t.Fatal(err)
	}
	shot(t, ctx, "conversations")
	if err := do(
		chromedp.Click(chromedp.CSS(`#conversations a[href="#/conversations/`+convID+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("#transcript .turn")),
	); err != nil {
		t.Fatal(err)
	}
	transcript, handoff := text("#transcript"), text("#handoff")
	if !strings.Contains(transcript, "I need a human") || !strings.Contains(handoff, "support-queue") {
		t.Errorf("transcript %q, handoff %q", transcript, handoff)
	}
	shot(t, ctx, "transcript")

	// The phone size: the rules page at 390 px.
	if err := do(
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(studio+"/console/#/rules"),
		chromedp.WaitVisible(chromedp.CSS(sel)),
	); err != nil {
		t.Fatal(err)
	}
	if overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`)); err != nil || overflow {
		t.Errorf("the rules page is wider than a 390 px screen (%v)", err)
	}
	shot(t, ctx, "rules-phone")

	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("errors in the browser's console:\n%s", strings.Join(errs, "\n"))
	}
}
