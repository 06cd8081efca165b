//go:build stack

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/voiceops/opsapi/scripts/latency"
	"github.com/voiceops/opsapi/scripts/stack/awsproxy"
	"github.com/voiceops/opsapi/shared/platform/catalog"
	"github.com/voiceops/opsapi/shared/store/dynamo"
)

// trace is what the runner saw of one timed request: the invocation of
// its function, each AWS call that function made meanwhile (at the
// proxy), and the function's own access line.
type trace struct {
	function string
	invoke   time.Duration // the RIE's request to its answer
	calls    []awsCall
	handler  time.Duration // the access line's duration_ms: the handler's whole time
}

// tracer collects the trace of the request being timed: the calls and
// the invocation of the function behind its route (requests are made one
// at a time; the schedules' and mappings' invocations of other functions
// meanwhile are left out).
type tracer struct {
	mu  sync.Mutex
	cur *trace
}

func (tr *tracer) start(function string) *trace {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.cur = &trace{function: function}
	return tr.cur
}

func (tr *tracer) stop() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.cur = nil
}

// awsCall is a call's timing and the items its answer held.
type awsCall struct {
	awsproxy.Timing
	items int
}

func (tr *tracer) call(tm awsproxy.Timing) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.cur != nil && tm.Function == tr.cur.function {
		c := awsCall{Timing: tm, items: answerItems(tm.Answer)}
		c.Answer = nil // the proxy's buffer, valid during the call only
		tr.cur.calls = append(tr.cur.calls, c)
	}
}

// answerItems counts the items of a DynamoDB answer: a GetItem's item, a
// Query's or a BatchGetItem's items (0 for other answers).
func answerItems(answer []byte) int {
	var a struct {
		Item      map[string]json.RawMessage
		Items     []json.RawMessage
		Responses map[string][]json.RawMessage
	}
	if json.Unmarshal(answer, &a) != nil {
		return 0
	}
	n := len(a.Items)
	if a.Item != nil {
		n++
	}
	for _, items := range a.Responses {
		n += len(items)
	}
	return n
}

func (tr *tracer) invoked(fn string, d time.Duration) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.cur != nil && fn == tr.cur.function && tr.cur.invoke == 0 {
		tr.cur.invoke = d
	}
}

// routeFunction is the function that serves a route key ("base GET
// /v3/...", the catalog's host and pattern).
func routeFunction(t *testing.T, key string) string {
	for _, f := range catalog.Functions {
		for _, g := range f.Groups {
			for _, r := range g.Routes {
				if string(g.Host)+" "+r.Pattern() == key {
					return f.Name
				}
			}
		}
	}
	t.Fatalf("no function serves %s", key)
	return ""
}

// observe makes the stack report to tr until the test ends.
func (tr *tracer) observe(t *testing.T) {
	st.Proxy.ObserveCalls(tr.call)
	st.ObserveInvoked(tr.invoked)
	t.Cleanup(func() { st.Proxy.ObserveCalls(nil); st.ObserveInvoked(nil) })
}

// accessDuration reads the handler's duration_ms from the access line of
// request id in the function's log, waiting up to 2 s for the line (the
// log is written as the function prints it). Zero when there is none.
func accessDuration(function, id string) time.Duration {
	if id == "" {
		return 0
	}
	needle := []byte(`"request_id":"` + id + `"`)
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		f, err := os.Open(filepath.Join(st.LogDir, function+".log"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if !bytes.Contains(line, needle) || !bytes.Contains(line, []byte(`"msg":"request"`)) {
				continue
			}
			var l struct {
				DurationMS float64 `json:"duration_ms"`
			}
			if json.Unmarshal(line, &l) == nil {
				f.Close()
				return time.Duration(l.DurationMS * float64(time.Millisecond))
			}
		}
		f.Close()
	}
	return 0
}

// step is a run of AWS calls that overlap in time (one sequential round
// trip): its operations, the time from its first call's arrival to its
// last answer at the proxy, and the longest upstream (moto) share.
type step struct {
	ops      []string
	d, moto  time.Duration
	respSize int
	items    int
}

