package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// GET / is an index of where to go, not a 404: JSON for a client, a
// page for a browser; any other method or path is the API's as before.
func TestRootIsAnIndexOfBothHosts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "creds.json")
	creds, stop := startDev(t, "-credentials", path)
	defer func() { _ = stop() }()
	get := func(accept string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", creds.AgentStudioURL+"/", nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	res, body := get("*/*")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET / with */*: %d %s\n%s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	var idx devIndex
	if err := json.Unmarshal([]byte(body), &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Hosts) != 2 || idx.Hosts[0].Name != "studio" || idx.Hosts[0].URL != creds.AgentStudioURL ||
		idx.Hosts[1].Name != "base" || idx.Hosts[1].URL != creds.BaseURL || idx.Credentials != path {
		t.Errorf("index: %+v", idx)
	}
	// Every link answers 200 on this server.
	rels := map[string]bool{}
	for _, l := range idx.Links {
		rels[l.Rel] = true
		r, err := http.Get(l.Href)
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Body.Close()
		if r.StatusCode != 200 {
			t.Errorf("%s %s: %d", l.Rel, l.Href, r.StatusCode)
		}
	}
	for _, rel := range []string{"console", "docs", "openapi", "metrics"} {
		if !rels[rel] {
			t.Errorf("the index has no %s link: %+v", rel, idx.Links)
		}
	}
	res, body = get("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8") // a browser's
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(body, `href="`+creds.AgentStudioURL+`/console/"`) || !strings.Contains(body, path) {
		t.Errorf("GET / for a browser: %d %s\n%s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	// Another method on / is still the API's JSON answer, not the index.
	r, err := http.Post(creds.AgentStudioURL+"/", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if r.StatusCode == 200 || strings.Contains(string(b), "links") {
		t.Errorf("POST /: %d %s", r.StatusCode, b)
	}
}

func TestWantsHTML(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                            false,
		"*/*":                         false,
		"application/json":            false,
		"text/html":                   true,
		"TEXT/HTML; q=0.9":            true,
		"application/json, text/html": false,
		"text/html,application/xhtml+xml,*/*;q=0.8": true,
	} {
		if got := wantsHTML(accept); got != want {
			t.Errorf("wantsHTML(%q) = %v, want %v", accept, got, want)
		}
	}
}

// The start-up line says where to go first and prints durations as
// durations, in the JSON log a redirected stderr gets.
func TestStartupLineNamesConsoleDocsAndCredentials(t *testing.T) {
	path := filepath.Join(t.TempDir(), "creds.json")
	var log lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan Credentials, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-credentials", path, "-retry-schedule", "0s,1m,90m"},
			func(string) string { return "" }, io.Discard, &log, ready)
	}()
	var creds Credentials
	select {
	case creds = <-ready:
	case err := <-done:
		t.Fatalf("dev server exited: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("dev server not ready after 60s")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, `"msg":"serving"`) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]any{
		"console":                   creds.AgentStudioURL + "/console/",
		"docs":                      creds.AgentStudioURL + "/docs",
		"credentials":               path,
		"eval_every":                "1m",
		"retry_schedule":            "0s,1m,1h30m",
		"conversation_idle_timeout": "30m",
	}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("start-up line's %s = %v, want %v\n%v", k, line[k], v, line)
		}
	}
}

// With -api-only the line names only what is served: no reference, no
// OpenAPI document.
func TestStartupLineOfAPIOnly(t *testing.T) {
	attrs := startupAttrs(newDevIndex("http://h", "http://h", "c.json"), "memory", options{apiOnly: true, evalEvery: time.Minute})
	got := map[any]any{}
	for i := 0; i+1 < len(attrs); i += 2 {
		got[attrs[i]] = attrs[i+1]
	}
	if got["api_only"] != true || got["console"] != "http://h/console/" || got["credentials"] != "c.json" {
		t.Errorf("start-up line %v: want api_only, the console and the credentials", attrs)
	}
	for _, k := range []string{"docs", "openapi"} {
		if _, ok := got[k]; ok {
			t.Errorf("start-up line %v names %s, which -api-only does not serve", attrs, k)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 4 * time.Second: "4s", time.Minute: "1m", 90 * time.Second: "1m30s",
		time.Hour: "1h", 90 * time.Minute: "1h30m", 1500 * time.Millisecond: "1.5s",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
