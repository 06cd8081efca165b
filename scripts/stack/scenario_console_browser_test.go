//go:build stack

package main

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The console in a real browser on the deployed topology: the page comes
// from the studio host and the conversations and concurrency pages call
// the base host, another origin (another port here, as another API
// Gateway URL deployed). The browser enforces what the other scenario
// reads: the CSP's connect-src lets the page call the base host, and the
// base host's preflight and response headers let it read the answers.
// Any console error (a CSP violation or a CORS refusal is one) fails it.
// Chromium as scripts/dev's browser test: skipped without it, except in CI.
func TestConsoleInTheBrowserAcrossHosts(t *testing.T) {
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (scripts/test.sh installs it with apt-get)")
		}
		t.Skip("chromium is not installed: apt-get install -y chromium")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	// The whole session within 3 minutes (it takes seconds): past that the
	// browser is killed and every pending call returns, so a stuck page
	// fails this test instead of holding the suite until its timeout.
	session, cancelSession := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancelSession()
	actx, cancelAlloc := chromedp.NewExecAllocator(session, opts...)
	defer cancelAlloc()
	var mu sync.Mutex
	var errs []string
	ctx, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()
	// Each step within 20 s; on failure the page says what it shows.
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(c, steps...); err != nil {
			page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + " " + document.getElementById("main").innerText + " | " + document.getElementById("status").innerText`))
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("%s: %v; page: %s; console: %v", what, err, page, errs)
		}
	}
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

	acct := st.Credentials.Accounts[0]
	studio := st.Credentials.AgentStudioURL
	errorsOnPage := `document.querySelectorAll("#main .error:not(:empty)").length`
	do("sign in", chromedp.Navigate(studio+"/console/"), chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SendKeys(chromedp.ID("key"), acct.APIKey), chromedp.Click(chromedp.ID("signin")))
	// until waits for a condition on the page (the pages redraw, so a
	// node found may be gone when checked: the page is asked instead).
	until := func(what, js string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
			if err == nil && ok {
				return
			}
			if time.Now().After(deadline) {
				page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("main").innerText`))
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("%s: not within 20 s (%v); page: %s; console: %v", what, err, page, errs)
			}
		}
	}
	// Signed in once the sign-in has shown the rules (it sets the hash
	// itself, so the next page is opened only after).
	until("sign in", `location.hash === "#/rules" && !document.getElementById("nav").hidden && document.querySelector("#main h1") !== null && document.querySelector("#main h1").textContent !== "Sign in"`)
	open := func(hash string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash = "`+hash+`"`)); err != nil {
			t.Fatalf("open %s: %v", hash, err)
		}
	}
	open("#/conversations")
	// The account and project come from the key (GET /v1/account): nothing to type.
	do("open conversations", chromedp.WaitVisible(chromedp.ID("s-project")))
	until("the key's project is picked", `document.getElementById("s-project").value === "`+acct.Projects[0].ProjectID+`"`)
	// The base host's answer: the seeded project has no conversation.
	until("list conversations", `document.querySelector("#conversations tbody").innerText.includes("No conversations.") || document.querySelector("#conversations tbody a") !== null`)
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](errorsOnPage)); err != nil || n != 0 {
		t.Errorf("conversations page shows %d errors (%v)", n, err)
	}
	open("#/concurrency")
	do("concurrency page",
		chromedp.WaitVisible(chromedp.CSS("#concurrency svg")),
	)
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](errorsOnPage)); err != nil || n != 0 {
		t.Errorf("concurrency page shows %d errors (%v)", n, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		t.Errorf("browser console errors: %v", errs)
	}
}
