//go:build stack

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/scripts/latency"
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

// Time to notify through the stack: a breaching metric event sent to the
// intake → alerts.triggered received and verified at the receiver.
// Figures only (no timing assertion); STACK_NOTIFY_TRIALS sets the number
// of trials (3 by default, 50 or more for the report). Trials alternate:
// a quiet one meets a stream with no data stored for 1.5 s (the
// runner's stream has one shard: any write, an API request's own metrics
// included, would open its window); a busy one
// follows an activity event of its scope by 100 to 900 ms, so the
// breach meets a scope that is being evaluated (the coalescing). Each is
// reported apart, with its stages (notifyTrace).
func TestTimeToNotify(t *testing.T) {
	acct := st.Credentials.Accounts[1]
	rc, ruleID := alertSetup(t, acct)
	key := map[string]string{"x-api-key": acct.APIKey}
	tr := newNotifyTrace()
	st.ObserveInvocations(tr.observe)
	st.PauseSchedules(true) // the stream's path, not the tests' fast schedule
	t.Cleanup(func() { st.ObserveInvocations(nil); st.PauseSchedules(false) })
	// The rule of alertSetup fires at 3; each trial posts 5 errors (it
	// fires), then raises the threshold past the total (it resolves).
	trials := envInt("STACK_NOTIFY_TRIALS", 3)
	var quiet, busy []time.Duration
	var quietStages, busyStages []notifyStages
	var lastWrite time.Time
	for i := range trials {
		isBusy := i%2 == 1
		if isBusy {
			postMetric(t, acct, "activity", 0)
			time.Sleep(time.Duration(100+rand.IntN(800)) * time.Millisecond)
		} else {
			time.Sleep(time.Until(lastWrite.Add(1500 * time.Millisecond)))
		}
		sent := time.Now()
		postMetric(t, acct, "api_errors", 5)
		accepted := time.Now()
		d := rc.next(t, "alerts.triggered", 30*time.Second)
		if d.Verified != nil {
			t.Fatalf("trial %d: %v", i, d.Verified)
		}
		stg := tr.stages(sent, accepted, d)
		if isBusy {
			busy, busyStages = append(busy, d.At.Sub(sent)), append(busyStages, stg)
		} else {
			quiet, quietStages = append(quiet, d.At.Sub(sent)), append(quietStages, stg)
		}
		if code, _, b := call(t, "PATCH", st.Credentials.AgentStudioURL+"/v1/alert-rules/"+ruleID, key, map[string]any{"threshold_value": 5*(i+1) + 3}, nil); code != 200 {
			t.Fatalf("PATCH: %d %s", code, b)
		}
		rc.next(t, "alerts.resolved", 30*time.Second)
		lastWrite = time.Now() // the requests write API metrics of their own
	}
	t.Logf("time to notify, quiet scope: %s", latency.Summary(quiet))
	t.Logf("time to notify, busy scope:  %s", latency.Summary(busy))
	t.Logf("time to notify, all trials:  %s", latency.Summary(append(slices.Clone(quiet), busy...)))
	logStages(t, "quiet", quietStages)
	logStages(t, "busy", busyStages)
}

// postMetric sends one metric event of the account's first project to
// the internal intake.
func postMetric(t *testing.T, acct AccountCredentials, metric string, value float64) {
	t.Helper()
	ev := map[string]any{"account_id": acct.AccountID, "project_id": acct.Projects[0].ProjectID, "metric": metric}
	if value != 0 {
		ev["value"] = value
	}
	code, _, b := call(t, "POST", st.Credentials.AgentStudioURL+"/internal/v1/metric-events", map[string]string{"X-Internal-Key": st.Credentials.InternalKey},
		map[string]any{"events": []map[string]any{ev}}, nil)
	if code/100 != 2 {
		t.Fatalf("metric intake: %d %s", code, b)
	}
}

// notifyTrace records, from the invocations the mappings make, when the
// evaluator got each stream batch (and when its records were written to
// the stream) and when the dispatcher got each message (and when it was
// sent to SQS), so that a trial's time can be split into its stages.
type notifyTrace struct {
	mu    sync.Mutex
	evals []evalInvocation
	disp  map[string]dispatchInvocation // by event ID: the first
}

type evalInvocation struct {
	at      time.Time
	records []time.Time // ApproximateCreationDateTime of each record
}

