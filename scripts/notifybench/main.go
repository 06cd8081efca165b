// Command notifybench measures the time to notify: from the moment a
// breaching metric event is accepted by the dev server to the moment its
// alerts.triggered delivery reaches a receiver. It runs the experiment of
// issue 9 against a running dev server (embedded, or on moto through the
// metrics table's stream): per round, 12 rules (api_errors,
// function_errors, turn_latency_p95 on the 4 demo projects), each fed one
// breaching event through the internal metric intake, -gap apart; then it
// prints p50, p99 and max over every trial, and apart for quiet and busy
// scopes, and checks that each rule got exactly one alerts.triggered event.
// Every other trial is busy: an activity event of its project 100 to 900
// ms before the breaching one, so that the breach meets a scope evaluated
// within the last second (the coalescer then folds it into the evaluation
// at the end of that second); the others meet a quiet scope.
//
//	go run ./scripts/dev -credentials /tmp/creds.json -allow-loopback-webhooks &
//	go run ./scripts/notifybench -credentials /tmp/creds.json -rounds 2
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

type credentials struct {
	StudioURL   string `json:"agent_studio_url"`
	InternalKey string `json:"internal_key"`
	Accounts    []struct {
		AccountID string `json:"account_id"`
		APIKey    string `json:"api_key"`
		Projects  []struct {
			ProjectID string `json:"project_id"`
		} `json:"projects"`
	} `json:"accounts"`
}

func main() {
	credsPath := flag.String("credentials", "creds.json", "the dev server's credentials `FILE`")
	rounds := flag.Int("rounds", 2, "rounds of 12 trials")
	gap := flag.Duration("gap", 2*time.Second, "time between two events")
	wait := flag.Duration("wait", 90*time.Second, "how long to wait for a round's last delivery")
	verbose := flag.Bool("v", false, "print every trial")
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `Usage: go run ./scripts/notifybench [flags]

Measures the time to notify on a running dev server: from a breaching
metric event accepted to its alerts.triggered delivery received, over 12
rules a round; prints p50, p99 and max, and checks each rule got exactly
one event.

Example:
  go run ./scripts/dev -credentials /tmp/creds.json -allow-loopback-webhooks &
  go run ./scripts/notifybench -credentials /tmp/creds.json -rounds 2

Flags:
`)
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*credsPath, *rounds, *gap, *wait, *verbose, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "notifybench:", err)
		os.Exit(1)
	}
}

// trial is one breaching event and the delivery it caused.
type trial struct {
	rule, metric, project string
	sent, arrived         time.Time
	// busy: the scope was evaluated just before (an activity event 100
	// to 900 ms earlier), so the breach waits for the coalescer's second.
	busy bool
}

