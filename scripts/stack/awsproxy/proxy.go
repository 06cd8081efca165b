// Package awsproxy is the AWS endpoint the functions of the stack runner
// call (their AWS_ENDPOINT_URL): it names the caller by the access key ID
// of its SigV4 credential (each function has its own), checks the call
// against that function's role policies from the template, answers AWS's
// AccessDenied when they do not allow it, and forwards the rest to moto. It
// also serves Lambda's Invoke API by running the named function.
package awsproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/voiceops/opsapi/scripts/stack/iam"
)

// Principal is a function as IAM sees it: its role's policies.
type Principal struct {
	Function string // template function name, e.g. alerts
	Role     string // role name, for the messages
	Policy   iam.Policy
}

// Invoker runs a function of the stack with a payload. Its result is the
// function's output; functionError is set when the function failed.
type Invoker func(ctx context.Context, function string, payload []byte, async bool) (out []byte, functionError bool, err error)

// Denial is one call the policies refused.
type Denial struct {
	Function string
	Request  iam.Request
}

func (d Denial) String() string { return d.Function + ": " + d.Request.String() }

// Proxy is the AWS endpoint of the functions.
type Proxy struct {
	Upstream *url.URL // moto
	// Bedrock receives the Bedrock Runtime calls that the caller's
	// policy allows (the runner's stand-in); nil refuses them.
	Bedrock    *url.URL
	Principals map[string]Principal // by access key ID; set before serving, then AddPrincipal
	ARNs       ARNs
	SecretARN  func(name string) string // a secret's ARN by name, "" if unknown
	// Functions maps a Lambda function name (as Invoke names it) to the
	// template function.
	Functions map[string]string
	Invoke    Invoker
	Log       *slog.Logger
	Client    *http.Client

	// Throttled, when set, is told of each DynamoDB call answered with an
	// injected throttle: the table and whether it read or wrote, for the
	// service's ReadThrottleEvents and WriteThrottleEvents.
	Throttled func(function, table string, write bool)

	dynamoMu sync.RWMutex // held while moto serves a DynamoDB call: shared by reads

	mu        sync.Mutex
	observe   func(Timing)
	delays    map[string]time.Duration   // by function: fault injection for tests
	denied    map[string]map[string]bool // by function, actions: injected refusals
	throttles map[string]bool            // by function: DynamoDB answers throttles
	denials   []Denial
	used      map[string]map[iam.Grant]bool // by function
}

// Check authorizes a call made on behalf of a function by a service (an
// event source mapping polling its queue or stream with the function's
// role). It records the denial or the grants used.
func (p *Proxy) Check(function string, reqs []iam.Request) error {
	for _, pr := range p.principals() {
		if pr.Function != function {
			continue
		}
		ok, refused, used := pr.Policy.EvaluateAll(reqs)
		p.record(function, ok, refused, used)
		if !ok {
			return fmt.Errorf("AccessDenied: %s", Denial{Function: function, Request: refused})
		}
		return nil
	}
	return fmt.Errorf("no principal for function %s", function)
}

func (p *Proxy) record(function string, ok bool, refused iam.Request, used []iam.Grant) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !ok {
		p.denials = append(p.denials, Denial{Function: function, Request: refused})
		if p.Log != nil {
			p.Log.Error("AccessDenied", "function", function, "action", refused.Action, "resource", refused.Resource)
		}
		return
	}
	if p.used == nil {
		p.used = map[string]map[iam.Grant]bool{}
	}
	if p.used[function] == nil {
		p.used[function] = map[iam.Grant]bool{}
	}
	for _, g := range used {
		p.used[function][g] = true
	}
}

// Denials returns every refused call so far.
func (p *Proxy) Denials() []Denial {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.denials)
}

// TakeDenials removes the refused calls that match and returns them: a
// scenario that provokes a refusal on purpose asserts it and takes it out
// of the run's record, which must otherwise stay empty.
func (p *Proxy) TakeDenials(match func(Denial) bool) []Denial {
	p.mu.Lock()
	defer p.mu.Unlock()
	var taken, kept []Denial
	for _, d := range p.denials {
		if match(d) {
			taken = append(taken, d)
		} else {
			kept = append(kept, d)
		}
	}
	p.denials = kept
	return taken
}

