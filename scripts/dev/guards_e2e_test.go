package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestGuardsEndToEnd is the guards' end-to-end check on the dev server with its
// defaults: a burst past one key's limit gets 429s with Retry-After and the
// RateLimit headers while another tenant's requests all succeed; creates
// with an Idempotency-Key replay their first response and create nothing
// twice; another body with the key is 422.
func TestGuardsEndToEnd(t *testing.T) {
	creds, stop := startDev(t)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	noisy, quiet := creds.Accounts[0], creds.Accounts[1]
	type answer struct {
		status int
		header http.Header
		body   []byte
	}
	do := func(method, url string, headers map[string]string, body string) answer {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return answer{res.StatusCode, res.Header, b}
	}
	rules := creds.AgentStudioURL + "/v1/alert-rules"

	// 120 requests at once: more than the burst of 50 and what refills
	// meanwhile.
	limited := 0
	for i := range 120 {
		a := do("GET", rules, map[string]string{"x-api-key": noisy.APIKey}, "")
		switch a.status {
		case 200:
			if !strings.HasPrefix(a.header.Get("RateLimit"), `"key";r=`) || a.header.Get("RateLimit-Policy") != `"key";q=50;w=2` {
				t.Fatalf("200 without RateLimit headers: %v", a.header)
			}
		case 429:
			limited++
			if a.header.Get("Retry-After") == "" || !strings.HasPrefix(a.header.Get("RateLimit"), `"key";r=0;`) ||
				!bytes.Contains(a.body, []byte(`"message":"rate limit exceeded`)) {
				t.Fatalf("429 %v %s", a.header, a.body)
			}
		default:
			t.Fatalf("status %d %s", a.status, a.body)
		}
		if i%5 != 0 {
			continue // the other tenant sends within its own limit
		}
		if q := do("GET", rules, map[string]string{"x-api-key": quiet.APIKey}, ""); q.status != 200 {
			t.Fatalf("the other tenant got %d beside the burst: %s", q.status, q.body)
		}
	}
	if limited == 0 {
		t.Fatal("no 429 in a burst of 120")
	}

	// Idempotent creates, of the quiet tenant (the noisy one is limited).
	key := map[string]string{"x-api-key": quiet.APIKey}
	proj := quiet.Projects[0]
	chatURL := creds.BaseURL + "/v1/" + quiet.AccountID + "/" + proj.ProjectID + "/chat/create"
	for _, c := range []struct {
		url     string
		headers map[string]string
		body    string
		other   string
	}{
		{rules, key, `{"name":"p95","metric":"turn_latency_p95","operator":">","threshold_value":1500,"window_duration":"5m"}`,
			`{"name":"p99","metric":"turn_latency_p95","operator":">","threshold_value":1500,"window_duration":"5m"}`},
		{creds.AgentStudioURL + "/v1/webhook-endpoints", key, `{"name":"e","url":"https://hooks.example.com/a","event_types":["alerts.triggered"]}`,
			`{"name":"e","url":"https://hooks.example.com/b","event_types":["alerts.triggered"]}`},
		{chatURL, map[string]string{"X-API-KEY": proj.APIKey, "X-TOKEN": proj.AgentToken}, `{}`, `{"channel":"webchat"}`},
	} {
		h := map[string]string{"Idempotency-Key": "e2e-" + c.url}
		for k, v := range c.headers {
			h[k] = v
		}
		first := do("POST", c.url, h, c.body)
		again := do("POST", c.url, h, c.body)
		if first.status >= 300 || again.status != first.status || !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("%s: first %d %s, again %d %s %v", c.url, first.status, first.body, again.status, again.body, again.header)
		}
		if other := do("POST", c.url, h, c.other); other.status != 422 {
			t.Errorf("%s: another body with the key: %d %s", c.url, other.status, other.body)
		}
	}
	list := do("GET", rules, key, "")
	if n := bytes.Count(list.body, []byte(`"id":"ar_`)); n != 1 {
		t.Errorf("%d rules after two creates with one key: %s", n, list.body)
	}
	eps := do("GET", creds.AgentStudioURL+"/v1/webhook-endpoints", key, "")
	if n := bytes.Count(eps.body, []byte(`"id":"whe_`)); n != 1 {
		t.Errorf("%d endpoints after two creates with one key: %s", n, eps.body)
	}
}
