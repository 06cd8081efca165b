// Command notifybench measures the time to notify: from the moment a
// breaching metric event is accepted by the dev server to the moment its
// alerts.triggered delivery reaches a receiver. It runs against a running dev server (embedded, or on moto through the
// metrics table's stream): per round, 12 rules (api_errors,
// function_errors, turn_latency_p95 on the 4 demo projects), each fed one
// breaching event through the internal metric intake, -gap apart; then it
// prints, for quiet and busy scopes apart and then for all, n, p50, p99
// (over 25 trials or more; below, the max of n), min and max, and checks
// that each rule got exactly one alerts.triggered event.
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
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/voiceops/opsapi/scripts/latency"
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
rules a round; prints n, p50, p99, min and max for quiet and busy
scopes apart (a p99 only over 25 trials or more), and checks each rule
got exactly one event.

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
	// early: the rule was firing before its breach was sent (data of an
	// earlier run still in the window): the trial measures nothing.
	early bool
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
	rc.mu.Lock()
	r := tally(all, func(rule string) int { return len(rc.triggered[rule]) })
	rc.mu.Unlock()
	if verbose {
		for _, t := range all {
			switch {
			case t.fired():
				fmt.Fprintf(out, "%s %s %s: fired before its breach, discarded\n", t.sent.Format("15:04:05.000"), t.project, t.metric)
			case t.arrived.IsZero():
				fmt.Fprintf(out, "%s %s %s: not delivered\n", t.sent.Format("15:04:05.000"), t.project, t.metric)
			default:
				fmt.Fprintf(out, "%s %s %s: %v\n", t.sent.Format("15:04:05.000"), t.project, t.metric, t.arrived.Sub(t.sent).Round(time.Millisecond))
			}
		}
	}
	r.print(out)
	if r.missing > 0 || r.doubled > 0 {
		return errors.New("some events were not delivered exactly once")
	}
	return nil
}

// fired reports whether the trial's rule fired before its breach: it was
// firing already, or its alerts.triggered arrived before the breach was
// sent (a negative time to notify).
func (t trial) fired() bool {
	return t.early || (!t.arrived.IsZero() && t.arrived.Before(t.sent))
}

// report is what the trials measured.
type report struct {
	trials, missing, doubled int
	// discarded are the trials whose rule fired before their breach.
	discarded        int
	lat, quiet, busy []time.Duration
}

// tally sorts the trials: those whose rule fired before their breach are
// discarded (counted, never measured); the rest are measured, missing, or
// doubled (triggered tells how many alerts.triggered events a rule got).
func tally(all []trial, triggered func(rule string) int) report {
	r := report{trials: len(all)}
	for _, t := range all {
		if t.fired() {
			r.discarded++
			continue
		}
		if triggered(t.rule) > 1 {
			r.doubled++
		}
		if t.arrived.IsZero() {
			r.missing++
			continue
		}
		d := t.arrived.Sub(t.sent)
		r.lat = append(r.lat, d)
		if t.busy {
			r.busy = append(r.busy, d)
		} else {
			r.quiet = append(r.quiet, d)
		}
	}
	return r
}

func (r report) print(out io.Writer) {
	fmt.Fprintf(out, "trials %d, delivered %d, missing %d, doubled %d, discarded %d (fired before their breach)\n",
		r.trials, len(r.lat), r.missing, r.doubled, r.discarded)
	// Quiet and busy scopes wait for different things (the first
	// evaluation against the coalescer's interval): each is reported on
	// its own, with its n.
	fmt.Fprintf(out, "quiet scopes: %s\n", latency.Summary(r.quiet))
	fmt.Fprintf(out, "busy scopes:  %s\n", latency.Summary(r.busy))
	fmt.Fprintf(out, "all trials:   %s\n", latency.Summary(r.lat))
}

// runRound creates the round's 12 rules, sends one breaching event per rule
// gap apart, waits for the deliveries and deletes the rules. Each trial
// starts from a quiet scope: a rule's threshold lies above what its scope
// already holds in the window (earlier rounds', or an earlier run's,
// events: thresholds), and a rule found firing before its breach is sent
// is not sent one and is discarded.
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
		{"api_errors", count, "api_errors", 0},
		{"function_errors", count, "function_errors", 0},
		{"turn_latency_p95", latency, "turn_latency", 0},
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
				held, err := api.windowValue(a.APIKey, p.ProjectID, s.metric)
				if err != nil {
					return trials, fmt.Errorf("reading the scope's window: %w", err)
				}
				s.threshold, s.value = thresholds(s.kind, s.threshold, held)
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
		var rule struct {
			State string `json:"current_state"`
		}
		if err := api.do("GET", "/v1/alert-rules/"+t.rule, c.keyOf(t.account), nil, &rule); err != nil {
			return trials, fmt.Errorf("reading a rule: %w", err)
		}
		if t.early = rule.State == "alert"; t.early {
			continue
		}
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
			if _, ok := rc.arrived[t.rule]; !ok && !t.early {
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

// thresholds returns a rule's threshold and its breaching event's value,
// given the round's threshold and what the scope holds in the window
// (held: a count's sum, a latency's highest p95 of a minute). A count's
// threshold lies above what is held and its event alone reaches it, so
// that the rule neither fires before the breach nor misses it when older
// events leave the window. A latency's threshold lies above every held
// latency, and its event above the threshold.
func thresholds(kind string, round, held int64) (threshold int64, value float64) {
	if kind == "turn_latency" {
		threshold = max(round, held+1)
		return threshold, float64(threshold + 500)
	}
	threshold = held + round
	return threshold, float64(threshold)
}

// windowValue reads what the project holds of metric over the last 7
// minutes (a rule's 5-minute window and a margin): the sum of a count,
// the highest minute of a latency.
func (c client) windowValue(key, project, metric string) (int64, error) {
	now := time.Now().UTC()
	q := url.Values{"metric": {metric}, "project_id": {project}, "step": {"1m"},
		"from": {now.Add(-7 * time.Minute).Format(time.RFC3339)}, "to": {now.Format(time.RFC3339)}}
	var s struct {
		Data []struct {
			Value *int64 `json:"value"`
		} `json:"data"`
	}
	if err := c.do("GET", "/v1/metrics?"+q.Encode(), key, nil, &s); err != nil {
		return 0, err
	}
	var held int64
	for _, p := range s.Data {
		switch {
		case p.Value == nil:
		case metric == "turn_latency_p95":
			held = max(held, *p.Value)
		default:
			held += *p.Value
		}
	}
	return held, nil
}

// keyOf is the API key of an account of the credentials.
func (c credentials) keyOf(account string) string {
	for _, a := range c.Accounts {
		if a.AccountID == account {
			return a.APIKey
		}
	}
	return ""
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