// Unused lists, per function, the grants of its role that no call used.
func (p *Proxy) Unused() map[string][]iam.Grant {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string][]iam.Grant{}
	for _, pr := range p.Principals {
		for _, g := range pr.Policy.Grants() {
			if !p.used[pr.Function][g] {
				out[pr.Function] = append(out[pr.Function], g)
			}
		}
	}
	return out
}

// AddPrincipal makes a caller known while the proxy serves: a function
// added after the start, its calls checked against its own policy as the
// template's functions' are.
func (p *Proxy) AddPrincipal(accessKeyID string, pr Principal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.Principals == nil {
		p.Principals = map[string]Principal{}
	}
	p.Principals[accessKeyID] = pr
}

func (p *Proxy) principal(accessKeyID string) (Principal, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr, ok := p.Principals[accessKeyID]
	return pr, ok
}

func (p *Proxy) principals() []Principal {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Principal, 0, len(p.Principals))
	for _, pr := range p.Principals {
		out = append(out, pr)
	}
	return out
}

var credentialRE = regexp.MustCompile(`Credential=([^/,\s]+)/`)

// SetDelay makes every AWS call of a function take d longer (0 removes
// it): a slow dependency, to drive a request past its deadline.
func (p *Proxy) SetDelay(function string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.delays == nil {
		p.delays = map[string]time.Duration{}
	}
	p.delays[function] = d
}

func (p *Proxy) delay(function string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delays[function]
}

// Deny makes the proxy refuse an action (e.g. sqs:SendMessage) to a
// function, as if its policy lacked it, until Allow: a fault to inject.
// Injected refusals are not Denials (the template's policies allowed them).
func (p *Proxy) Deny(function, action string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.denied == nil {
		p.denied = map[string]map[string]bool{}
	}
	if p.denied[function] == nil {
		p.denied[function] = map[string]bool{}
	}
	p.denied[function][strings.ToLower(action)] = true
}

// Allow ends Deny.
func (p *Proxy) Allow(function, action string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.denied[function], strings.ToLower(action))
}

// SetThrottle makes every DynamoDB call of a function answer
// ProvisionedThroughputExceededException (on) or reach the table (off), as
// a table over its capacity does.
func (p *Proxy) SetThrottle(function string, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.throttles == nil {
		p.throttles = map[string]bool{}
	}
	p.throttles[function] = on
}

func (p *Proxy) fault(function string, reqs []iam.Request) (denied *iam.Request, throttled bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range reqs {
		if p.denied[function][strings.ToLower(r.Action)] {
			return &r, false
		}
	}
	return nil, p.throttles[function] && len(reqs) > 0 && strings.HasPrefix(reqs[0].Action, "dynamodb:")
}

// Timing is one call the proxy forwarded, as it saw it: Total from its
// arrival to its answer read whole from upstream, Upstream the part spent
// on moto (or the Bedrock stand-in): the request sent to its answer read.
// The rest of Total is the proxy's own work (the IAM check, the copy).
type Timing struct {
	Function  string
	Operation string // the X-Amz-Target's operation (Query), or the REST path
	Resource  string // the first resource the call names (a table's ARN)
	Start     time.Time
	Total     time.Duration
	Upstream  time.Duration
	// RequestBytes and ResponseBytes are the bodies' sizes.
	RequestBytes, ResponseBytes int
	// Answer is the answer's body, for the observer to read during its
	// call (the caller gets it once the observer returns).
	Answer []byte
}

// ObserveCalls hands f the timing of every call forwarded upstream once
// it is answered, before the caller gets the answer (nil stops): what
// each AWS call of a request cost. f's own time delays the call.
func (p *Proxy) ObserveCalls(f func(Timing)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observe = f
}

func (p *Proxy) observer() func(Timing) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.observe
}

// AccessKeyID reads the access key ID of a SigV4 Authorization header.
func AccessKeyID(authorization string) string {
	m := credentialRE.FindStringSubmatch(authorization)
	if m == nil {
		return ""
	}
	return m[1]
}

// ServeHTTP is the functions' AWS_ENDPOINT_URL: every service but
// Bedrock Runtime, which has its own endpoint (BedrockRuntime).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.serve(w, r, false) }