type dispatchInvocation struct{ at, sent time.Time }

func newNotifyTrace() *notifyTrace { return &notifyTrace{disp: map[string]dispatchInvocation{}} }

func (tr *notifyTrace) observe(fn string, payload []byte) {
	at := time.Now()
	var ev struct {
		Records []struct {
			EventSource string `json:"eventSource"`
			Dynamodb    struct {
				Created float64 `json:"ApproximateCreationDateTime"`
			} `json:"dynamodb"`
			Body       string            `json:"body"`
			Attributes map[string]string `json:"attributes"`
		} `json:"Records"`
	}
	if json.Unmarshal(payload, &ev) != nil || len(ev.Records) == 0 {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch {
	case fn == "evaluator" && ev.Records[0].EventSource == "aws:dynamodb":
		e := evalInvocation{at: at}
		for _, r := range ev.Records {
			sec := r.Dynamodb.Created
			e.records = append(e.records, time.Unix(int64(sec), int64((sec-float64(int64(sec)))*1e9)))
		}
		tr.evals = append(tr.evals, e)
	case fn == "dispatcher":
		for _, r := range ev.Records {
			var m struct {
				EventID string `json:"event_id"`
			}
			ms, err := strconv.ParseInt(r.Attributes["SentTimestamp"], 10, 64)
			if json.Unmarshal([]byte(r.Body), &m) != nil || err != nil {
				continue
			}
			if _, ok := tr.disp[m.EventID]; !ok {
				tr.disp[m.EventID] = dispatchInvocation{at: at, sent: time.UnixMilli(ms)}
			}
		}
	}
}

// notifyStages is one trial split at the points the runner sees:
// sent → accepted (the intake: API, function, table write) → stream record
// created (moto's ApproximateCreationDateTime) → evaluator invoked (the
// poller and the batching window) → message sent to SQS (evaluation,
// event written, fan-out) → dispatcher invoked (the SQS poll) → received
// (the dispatcher's reads, signing, the POST). A stage the trace missed
// is -1.
type notifyStages struct {
	intake, toStream, toEval, evaluate, toDispatch, deliver time.Duration
}

func (tr *notifyTrace) stages(sent, accepted time.Time, d delivery) notifyStages {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	s := notifyStages{intake: accepted.Sub(sent), toStream: -1, toEval: -1, evaluate: -1, toDispatch: -1, deliver: -1}
	di, ok := tr.disp[d.EventID]
	if !ok {
		return s
	}
	s.toDispatch, s.deliver = di.at.Sub(di.sent), d.At.Sub(di.at)
	// The stream batch that fired: the last evaluator invocation before
	// the message was sent, holding a record written after sent.
	for i := len(tr.evals) - 1; i >= 0; i-- {
		e := tr.evals[i]
		if e.at.After(di.sent) || e.at.Before(sent) {
			continue
		}
		var rec time.Time
		for _, r := range e.records {
			if !r.Before(sent.Add(-time.Second)) && r.After(rec) {
				rec = r
			}
		}
		if rec.IsZero() {
			continue
		}
		s.toStream, s.toEval, s.evaluate = rec.Sub(sent), e.at.Sub(rec), di.sent.Sub(e.at)
		break
	}
	return s
}

func logStages(t *testing.T, name string, ss []notifyStages) {
	t.Helper()
	pick := func(f func(notifyStages) time.Duration) []time.Duration {
		var d []time.Duration
		for _, s := range ss {
			if v := f(s); v >= 0 {
				d = append(d, v)
			}
		}
		return d
	}
	for _, c := range []struct {
		stage string
		f     func(notifyStages) time.Duration
	}{
		{"sent → accepted (intake)", func(s notifyStages) time.Duration { return s.intake }},
		{"sent → stream record created", func(s notifyStages) time.Duration { return s.toStream }},
		{"record → evaluator invoked (poll, window)", func(s notifyStages) time.Duration { return s.toEval }},
		{"evaluator invoked → SQS sent", func(s notifyStages) time.Duration { return s.evaluate }},
		{"SQS sent → dispatcher invoked", func(s notifyStages) time.Duration { return s.toDispatch }},
		{"dispatcher invoked → received", func(s notifyStages) time.Duration { return s.deliver }},
	} {
		t.Logf("  %s stage %-42s %s", name, c.stage, latency.Summary(pick(c.f)))
	}
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
