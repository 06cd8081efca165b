package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/scripts/latency"
	"github.com/voiceops/opsapi/scripts/stack/awsproxy"
	"github.com/voiceops/opsapi/shared/platform/catalog"
)

// trace is what the runner saw of one timed request: the invocation of
// its function, each AWS call that function made meanwhile (at the
// proxy), and the function's own access line.
type trace struct {
	function string
	invoke   time.Duration // the RIE's request to its answer
	calls    []awsproxy.Timing
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

// call keeps a call of the traced function, with a copy of its answer
// (read after the trial: the proxy waits for the observer to answer).
func (tr *tracer) call(tm awsproxy.Timing) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.cur != nil && tm.Function == tr.cur.function {
		tm.Answer = bytes.Clone(tm.Answer)
		tr.cur.calls = append(tr.cur.calls, tm)
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
	slices.SortFunc(calls, func(a, b awsproxy.Timing) int { return a.Start.Compare(b.Start) })
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
		s.items += answerItems(c.Answer)
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

// TestTraceSteps: calls that overlap are one step (its time their union,
// moto's share the longest upstream, the items and bytes summed); a call
// that starts after the last one ended starts the next step; the AWS wait
// is the steps' sum, gaps between them excluded. The tracer keeps only
// the traced function's calls and invocation.
func TestTraceSteps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	arn := "arn:aws:dynamodb:us-east-1:123456789012:table/voiceops-us-conversations"
	var tr tracer
	cur := tr.start("conversations")
	for _, c := range []struct {
		fn, op       string
		start, d, up int
		answer       string
	}{
		{"conversations", "UpdateItem", 0, 5, 4, `{}`},
		{"conversations", "Query", 7, 10, 9, `{"Items":[{},{},{}],"Count":3}`},
		{"sweeper", "Query", 8, 50, 49, `{"Items":[{}],"Count":1}`}, // another function's, meanwhile
		{"conversations", "Query", 20, 30, 29, `{"Items":[{},{}],"Count":2}`},
		{"conversations", "Query", 22, 40, 38, `{"Items":[{}],"Count":1}`}, // overlaps the one before
		{"conversations", "BatchGetItem", 70, 8, 7, `{"Responses":{"t":[{},{}],"u":[{}]}}`},
	} {
		tr.call(awsproxy.Timing{Function: c.fn, Operation: c.op, Resource: arn, Start: t0.Add(ms(c.start)), Total: ms(c.d), Upstream: ms(c.up),
			ResponseBytes: len(c.answer), Answer: []byte(c.answer)})
	}
	tr.invoked("sweeper", ms(60))
	tr.invoked("conversations", ms(90))
	tr.invoked("conversations", ms(1)) // another invocation of it, after the traced one
	tr.stop()
	tr.call(awsproxy.Timing{Function: "conversations", Operation: "GetItem", Resource: arn, Start: t0.Add(ms(100)), Total: ms(1)})

	if cur.invoke != ms(90) {
		t.Errorf("invocation %v, want the traced function's first, 90ms", cur.invoke)
	}
	got := cur.steps()
	want := []struct {
		ops     string
		d, moto time.Duration
		items   int
	}{
		{"UpdateItem conversations", ms(5), ms(4), 0},
		{"Query conversations", ms(10), ms(9), 3},
		{"Query conversations ‖ Query conversations", ms(42), ms(38), 3},
		{"BatchGetItem conversations", ms(8), ms(7), 3},
	}
	if len(got) != len(want) {
		t.Fatalf("%d steps %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		if g := got[i]; strings.Join(g.ops, " ‖ ") != w.ops || g.d != w.d || g.moto != w.moto || g.items != w.items {
			t.Errorf("step %d = %v %v (moto %v) %d items, want %v %v (moto %v) %d items", i+1, g.ops, g.d, g.moto, g.items, w.ops, w.d, w.moto, w.items)
		}
	}
	if w := cur.awsWait(); w != ms(5+10+42+8) {
		t.Errorf("AWS wait %v, want 65ms", w)
	}
}

// TestAnswerItems counts the items of each DynamoDB answer shape.
func TestAnswerItems(t *testing.T) {
	for answer, want := range map[string]int{
		`{"Item":{"pk":{"S":"a"}}}`:      1,
		`{}`:                             0,
		`{"Items":[{},{},{}],"Count":3}`: 3,
		`{"Responses":{"a":[{},{}],"b":[{}]},"UnprocessedKeys":{}}`: 3,
		`not json`: 0,
	} {
		if got := answerItems([]byte(answer)); got != want {
			t.Errorf("answerItems(%s) = %d, want %d", answer, got, want)
		}
	}
}

// TestRouteNames: a table ARN's logical name (an index's too), a route
// key's function by the catalog, a list answer's page.
func TestRouteNames(t *testing.T) {
	if got := tableName("arn:aws:dynamodb:us-east-1:1:table/voiceops-us-conversations/index/idle"); got != "conversations" {
		t.Errorf("tableName = %q", got)
	}
	if got := routeFunction(t, "base GET /v3/{account_id}/{project_id}/conversations"); got != "conversations" {
		t.Errorf("routeFunction = %q", got)
	}
	if got := routeFunction(t, "studio PATCH /v1/alert-rules/{rule_id}"); got != "alerts" {
		t.Errorf("routeFunction = %q", got)
	}
	answer := `{"conversations":[{"id":"a","turns":[{},{}]},{"id":"b","turns":[{}]},{"id":"c"}],"next_offset":3}`
	if got := listPage(t, []byte(answer)); got != (page{conversations: 3, turns: 3, bytes: len(answer)}) {
		t.Errorf("listPage = %+v", got)
	}
}
