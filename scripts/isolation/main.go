// Command isolation measures tenant isolation on a running dev server: one
// tenant (the first seeded account) sends at a multiple of its key's rate
// limit while another (the second account) sends at a steady rate within
// its own; it prints the quiet tenant's success rate and latency quantiles
// alone and beside the burst, and what the noisy tenant got.
//
//	go run ./scripts/dev -addr 127.0.0.1:8090 -credentials /tmp/creds.json &
//	go run ./scripts/isolation -credentials /tmp/creds.json
//
// Requests are sent open-loop (each at its scheduled time, on its own
// goroutine), so a slow answer never delays the next request and hides its
// own wait (no coordinated omission).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/platform/ratelimit"
)

type credentials struct {
	AgentStudioURL string `json:"agent_studio_url"`
	Accounts       []struct {
		AccountID string `json:"account_id"`
		APIKey    string `json:"api_key"`
	} `json:"accounts"`
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "isolation:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("isolation", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: go run ./scripts/isolation -credentials FILE [flags]

Measures tenant isolation on a running dev server: the first demo account
sends at -factor times its key's rate limit while the second sends within
its own; prints the quiet tenant's success rate and latency quantiles alone
and beside the burst, and what the noisy tenant got.

Example:
  go run ./scripts/dev -addr 127.0.0.1:8090 -credentials /tmp/creds.json &
  go run ./scripts/isolation -credentials /tmp/creds.json -duration 30s

Flags:
`)
		fs.PrintDefaults()
	}
	credFile := fs.String("credentials", "", "the dev server's credentials JSON (-credentials of scripts/dev)")
	duration := fs.Duration("duration", 10*time.Second, "length of each phase")
	quietRate := fs.Int("quiet-rate", 20, "requests a second of the quiet tenant (within its limit)")
	factor := fs.Int("factor", 10, "the noisy tenant sends this many times its key's default limit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := os.ReadFile(*credFile)
	if err != nil {
		return err
	}
	var c credentials
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	if len(c.Accounts) < 2 {
		return fmt.Errorf("the credentials name %d accounts; want 2", len(c.Accounts))
	}
	url := c.AgentStudioURL + "v1/alert-rules"
	if c.AgentStudioURL != "" && c.AgentStudioURL[len(c.AgentStudioURL)-1] != '/' {
		url = c.AgentStudioURL + "/v1/alert-rules"
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}, Timeout: 10 * time.Second}
	noisy, quiet := c.Accounts[0], c.Accounts[1]
	noisyRate := *factor * ratelimit.Default.Rate

	fmt.Fprintf(out, "quiet tenant %s: %d req/s; noisy tenant %s: %d req/s (%dx its limit of %d/s, burst %d); %s per phase; GET %s\n",
		quiet.AccountID, *quietRate, noisy.AccountID, noisyRate, *factor, ratelimit.Default.Rate, ratelimit.Default.Burst, *duration, url)

	// Phase 1: the quiet tenant alone.
	alone := send(context.Background(), client, url, quiet.APIKey, *quietRate, *duration)
	// Phase 2: the same, beside the noisy tenant.
	var wg sync.WaitGroup
	var loud result
	wg.Add(1)
	go func() {
		defer wg.Done()
		loud = send(context.Background(), client, url, noisy.APIKey, noisyRate, *duration)
	}()
	beside := send(context.Background(), client, url, quiet.APIKey, *quietRate, *duration)
	wg.Wait()

	fmt.Fprintf(out, "%-28s %8s %8s %8s %10s %10s %10s\n", "phase", "sent", "2xx", "429", "p50", "p99", "max")
	alone.print(out, "quiet tenant alone")
	beside.print(out, "quiet tenant, noisy beside")
	loud.print(out, "noisy tenant")
	ok := alone.ok == alone.sent && beside.ok == beside.sent
	ratio := float64(beside.quantile(0.99)) / float64(alone.quantile(0.99))
	fmt.Fprintf(out, "quiet tenant success beside the noisy one: %.2f%%; p99 beside / alone: %.2f (target: 100%% and <= 2)\n",
		100*float64(beside.ok)/float64(beside.sent), ratio)
	if !ok || loud.limited == 0 {
		return fmt.Errorf("isolation not held: quiet %d/%d and %d/%d ok, noisy %d refused", alone.ok, alone.sent, beside.ok, beside.sent, loud.limited)
	}
	return nil
}

type result struct {
	sent, ok, limited, failed int
	latencies                 []time.Duration // of the 2xx
}

func (r result) quantile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[min(len(r.latencies)-1, int(q*float64(len(r.latencies))))]
}

func (r result) print(out io.Writer, name string) {
	fmt.Fprintf(out, "%-28s %8d %8d %8d %10s %10s %10s\n", name, r.sent, r.ok, r.limited,
		r.quantile(0.5).Round(time.Microsecond), r.quantile(0.99).Round(time.Microsecond), r.quantile(1).Round(time.Microsecond))
}

// send sends GET url with key at rate a second for d, open-loop.
func send(ctx context.Context, client *http.Client, url, key string, rate int, d time.Duration) result {
	var mu sync.Mutex
	var r result
	var wg sync.WaitGroup
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * interval)
		if at.Sub(start) >= d {
			break
		}
		time.Sleep(time.Until(at))
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			req.Header.Set("x-api-key", key)
			t0 := time.Now()
			res, err := client.Do(req)
			took := time.Since(t0)
			status := 0
			if err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				status = res.StatusCode
			}
			mu.Lock()
			defer mu.Unlock()
			r.sent++
			switch {
			case status >= 200 && status < 300:
				r.ok++
				r.latencies = append(r.latencies, took)
			case status == http.StatusTooManyRequests:
				r.limited++
			default:
				r.failed++
			}
		}()
	}
	wg.Wait()
	slices.Sort(r.latencies)
	return r
}
