// Package tracing puts the functions' AWS SDK calls and webhook POSTs into
// AWS X-Ray as subsegments of the function's segment, by sending segment
// documents to the X-Ray daemon Lambda runs beside the function (UDP, the
// documented "segment document" format). It is what the X-Ray SDK does
// for these two cases, without the SDK's start-up work (sampling rules,
// plugins, its context machinery): a function pays nothing at start, and
// a few microseconds per traced call.
//
// Lambda decides the sampling: only an invocation whose trace header says
// Sampled=1 emits anything, and only when AWS_XRAY_DAEMON_ADDRESS is set
// (active tracing on; infra's "tracing" context key).
package tracing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"time"
)

// DaemonEnv is where Lambda tells the daemon's address.
const DaemonEnv = "AWS_XRAY_DAEMON_ADDRESS"

// Tracer sends subsegments to the daemon. A nil Tracer traces nothing.
type Tracer struct {
	addr string
	now  func() time.Time
	// send writes one UDP datagram; a test replaces it.
	send func([]byte) error

	mu   sync.Mutex
	conn net.Conn
}

// FromEnv returns the tracer of a function, or nil when tracing is off.
func FromEnv(getenv func(string) string) *Tracer {
	addr := getenv(DaemonEnv)
	if addr == "" {
		return nil
	}
	// The variable may list a TCP and a UDP address ("tcp:ip:port udp:ip:port").
	if _, udp, ok := strings.Cut(addr, "udp:"); ok {
		addr, _, _ = strings.Cut(udp, " ")
	}
	return New(addr, time.Now)
}

// New returns a tracer sending to the daemon at addr (host:port).
func New(addr string, now func() time.Time) *Tracer {
	t := &Tracer{addr: addr, now: now}
	t.send = t.sendUDP
	return t
}

// NewWith returns a tracer handing each datagram to send (tests).
func NewWith(send func([]byte) error, now func() time.Time) *Tracer {
	return &Tracer{now: now, send: send}
}

func (t *Tracer) sendUDP(b []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn == nil {
		c, err := net.Dial("udp", t.addr)
		if err != nil {
			return err
		}
		t.conn = c
	}
	_, err := t.conn.Write(b)
	return err
}

// Header is an X-Ray trace header (X-Amzn-Trace-Id).
type Header struct {
	Root, Parent string
	Sampled      bool
}

// ParseHeader reads "Root=1-...;Parent=...;Sampled=1".
func ParseHeader(s string) Header {
	var h Header
	for _, part := range strings.Split(s, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Root":
			h.Root = v
		case "Parent":
			h.Parent = v
		case "Sampled":
			h.Sampled = v == "1"
		}
	}
	return h
}

// lambdaTraceKey is the context key aws-lambda-go puts each invocation's
// trace header under.
const lambdaTraceKey = "x-amzn-trace-id"

type ctxKey int

const (
	parentKey ctxKey = iota
	annotationsKey
)

// parent is the trace and segment a new subsegment belongs to.
type parent struct {
	root, id string
}

func parentOf(ctx context.Context) (parent, bool) {
	if p, ok := ctx.Value(parentKey).(parent); ok {
		return p, true
	}
	s, _ := ctx.Value(lambdaTraceKey).(string)
	h := ParseHeader(s)
	if !h.Sampled || h.Root == "" || h.Parent == "" {
		return parent{}, false
	}
	return parent{root: h.Root, id: h.Parent}, true
}

// Annotate returns ctx with an annotation (indexed, searchable in X-Ray)
// that every subsegment begun under it carries: the rule or delivery ID.
func Annotate(ctx context.Context, key, value string) context.Context {
	prev, _ := ctx.Value(annotationsKey).([][2]string)
	next := append(append([][2]string(nil), prev...), [2]string{key, value})
	return context.WithValue(ctx, annotationsKey, next)
}

// Segment is one subsegment in progress. A nil Segment does nothing.
type Segment struct {
	t     *Tracer
	doc   document
	start time.Time
}

// document is the segment document of a subsegment
// (AWS X-Ray Developer Guide, "Segment documents").
type document struct {
	Name        string            `json:"name"`
	ID          string            `json:"id"`
	TraceID     string            `json:"trace_id"`
	ParentID    string            `json:"parent_id"`
	Type        string            `json:"type"`
	StartTime   float64           `json:"start_time"`
	EndTime     float64           `json:"end_time"`
	Namespace   string            `json:"namespace,omitempty"`
	Error       bool              `json:"error,omitempty"`
	Fault       bool              `json:"fault,omitempty"`
	Throttle    bool              `json:"throttle,omitempty"`
	HTTP        *HTTP             `json:"http,omitempty"`
	AWS         map[string]any    `json:"aws,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// HTTP is a subsegment's http member.
type HTTP struct {
	Request  HTTPRequest   `json:"request"`
	Response *HTTPResponse `json:"response,omitempty"`
}

// HTTPRequest is the request half of HTTP.
type HTTPRequest struct {
	Method string `json:"method,omitempty"`
	URL    string `json:"url,omitempty"`
}

// HTTPResponse is the response half of HTTP.
type HTTPResponse struct {
	Status int `json:"status,omitempty"`
}

// Begin starts a subsegment named name (the service or remote host) in
// namespace ("aws" or "remote"), when the invocation is sampled. The
// returned context makes it the parent of subsegments begun under it.
func (t *Tracer) Begin(ctx context.Context, name, namespace string) (context.Context, *Segment) {
	if t == nil {
		return ctx, nil
	}
	p, ok := parentOf(ctx)
	if !ok {
		return ctx, nil
	}
	now := t.now()
	s := &Segment{t: t, start: now, doc: document{
		Name: name, ID: newID(), TraceID: p.root, ParentID: p.id, Type: "subsegment",
		StartTime: epoch(now), Namespace: namespace,
	}}
	if anns, _ := ctx.Value(annotationsKey).([][2]string); len(anns) > 0 {
		s.doc.Annotations = map[string]string{}
		for _, a := range anns {
			s.doc.Annotations[a[0]] = a[1]
		}
	}
	return context.WithValue(ctx, parentKey, parent{root: p.root, id: s.doc.ID}), s
}

// SetHTTP records the HTTP request and response status (0: none).
func (s *Segment) SetHTTP(method, url string, status int) {
	if s == nil {
		return
	}
	s.doc.HTTP = &HTTP{Request: HTTPRequest{Method: method, URL: url}}
	if status != 0 {
		s.doc.HTTP.Response = &HTTPResponse{Status: status}
	}
}

// SetAWS records the aws member (operation, region, request_id, ...).
func (s *Segment) SetAWS(fields map[string]any) {
	if s != nil {
		s.doc.AWS = fields
	}
}

// End sends the subsegment: error for a 4xx, throttle for a 429, fault
// for a 5xx or a failure without a status. Sending never fails the call
// (UDP to a local daemon; a lost document is a gap in a trace).
func (s *Segment) End(status int, err error) {
	if s == nil {
		return
	}
	s.doc.EndTime = epoch(s.t.now())
	switch {
	case status == 429:
		s.doc.Error, s.doc.Throttle = true, true
	case status >= 500:
		s.doc.Fault = true
	case status >= 400:
		s.doc.Error = true
	case err != nil:
		s.doc.Fault = true
	}
	body, jerr := json.Marshal(s.doc)
	if jerr != nil {
		return
	}
	_ = s.t.send(append([]byte("{\"format\":\"json\",\"version\":1}\n"), body...))
}

func epoch(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