// steps groups a trace's calls into sequential steps.
func (tr *trace) steps() []step {
	calls := slices.Clone(tr.calls)
	slices.SortFunc(calls, func(a, b awsCall) int { return a.Start.Compare(b.Start) })
	var out []step
	var end time.Time
	var first time.Time
	for _, c := range calls {
		cEnd := c.Start.Add(c.Total)
		if len(out) == 0 || !c.Start.Before(end) {
			out = append(out, step{})
			first, end = c.Start, cEnd
		}
		s := &out[len(out)-1]
		s.ops = append(s.ops, c.Operation+" "+tableName(c.Resource))
		if cEnd.After(end) {
			end = cEnd
		}
		s.d = end.Sub(first)
		s.moto = max(s.moto, c.Upstream)
		s.respSize += c.ResponseBytes
		s.items += c.items
	}
	return out
}

// tableName is the logical table of a table ARN: the physical name's part
// the template derives from it (voiceops-us-conversations → conversations).
func tableName(arn string) string {
	_, name, ok := strings.Cut(arn, ":table/")
	if !ok {
		return arn
	}
	name, _, _ = strings.Cut(name, "/")
	return name[strings.LastIndex(name, "-")+1:]
}

// awsWait is the time at least one AWS call was outstanding.
func (tr *trace) awsWait() time.Duration {
	var d time.Duration
	for _, s := range tr.steps() {
		d += s.d
	}
	return d
}

// page is what a list answer held.
type page struct {
	conversations, turns, bytes int
}