// BedrockRuntime is the functions' AWS_ENDPOINT_URL_BEDROCK_RUNTIME: the
// same checks, for Bedrock Runtime's calls only. Each endpoint refuses
// the other's calls, so a function that reached the stand-in did so
// through the SDK's standard variable.
func (p *Proxy) BedrockRuntime() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serve(w, r, true) })
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, bedrockEndpoint bool) {
	start := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if IsBedrock(r.URL.Path) != bedrockEndpoint {
		msg := "Bedrock Runtime is not served here: its endpoint is AWS_ENDPOINT_URL_BEDROCK_RUNTIME"
		if bedrockEndpoint {
			msg = "only Bedrock Runtime is served here: the other services' endpoint is AWS_ENDPOINT_URL"
		}
		writeError(w, r, http.StatusNotFound, "UnknownOperationException", msg)
		return
	}
	key := AccessKeyID(r.Header.Get("Authorization"))
	pr, ok := p.principal(key)
	if !ok {
		writeError(w, r, http.StatusForbidden, "UnrecognizedClientException", fmt.Sprintf("The security token included in the request is invalid (access key %q is no function's).", key))
		return
	}
	call := Call{Target: r.Header.Get("X-Amz-Target"), Path: r.URL.Path, Method: r.Method, Body: body}
	reqs, err := Requests(p.ARNs, call, p.SecretARN)
	if err != nil {
		if p.Log != nil {
			p.Log.Error("unreadable AWS call", "function", pr.Function, "err", err)
		}
		writeError(w, r, http.StatusBadRequest, "ValidationException", err.Error())
		return
	}
	allowed, refused, used := pr.Policy.EvaluateAll(reqs)
	p.record(pr.Function, allowed, refused, used)
	if !allowed {
		msg := fmt.Sprintf("User: arn:%s:sts::%s:assumed-role/%s/%s is not authorized to perform: %s on resource: %s because no identity-based policy allows the %s action",
			p.ARNs.Partition, p.ARNs.Account, pr.Role, pr.Function, refused.Action, refused.Resource, refused.Action)
		writeError(w, r, http.StatusForbidden, "AccessDeniedException", msg)
		return
	}
	if refused, throttled := p.fault(pr.Function, reqs); refused != nil {
		msg := fmt.Sprintf("User: arn:%s:sts::%s:assumed-role/%s/%s is not authorized to perform: %s on resource: %s (injected)",
			p.ARNs.Partition, p.ARNs.Account, pr.Role, pr.Function, refused.Action, refused.Resource)
		writeError(w, r, http.StatusForbidden, "AccessDeniedException", msg)
		return
	} else if throttled {
		if p.Throttled != nil {
			for _, rq := range reqs {
				p.Throttled(pr.Function, tableOf(rq.Resource), isWrite(rq.Action))
			}
		}
		writeError(w, r, http.StatusBadRequest, "ProvisionedThroughputExceededException",
			"The level of configured provisioned throughput for the table was exceeded (injected).")
		return
	}
	if d := p.delay(pr.Function); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	if strings.HasPrefix(r.URL.Path, "/2015-03-31/functions/") {
		p.serveInvoke(w, r, body)
		return
	}
	if IsBedrock(r.URL.Path) {
		if p.Bedrock == nil {
			writeError(w, r, http.StatusServiceUnavailable, "ServiceUnavailableException", "no Bedrock Runtime stand-in in this run")
			return
		}
		p.forwardObserved(w, r, body, p.Bedrock, pr.Function, reqs, start)
		return
	}
	if op, ok := strings.CutPrefix(call.Target, dynamoDBTarget); ok {
		// A DynamoDB write reaches moto alone, as DynamoDB applies each
		// write atomically: moto applies an UpdateItem to the stored item
		// attribute by attribute (a read meanwhile sees half of it) and
		// checks two conditional writes or transactions arriving together
		// against the same state (both pass, where DynamoDB refuses one).
		// Reads still overlap one another.
		if dynamoReads[op] {
			p.dynamoMu.RLock()
			defer p.dynamoMu.RUnlock()
		} else {
			p.dynamoMu.Lock()
			defer p.dynamoMu.Unlock()
		}
	}
	p.forwardObserved(w, r, body, p.Upstream, pr.Function, reqs, start)
}

// dynamoReads are the DynamoDB operations that change nothing; any other
// is served alone.
var dynamoReads = map[string]bool{
	"GetItem": true, "BatchGetItem": true, "Query": true, "Scan": true, "TransactGetItems": true,
	"DescribeTable": true, "DescribeTimeToLive": true, "ListTables": true, "DescribeContinuousBackups": true,
}

// dynamoDBTarget prefixes the X-Amz-Target of DynamoDB's operations (not
// DynamoDB Streams', "DynamoDBStreams_20120810.").
const dynamoDBTarget = "DynamoDB_20120810."