// receiver records the first arrival of each event, and the event IDs of
// each rule's alerts.triggered deliveries.
type receiver struct {
	mu        sync.Mutex
	arrived   map[string]time.Time       // rule ID -> first alerts.triggered
	triggered map[string]map[string]bool // rule ID -> event IDs
	changed   chan struct{}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	var body struct {
		EventType string `json:"event_type"`
		EventID   string `json:"event_id"`
		Test      bool   `json:"test"`
		Alert     struct {
			ID string `json:"id"`
		} `json:"alert"`
	}
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &body); err != nil || body.Test || body.EventType != "alerts.triggered" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	rc.mu.Lock()
	if _, ok := rc.arrived[body.Alert.ID]; !ok {
		rc.arrived[body.Alert.ID] = now
	}
	if rc.triggered[body.Alert.ID] == nil {
		rc.triggered[body.Alert.ID] = map[string]bool{}
	}
	rc.triggered[body.Alert.ID][body.EventID] = true
	rc.mu.Unlock()
	select {
	case rc.changed <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

func run(credsPath string, rounds int, gap, wait time.Duration, verbose bool, out io.Writer) error {
	raw, err := os.ReadFile(credsPath)
	if err != nil {
		return err
	}
	var c credentials
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("%s: %w", credsPath, err)
	}
	rc := &receiver{arrived: map[string]time.Time{}, triggered: map[string]map[string]bool{}, changed: make(chan struct{}, 1)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rc, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	hook := "http://" + ln.Addr().String() + "/hook"

	api := client{base: c.StudioURL}
	var endpoints []func()
	defer func() {
		for _, del := range endpoints {
			del()
		}
	}()
	for _, a := range c.Accounts {
		var ep struct {
			ID string `json:"id"`
		}
		if err := api.do("POST", "/v1/webhook-endpoints", a.APIKey, map[string]any{
			"name": "notifybench", "url": hook, "event_types": []string{"alerts.triggered"},
		}, &ep); err != nil {
			return fmt.Errorf("creating an endpoint (is the dev server running with -allow-loopback-webhooks?): %w", err)
		}
		key, id := a.APIKey, ep.ID
		endpoints = append(endpoints, func() { _ = api.do("DELETE", "/v1/webhook-endpoints/"+id, key, nil, nil) })
	}

	var all []trial
	for round := 1; round <= rounds; round++ {
		trials, err := runRound(api, c, rc, round, gap, wait)
		all = append(all, trials...)
		if err != nil {
			return err
		}
	}
	var lat, quiet, busy []time.Duration
	missing := 0
	for _, t := range all {
		if t.arrived.IsZero() {
			missing++
			if verbose {
				fmt.Fprintf(out, "%s %s %s: not delivered\n", t.sent.Format(time.TimeOnly), t.project, t.metric)
			}
			continue
		}
		lat = append(lat, t.arrived.Sub(t.sent))
		if t.busy {
			busy = append(busy, t.arrived.Sub(t.sent))
		} else {
			quiet = append(quiet, t.arrived.Sub(t.sent))
		}
		if verbose {
			fmt.Fprintf(out, "%s %s %s: %v\n", t.sent.Format("15:04:05.000"), t.project, t.metric, t.arrived.Sub(t.sent).Round(time.Millisecond))
		}
	}
	doubled := 0
	rc.mu.Lock()
	for _, t := range all {
		if len(rc.triggered[t.rule]) > 1 {
			doubled++
		}
	}
	rc.mu.Unlock()
	fmt.Fprintf(out, "trials %d, delivered %d, missing %d, doubled %d\n", len(all), len(lat), missing, doubled)
	for _, c := range []struct {
		name string
		lat  []time.Duration
	}{{"time to notify", lat}, {"quiet scopes", quiet}, {"busy scopes", busy}} {
		if len(c.lat) == 0 {
			continue
		}
		slices.Sort(c.lat)
		fmt.Fprintf(out, "%s: p50 %v  p99 %v  max %v  min %v  (%d)\n", c.name,
			quantile(c.lat, 0.50).Round(time.Millisecond), quantile(c.lat, 0.99).Round(time.Millisecond),
			c.lat[len(c.lat)-1].Round(time.Millisecond), c.lat[0].Round(time.Millisecond), len(c.lat))
	}
	if missing > 0 || doubled > 0 {
		return errors.New("some events were not delivered exactly once")
	}
	return nil
}

// quantile is the nearest-rank quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

// runRound creates the round's 12 rules, sends one breaching event per rule
// gap apart, waits for the deliveries and deletes the rules. Thresholds
// grow with the round so that earlier rounds' events (still in the 5-minute
// window) never breach them: counts double (2^round), latencies step by a
// second.
func runRound(api client, c credentials, rc *receiver, round int, gap, wait time.Duration) ([]trial, error) {
	count := int64(1) << round
	latency := int64(1000 * round)
	type ruleSpec struct {
		metric    string
		threshold int64
		kind      string
		value     float64
	}
	specs := []ruleSpec{
		{"api_errors", count, "api_errors", float64(count)},
		{"function_errors", count, "function_errors", float64(count)},
		{"turn_latency_p95", latency, "turn_latency", float64(latency + 500)},
	}
	var trials []trial
	var deletes []func()
	defer func() {
		for _, d := range deletes {
			d()
		}
	}()
	type pending struct {
		trial
		account string
		kind    string
		value   float64
	}
	var pendings []pending
	for _, a := range c.Accounts {
		for _, p := range a.Projects {
			for _, s := range specs {
				var r struct {
					ID string `json:"id"`
				}
				op := ">="
				if s.kind == "turn_latency" {
					op = ">"
				}
				if err := api.do("POST", "/v1/alert-rules", a.APIKey, map[string]any{
					"name": fmt.Sprintf("bench %d %s", round, s.metric), "project_id": p.ProjectID, "metric": s.metric,
					"operator": op, "threshold_value": s.threshold, "window_duration": "5m",
				}, &r); err != nil {
					return trials, fmt.Errorf("creating a rule: %w", err)
				}
				key, id := a.APIKey, r.ID
				deletes = append(deletes, func() { _ = api.do("DELETE", "/v1/alert-rules/"+id, key, nil, nil) })
				pendings = append(pendings, pending{trial: trial{rule: r.ID, metric: s.metric, project: p.ProjectID}, account: a.AccountID, kind: s.kind, value: s.value})
			}
		}
	}
	// Let the rules' first evaluations (no_data) pass: they are not what
	// is measured.
	time.Sleep(2 * time.Second)
	for i := range pendings {
		if i > 0 {
			time.Sleep(gap)
		}
		t := &pendings[i]
		if t.busy = i%2 == 1; t.busy {
			warm := map[string]any{"events": []map[string]any{{"account_id": t.account, "project_id": t.project, "metric": "activity"}}}
			if err := api.doInternal("/internal/v1/metric-events", c.InternalKey, warm); err != nil {
				return trials, fmt.Errorf("sending an activity event: %w", err)
			}
			time.Sleep(time.Duration(100+rand.IntN(800)) * time.Millisecond)
		}
		body := map[string]any{"events": []map[string]any{{
			"account_id": t.account, "project_id": t.project, "metric": t.kind, "value": t.value,
			"at": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		}}}
		t.sent = time.Now() // before the request: the measure includes the intake
		if err := api.doInternal("/internal/v1/metric-events", c.InternalKey, body); err != nil {
			return trials, fmt.Errorf("sending an event: %w", err)
		}
	}
	deadline := time.After(wait)
	for {
		rc.mu.Lock()
		done := true
		for _, t := range pendings {
			if _, ok := rc.arrived[t.rule]; !ok {
				done = false
			}
		}
		rc.mu.Unlock()
		if done {
			break
		}
		select {
		case <-rc.changed:
		case <-time.After(500 * time.Millisecond):
		case <-deadline:
			done = true
		}
		if done {
			break
		}
	}
	rc.mu.Lock()
	for _, t := range pendings {
		t.arrived = rc.arrived[t.rule]
		trials = append(trials, t.trial)
	}
	rc.mu.Unlock()
	return trials, nil
}

type client struct{ base string }

func (c client) do(method, path, key string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	return send(req, out)
}

func (c client) doInternal(path, key string, in any) error {
	b, _ := json.Marshal(in)
	req, err := http.NewRequestWithContext(context.Background(), "POST", c.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("X-Internal-Key", key)
	req.Header.Set("Content-Type", "application/json")
	return send(req, nil)
}

func send(req *http.Request, out any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
