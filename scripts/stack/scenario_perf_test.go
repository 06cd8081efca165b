//go:build stack

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/voiceops/opsapi/scripts/stack/lambdas"
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s)-1)*p + 0.5)
	return s[i]
}

// Time to notify through the stack: a metric event accepted by the intake
// → alerts.triggered received and verified at the receiver. Figures only
// (no timing assertion); STACK_NOTIFY_TRIALS sets the number of trials
// (3 by default, 20 or more for the report).
func TestTimeToNotify(t *testing.T) {
	acct := st.Credentials.Accounts[1]
	rc, ruleID := alertSetup(t, acct)
	key := map[string]string{"x-api-key": acct.APIKey}
	// The rule of alertSetup fires at 3; each trial posts 5 errors (it
	// fires), then raises the threshold past the total (it resolves).
	trials := envInt("STACK_NOTIFY_TRIALS", 3)
	var got []time.Duration
	for i := range trials {
		accepted := postErrors(t, acct, 5)
		d := rc.next(t, "alerts.triggered", 30*time.Second)
		if d.Verified != nil {
			t.Fatalf("trial %d: %v", i, d.Verified)
		}
		got = append(got, d.At.Sub(accepted))
		if code, _, b := call(t, "PATCH", st.Credentials.AgentStudioURL+"/v1/alert-rules/"+ruleID, key, map[string]any{"threshold_value": 5*(i+1) + 3}, nil); code != 200 {
			t.Fatalf("PATCH: %d %s", code, b)
		}
		rc.next(t, "alerts.resolved", 30*time.Second)
	}
	t.Logf("time to notify over %d trials: p50 %s, p99 %s, min %s, max %s (all: %v)", len(got),
		percentile(got, 0.5), percentile(got, 0.99), slices.Min(got), slices.Max(got), got)
}

// Cold start of each function under the RIE against a hello-world
// function run the same way, in interleaved pairs (STACK_COLD_TRIALS
// pairs per function, 1 by default). Figures only.
func TestColdStarts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bs, err := lambdas.BuildPackage(ctx, "../..", "./scripts/stack/testdata/hello", filepath.Join(dir, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	st.Runner.Add(lambdas.Spec{Name: "hello", FunctionName: "hello", Bootstrap: bs, Timeout: 10 * time.Second, MemoryMB: 128, AccessKeyID: "STACKHELLO", Concurrency: 1})
	trials := envInt("STACK_COLD_TRIALS", 1)
	var names []string
	for _, f := range st.Topology.Functions {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	for _, name := range names {
		payload := coldPayload(name)
		var fn, hello []time.Duration
		for range trials {
			h, err := st.Runner.ColdStart(ctx, "hello", []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			f, err := st.Runner.ColdStart(ctx, name, payload)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			hello, fn = append(hello, h), append(fn, f)
		}
		t.Logf("cold start %-14s median %7.1f ms (hello-world %6.1f ms, +%6.1f ms) over %d pairs", name,
			ms(percentile(fn, 0.5)), ms(percentile(hello, 0.5)), ms(percentile(fn, 0.5)-percentile(hello, 0.5)), trials)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// coldPayload is a cheap event for a function: an unauthenticated request
// for an HTTP function, an empty batch for the others.
func coldPayload(name string) []byte {
	for _, a := range st.Topology.APIs {
		for _, r := range a.Routes {
			if r.Function == name {
				ev := map[string]any{"version": "2.0", "routeKey": r.Key, "rawPath": "/", "headers": map[string]string{},
					"requestContext": map[string]any{"http": map[string]any{"method": http.MethodGet, "path": "/"}, "requestId": "cold", "stage": "$default"}}
				b, _ := json.Marshal(ev)
				return b
			}
		}
	}
	return []byte(fmt.Sprintf(`{"Records":[]}`))
}