// forwardObserved is forward, its timing handed to the observer if any
// before the caller gets a byte of the answer: a caller that has its
// answer finds the call observed.
func (p *Proxy) forwardObserved(w http.ResponseWriter, r *http.Request, body []byte, upstream *url.URL, function string, reqs []iam.Request, start time.Time) {
	f := p.observer()
	if f == nil {
		p.forward(w, r, body, upstream, nil)
		return
	}
	tm := Timing{Function: function, Operation: operation(r), Start: start, RequestBytes: len(body)}
	if len(reqs) > 0 {
		tm.Resource = reqs[0].Resource
	}
	p.forward(w, r, body, upstream, func(upstream time.Duration, answer []byte) {
		tm.Upstream, tm.Answer, tm.ResponseBytes = upstream, answer, len(answer)
		tm.Total = time.Since(start)
		f(tm)
	})
}

// operation names a call: the X-Amz-Target's operation, else the path.
func operation(r *http.Request) string {
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		_, op, _ := strings.Cut(t, ".")
		return op
	}
	return r.URL.Path
}

// serveInvoke is Lambda's Invoke API for the stack's own functions.
func (p *Proxy) serveInvoke(w http.ResponseWriter, r *http.Request, body []byte) {
	name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/2015-03-31/functions/"), "/invocations")
	name, _ = url.PathUnescape(name)
	if i := strings.LastIndex(name, ":function:"); i >= 0 {
		name = name[i+len(":function:"):]
	}
	name, _, _ = strings.Cut(name, ":")
	fn, ok := p.Functions[name]
	if !ok {
		w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
		writeJSON(w, http.StatusNotFound, map[string]string{"Type": "User", "Message": "Function not found: " + p.ARNs.Function(name)})
		return
	}
	async := r.Header.Get("X-Amz-Invocation-Type") == "Event"
	out, fnErr, err := p.Invoke(r.Context(), fn, body, async)
	if err != nil {
		w.Header().Set("X-Amzn-ErrorType", "ServiceException")
		writeJSON(w, http.StatusInternalServerError, map[string]string{"Type": "Service", "Message": err.Error()})
		return
	}
	if async {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if fnErr {
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// forward sends the call upstream and copies its answer back; answered,
// when not nil, is given the time from sending the call to its answer
// read whole, and the answer, before the answer is copied back.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, body []byte, upstream *url.URL, answered func(time.Duration, []byte)) {
	u := *upstream
	u.Path = r.URL.Path
	u.RawQuery = r.URL.RawQuery
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range r.Header {
		req.Header[k] = v
	}
	client := p.Client
	if client == nil {
		client = http.DefaultClient
	}
	sent := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	// Read whole before the copy back, so that the upstream's time is
	// its own, not the caller's reading.
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if answered != nil {
		answered(time.Since(sent), answer)
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// writeError answers in the caller's protocol: the JSON protocols'
// __type (DynamoDB, SQS, Secrets Manager), or Lambda's and Bedrock
// Runtime's REST errors.
func writeError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	if IsBedrock(r.URL.Path) {
		w.Header().Set("X-Amzn-ErrorType", code)
		writeJSON(w, status, map[string]string{"message": msg})
		return
	}
	if strings.HasPrefix(r.URL.Path, "/2015-03-31/") {
		w.Header().Set("X-Amzn-ErrorType", code)
		writeJSON(w, status, map[string]string{"Type": "User", "Message": msg})
		return
	}
	if strings.HasPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.") {
		// SQS's JSON protocol also names the query error code.
		w.Header().Set("X-Amzn-Query-Error", strings.TrimSuffix(code, "Exception")+";Sender")
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if status == http.StatusForbidden {
		status = http.StatusBadRequest // the JSON protocols answer 400 with the type
	}
	writeJSON(w, status, map[string]string{"__type": "com.amazon.coral.service#" + code, "message": msg, "Message": msg})
}

// tableOf is the table of a DynamoDB resource ARN (its index's too).
func tableOf(arn string) string {
	_, rest, ok := strings.Cut(arn, ":table/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

func isWrite(action string) bool {
	a := strings.TrimPrefix(action, "dynamodb:")
	return strings.HasPrefix(a, "Put") || strings.HasPrefix(a, "Update") || strings.HasPrefix(a, "Delete") ||
		strings.HasPrefix(a, "BatchWrite") || strings.HasPrefix(a, "TransactWrite") || a == "ConditionCheckItem"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