func listPage(t *testing.T, answer []byte) page {
	var a struct {
		Conversations []struct {
			Turns []json.RawMessage `json:"turns"`
		} `json:"conversations"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		t.Fatalf("list answer: %v", err)
	}
	p := page{conversations: len(a.Conversations), bytes: len(answer)}
	for _, c := range a.Conversations {
		p.turns += len(c.Turns)
	}
	return p
}

// breakdown is the traces of a route's trials and of their bare pairs.
type breakdown struct {
	route, bare []*trace
	total       []time.Duration // the route's client-side times, trial by trial
	bareTotal   []time.Duration
	pages       []page
	project     int // conversations in the listed project after the trials
	tableItems  int // items in the conversations table after the trials
}

func med(d []time.Duration) time.Duration {
	return latency.Quantile(d, 0.5).Round(100 * time.Microsecond)
}

func each(ts []*trace, f func(*trace) time.Duration) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = f(t)
	}
	return out
}

// log prints where a route's time went, as medians over its trials: the
// client's time, the invocation (the rest is API Gateway's and the
// client's), the handler (the rest is the RIE and the Lambda runtime
// library), the AWS calls' wait (the rest is the function's own work),
// each sequential step with moto's share, and the page.
func (b *breakdown) log(t *testing.T, route string) {
	if len(b.route) == 0 {
		return
	}
	side := func(name string, total []time.Duration, ts []*trace) {
		invoke := each(ts, func(tr *trace) time.Duration { return tr.invoke })
		wait := each(ts, func(tr *trace) time.Duration { return tr.awsWait() })
		if slices.ContainsFunc(ts, func(tr *trace) bool { return tr.handler == 0 }) {
			// No access line (the bare function writes none): the
			// invocation is only split into the AWS wait and the rest.
			t.Logf("  %s: client %v = API Gateway and client %v + invocation %v (AWS wait %v + RIE, runtime and own work %v)",
				name, med(total), med(sub(total, invoke)), med(invoke), med(wait), med(sub(invoke, wait)))
		} else {
			handler := each(ts, func(tr *trace) time.Duration { return tr.handler })
			t.Logf("  %s: client %v = API Gateway and client %v + invocation %v (RIE and runtime %v + handler %v (AWS wait %v + own work %v))",
				name, med(total), med(sub(total, invoke)), med(invoke), med(sub(invoke, handler)), med(handler), med(wait), med(sub(handler, wait)))
		}
		// The steps of the trials whose calls had the most common shape.
		shapes := map[string][][]step{}
		var common string
		for _, tr := range ts {
			ss := tr.steps()
			var names []string
			for _, s := range ss {
				names = append(names, strings.Join(s.ops, " ‖ "))
			}
			k := strings.Join(names, " → ")
			shapes[k] = append(shapes[k], ss)
			if len(shapes[k]) > len(shapes[common]) {
				common = k
			}
		}
		same := shapes[common]
		t.Logf("    %d of %d trials made %q", len(same), len(ts), common)
		for k, v := range shapes {
			if k != common {
				t.Logf("      (%d made %q)", len(v), k)
			}
		}
		if len(same) == 0 {
			return
		}
		for i := range same[0] {
			var d, moto []time.Duration
			var size, items []time.Duration // counts, as durations for the quantile
			for _, ss := range same {
				d, moto = append(d, ss[i].d), append(moto, ss[i].moto)
				size, items = append(size, time.Duration(ss[i].respSize)), append(items, time.Duration(ss[i].items))
			}
			t.Logf("    step %d %-60s %v (moto %v), %d items, %d bytes", i+1, strings.Join(same[0][i].ops, " ‖ "), med(d), med(moto),
				latency.Quantile(items, 0.5), latency.Quantile(size, 0.5))
		}
	}
	t.Logf("%s: where the time goes (medians of %d trials)", route, len(b.route))
	side("route", b.total, b.route)
	side("bare", b.bareTotal, b.bare)
	if len(b.pages) > 0 {
		var c, tu, by []time.Duration
		for _, p := range b.pages {
			c, tu, by = append(c, time.Duration(p.conversations)), append(tu, time.Duration(p.turns)), append(by, time.Duration(p.bytes))
		}
		t.Logf("  page: %d conversations, %d turns, %d bytes (medians), of the %d conversations the project holds after the trials; the conversations table then holds %d items",
			latency.Quantile(c, 0.5), latency.Quantile(tu, 0.5), latency.Quantile(by, 0.5), b.project, b.tableItems)
	}
}

func sub(a, b []time.Duration) []time.Duration {
	out := make([]time.Duration, len(a))
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return out
}

// String is a one-line trace, for -v logs of single trials.
func (tr *trace) String() string {
	var parts []string
	for _, s := range tr.steps() {
		parts = append(parts, fmt.Sprintf("%s %v (moto %v)", strings.Join(s.ops, " ‖ "), s.d.Round(100*time.Microsecond), s.moto.Round(100*time.Microsecond)))
	}
	return fmt.Sprintf("%s: invoke %v, handler %v: %s", tr.function, tr.invoke.Round(100*time.Microsecond), tr.handler.Round(100*time.Microsecond), strings.Join(parts, " → "))
}

// projectConversations counts the conversations of a project, and the
// items of the conversations table (every project's conversations, turns
// and index entries), read from the table (untimed): moto's Query walks
// every item of a table.
func projectConversations(t *testing.T, accountID, projectID string) (conversations, tableItems int) {
	db := dynamodb.NewFromConfig(st.AWS)
	table := st.Topology.TableNames().Conversations
	all, err := dynamo.NewStores(db, st.Topology.TableNames()).Conversations.ListConversationIntervals(context.Background(),
		accountID, projectID, time.UnixMilli(0), time.Now().Add(time.Minute), "", 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	in := &dynamodb.ScanInput{TableName: &table, Select: "COUNT"}
	for {
		out, err := db.Scan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		tableItems += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return len(all), tableItems
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// quietBackground pauses the schedules until the test ends and waits (up
// to a minute) for the mapped queues to empty: with -schedule-every 2s the
// evaluator's scheduled run sends its 16 shard messages every 2 s (once
// a minute deployed), and a backlog of thousands makes each of moto's
// ReceiveMessage take seconds of its one interpreter, every other call
// waiting behind it. It logs the queues' depths.
func quietBackground(t *testing.T) {
	st.PauseSchedules(true)
	t.Cleanup(func() { st.PauseSchedules(false) })
	q := sqs.NewFromConfig(st.AWS)
	depths := func() (map[string]string, int) {
		out, total := map[string]string{}, 0
		for _, m := range st.Topology.SQS {
			a, err := q.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &m.QueueURL,
				AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
			if err != nil {
				t.Fatal(err)
			}
			n, _ := strconv.Atoi(a.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
			out[m.Function] = strconv.Itoa(n)
			total += n
		}
		return out, total
	}
	before, total := depths()
	start := time.Now()
	for total > 0 && time.Since(start) < time.Minute {
		time.Sleep(time.Second)
		_, total = depths()
	}
	after, _ := depths()
	t.Logf("schedules paused; messages waiting by consumer: %v, after %v: %v", before, time.Since(start).Round(time.Second), after)
}
