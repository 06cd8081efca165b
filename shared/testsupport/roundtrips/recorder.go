// Package roundtrips measures the AWS round trips each HTTP route makes on
// a warm function: the functions' own handlers (their build, as deployed)
// run on moto behind a recording proxy, and each route's calls are held to
// the table Want, which docs/performance.md shows ("AWS round trips per
// request"). On AWS a call costs milliseconds and the in-process work
// microseconds, so a route's latency is mostly its sequential round trips.
package roundtrips

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// Call is one AWS API call as the proxy saw it.
type Call struct {
	Op       string // GetItem, SendMessage, GetSecretValue...
	Resource string // the table's logical name (config), the queue's or secret's name
	Start    time.Time
	End      time.Time
}

func (c Call) String() string { return c.Op + " " + c.Resource }

// Recorder is an HTTP proxy in front of the emulator that notes every call
// it passes. Each call is held for Latency before it is passed on, so that
// calls made one after the other never overlap and calls made in parallel
// always do, whatever the emulator's own speed.
type Recorder struct {
	URL     string // the proxy's address: the functions' AWS_ENDPOINT_URL
	Latency time.Duration
	// TablePrefix is stripped from table names ("test-x-config" is "config").
	TablePrefix string
	// OnInvoke, when set, is Lambda: an asynchronous Invoke (the calls
	// function's steps) is handed to it and answered 202 here.
	OnInvoke func(function string, payload []byte)

	srv   *httptest.Server
	mu    sync.Mutex
	calls []Call
}

// NewRecorder starts a recording proxy to the emulator at endpoint; Close
// stops it.
func NewRecorder(endpoint, tablePrefix string, latency time.Duration) (*Recorder, error) {
	target, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	r := &Recorder{Latency: latency, TablePrefix: tablePrefix}
	proxy := httputil.NewSingleHostReverseProxy(target)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		time.Sleep(r.Latency)
		op, res := r.decode(req, body)
		if op == "Invoke" && r.OnInvoke != nil {
			// The invoke is noted as answered, then its event runs to the
			// end before the caller gets the answer: the step's calls follow
			// the invoke, and the caller's next read finds its reply (Lambda
			// at its quickest), so the path does not depend on timing.
			r.note(Call{Op: op, Resource: res, Start: start, End: time.Now()})
			r.OnInvoke(res, body)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		proxy.ServeHTTP(w, req)
		r.note(Call{Op: op, Resource: res, Start: start, End: time.Now()})
	}))
	r.URL = r.srv.URL
	return r, nil
}

func (r *Recorder) note(c Call) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

// Close stops the proxy.
func (r *Recorder) Close() { r.srv.Close() }

// Take returns the calls since the last Take, by start time.
func (r *Recorder) Take() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// decode names a call by its X-Amz-Target (DynamoDB, SQS's JSON protocol,
// Secrets Manager) and the table, queue or secret its body names.
func (r *Recorder) decode(req *http.Request, body []byte) (op, resource string) {
	target := req.Header.Get("X-Amz-Target")
	if fn, ok := strings.CutPrefix(req.URL.Path, "/2015-03-31/functions/"); ok {
		return "Invoke", strings.TrimSuffix(fn, "/invocations")
	}
	if target == "" {
		return req.Method + " " + req.URL.Path, ""
	}
	op = target[strings.LastIndex(target, ".")+1:]
	var b struct {
		TableName     string
		QueueUrl      string
		SecretId      string
		RequestItems  map[string]json.RawMessage
		TransactItems []map[string]struct{ TableName string }
	}
	_ = json.Unmarshal(body, &b)
	var names []string
	switch {
	case b.TableName != "":
		names = []string{b.TableName}
	case b.QueueUrl != "":
		names = []string{path.Base(b.QueueUrl)}
	case b.SecretId != "":
		names = []string{b.SecretId}
	case len(b.RequestItems) > 0:
		for t := range b.RequestItems {
			names = append(names, t)
		}
	case len(b.TransactItems) > 0:
		for _, ti := range b.TransactItems {
			for _, it := range ti {
				names = append(names, it.TableName)
			}
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		n = strings.TrimPrefix(n, r.TablePrefix)
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return op, strings.Join(out, ",")
}

// Steps groups calls (by start time) into the steps a request waits for in
// turn: a call that starts before every call of the current step has ended
// overlaps it and joins it (they ran in parallel); one that starts later
// begins the next step. The number of steps is the request's sequential
// round trips.
func Steps(calls []Call) [][]Call {
	var out [][]Call
	var end time.Time
	for _, c := range calls {
		if len(out) == 0 || !c.Start.Before(end) {
			out = append(out, []Call{c})
			end = c.End
			continue
		}
		out[len(out)-1] = append(out[len(out)-1], c)
		if c.End.After(end) {
			end = c.End
		}
	}
	return out
}

// Path writes steps as the table does: the steps in order joined by " → ",
// the calls of one step (in parallel) by " ‖ ", each sorted, "—" for none.
func Path(steps [][]Call) string {
	if len(steps) == 0 {
		return "—"
	}
	parts := make([]string, len(steps))
	for i, s := range steps {
		names := make([]string, len(s))
		for j, c := range s {
			names[j] = c.String()
		}
		sort.Strings(names)
		parts[i] = strings.Join(names, " ‖ ")
	}
	return strings.Join(parts, " → ")
}
