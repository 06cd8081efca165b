package main

import (
	"io"
	"net/http"
	"regexp"
	"slices"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/catalog"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/platform/telemetry/prom"
)

// servedOutsideTheAPI are the catalog groups the dev server answers in
// front of its API (withOpenAPI): the whole document and its reference,
// for both hosts on its one origin (openapi_test.go).
var servedOutsideTheAPI = []string{catalog.StudioDocs.Name, catalog.BaseDocs.Name}

// TestDevServerMountsEveryCatalogGroup sends one request (no credentials)
// for every route of shared/platform/catalog, on both hosts' groups (Twilio's
// callbacks too: -telephony twilio), and reads from /metrics the route
// pattern each matched: every catalog route is served by its own pattern,
// and no request matched a route the catalog does not list.
func TestDevServerMountsEveryCatalogGroup(t *testing.T) {
	env := map[string]string{"TWILIO_ACCOUNT_SID": "AC00000000000000000000000000000000", "TWILIO_AUTH_TOKEN": "token", "TWILIO_FROM_NUMBER": "+14155550100"}
	creds, stop := startDevEnv(t, func(k string) string { return env[k] },
		"-telephony", "twilio", "-public-url", "https://tunnel.example", "-twilio-api-url", "http://127.0.0.1:1")
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	send := func(method, path string) int {
		req, _ := http.NewRequest(method, creds.BaseURL+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode
	}
	var want []string
	for _, g := range catalog.Groups() {
		for _, r := range g.Routes {
			if slices.Contains(servedOutsideTheAPI, g.Name) {
				if status := send(r.Method, r.SamplePath()); status != http.StatusOK {
					t.Errorf("%s (%s): %d", r.Pattern(), g.Name, status)
				}
				continue
			}
			send(r.Method, r.SamplePath())
			want = append(want, r.Pattern())
		}
	}

	res, err := http.Get(creds.BaseURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	requests := regexp.MustCompile(`(?m)^` + prom.Name(telemetry.Requests) + `\{host="[^"]*",route="([^"]*)"\}`)
	served := map[string]bool{}
	for _, m := range requests.FindAllStringSubmatch(string(body), -1) {
		served[m[1]] = true
		if m[1] != "unmatched" && !slices.Contains(want, m[1]) {
			t.Errorf("a catalog route's request matched %q, which the catalog does not list", m[1])
		}
	}
	if len(served) == 0 {
		t.Fatalf("no request counted in /metrics:\n%s", body)
	}
	for _, p := range want {
		if !served[p] {
			t.Errorf("the dev server does not serve %s (mount its group in scripts/dev/main.go)", p)
		}
	}
}
