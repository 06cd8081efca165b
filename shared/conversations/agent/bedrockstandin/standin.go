// Package bedrockstandin is a local stand-in for Amazon Bedrock's Converse
// API: it speaks the wire format (POST /model/{modelId}/converse, JSON in
// and out, errors named by x-amzn-ErrorType) and checks that each request
// is SigV4-signed as the SDK signs it. It is not a model: tests script its
// answers one by one (Script), and with no script it echoes the user's
// last words, saying that it is a stand-in.
package bedrockstandin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Error types of the Converse API, with their status.
const (
	Throttling   = "ThrottlingException"   // 429
	Validation   = "ValidationException"   // 400
	ModelTimeout = "ModelTimeoutException" // 408
	AccessDenied = "AccessDeniedException" // 403
)

var errorStatus = map[string]int{Throttling: 429, Validation: 400, ModelTimeout: 408, AccessDenied: 403}

// Step is one scripted answer.
type Step struct {
	// Text is the assistant's text.
	Text string
	// ToolUses are tool calls (the stop reason is then tool_use).
	ToolUses []ToolUse
	// StopReason overrides the stop reason (max_tokens,
	// guardrail_intervened, ...); end_turn or tool_use when empty.
	StopReason string
	// Error answers with this error type (Throttling, ...) instead.
	Error string
	// Delay holds the answer back (or until the client gives up).
	Delay time.Duration
	// InputTokens and OutputTokens are the usage reported (10 and 5 when
	// zero).
	InputTokens, OutputTokens int
	// LatencyMS is the model latency reported in the answer's metrics (42
	// when zero); Delay is what the answer really takes.
	LatencyMS int
}

// ToolUse is a tool call in an answer.
type ToolUse struct {
	ID, Name string
	Input    map[string]any
}

// Request is a request the stand-in received, decoded.
type Request struct {
	ModelID         string
	Region          string           // from the signature's scope
	Messages        []Message        `json:"messages"`
	System          []map[string]any `json:"system"`
	InferenceConfig map[string]any   `json:"inferenceConfig"`
	ToolConfig      *struct {
		Tools []struct {
			ToolSpec struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"toolSpec"`
		} `json:"tools"`
	} `json:"toolConfig"`
	GuardrailConfig map[string]any `json:"guardrailConfig"`
}

// Message is one message of a request or an answer, as on the wire.
type Message struct {
	Role    string           `json:"role"`
	Content []map[string]any `json:"content"`
}

// ToolNames are the tools a request offered.
func (r Request) ToolNames() []string {
	var out []string
	if r.ToolConfig != nil {
		for _, t := range r.ToolConfig.Tools {
			out = append(out, t.ToolSpec.Name)
		}
	}
	return out
}

// LastUserText is the text of the request's last user message.
func (r Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "user" {
			var parts []string
			for _, b := range m.Content {
				if s, ok := b["text"].(string); ok {
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, " ")
		}
	}
	return ""
}

// Server is the stand-in. Its zero value is not usable: call New.
type Server struct {
	// Credentials maps an access key ID to its secret: a request signed
	// with a key it holds must carry the right signature. With no
	// credentials, only the signature's form is checked.
	Credentials map[string]string

	mu       sync.Mutex
	script   []Step
	requests []Request
}

// New returns a stand-in with no script.
func New() *Server { return &Server{} }

// Script queues answers, given in order to the next requests.
func (s *Server) Script(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, steps...)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Pending is the number of scripted answers not given yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

var (
	pathPattern = regexp.MustCompile(`^/model/([^/]+)/converse$`)
	// credentialScope is the Credential= part of a SigV4 Authorization.
	authPattern = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([a-z0-9-]+)/bedrock/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$`)
)

// ServeHTTP answers one Converse request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := pathPattern.FindStringSubmatch(r.URL.EscapedPath())
	if r.Method != http.MethodPost || m == nil {
		writeError(w, "UnknownOperationException", http.StatusNotFound, "the stand-in answers only POST /model/{modelId}/converse")
		return
	}
	modelID, err := url.PathUnescape(m[1])
	if err != nil {
		writeError(w, Validation, 400, "malformed model ID")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeError(w, Validation, 400, "unreadable body")
		return
	}
	region, msg := s.checkSignature(r, body)
	if msg != "" {
		writeError(w, "InvalidSignatureException", http.StatusForbidden, msg)
		return
	}
	var req Request
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		writeError(w, Validation, 400, "the body must be a Converse request with messages")
		return
	}
	if req.Messages[0].Role != "user" {
		writeError(w, Validation, 400, "A conversation must start with a user message.")
		return
	}
	for i := 1; i < len(req.Messages); i++ {
		if req.Messages[i].Role == req.Messages[i-1].Role {
			writeError(w, Validation, 400, "A conversation must alternate between user and assistant roles.")
			return
		}
	}
	req.ModelID, req.Region = modelID, region

	s.mu.Lock()
	s.requests = append(s.requests, req)
	var step Step
	scripted := len(s.script) > 0
	if scripted {
		step, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()
	if !scripted {
		step = echo(req)
	}
	if step.Delay > 0 {
		select {
		case <-time.After(step.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if step.Error != "" {
		status := errorStatus[step.Error]
		if status == 0 {
			status = 400
		}
		writeError(w, step.Error, status, "scripted "+step.Error)
		return
	}
	writeAnswer(w, step, req)
}

// echo is the unscripted answer: a model-shaped reply that says what it is.
// A user who asks for a person gets the handoff tool called, when offered.
func echo(req Request) Step {
	last := req.LastUserText()
	for _, t := range req.ToolNames() {
		if t == "handoff" && regexp.MustCompile(`(?i)\b(person|human|agent|someone)\b`).MatchString(last) {
			return Step{ToolUses: []ToolUse{{Name: "handoff", Input: map[string]any{"reason": "the caller asked for a person"}}}}
		}
	}
	if strings.Contains(last, "toolResult") || last == "" {
		return Step{Text: "(Bedrock stand-in, not a model) Done."}
	}
	return Step{Text: fmt.Sprintf("(Bedrock stand-in, not a model) You said: %q", truncate(last, 200))}
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func writeAnswer(w http.ResponseWriter, step Step, req Request) {
	var content []map[string]any
	if step.Text != "" {
		content = append(content, map[string]any{"text": step.Text})
	}
	for i, u := range step.ToolUses {
		id := u.ID
		if id == "" {
			id = fmt.Sprintf("tooluse_%d_%d", len(req.Messages), i)
		}
		input := u.Input
		if input == nil {
			input = map[string]any{}
		}
		content = append(content, map[string]any{"toolUse": map[string]any{"toolUseId": id, "name": u.Name, "input": input}})
	}
	stop := step.StopReason
	switch {
	case stop != "":
	case len(step.ToolUses) > 0:
		stop = "tool_use"
	default:
		stop = "end_turn"
	}
	in, out := step.InputTokens, step.OutputTokens
	if in == 0 {
		in = 10
	}
	if out == 0 {
		out = 5
	}
	latency := step.LatencyMS
	if latency == 0 {
		latency = 42
	}
	ans := map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": stop,
		"usage":      map[string]any{"inputTokens": in, "outputTokens": out, "totalTokens": in + out},
		"metrics":    map[string]any{"latencyMs": latency},
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-RequestId", "standin-request")
	_ = json.NewEncoder(w).Encode(ans)
}

func writeError(w http.ResponseWriter, typ string, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-ErrorType", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// checkSignature checks the request's SigV4 signature: its form always,
// and its value when the stand-in knows the access key's secret. It
// returns the region of the signature's scope, or a message.
func (s *Server) checkSignature(r *http.Request, body []byte) (region, msg string) {
	m := authPattern.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		return "", "missing or malformed SigV4 Authorization for service bedrock"
	}
	akid, date, region, signed, sig := m[1], m[2], m[3], m[4], m[5]
	amzDate := r.Header.Get("X-Amz-Date")
	if !strings.HasPrefix(amzDate, date) {
		return "", "X-Amz-Date does not match the credential scope"
	}
	secret, known := s.Credentials[akid]
	if !known {
		if len(s.Credentials) > 0 {
			return "", "unknown access key"
		}
		return region, ""
	}
	at, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil {
		return "", "malformed X-Amz-Date"
	}
	// Sign the same request again with only the headers it signed.
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	again.Host = r.Host
	again.ContentLength = r.ContentLength // a server keeps it out of Header
	for _, h := range strings.Split(signed, ";") {
		if h != "host" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	again.Header.Del("Authorization")
	hash := sha256Hex(body) // the body as received, so a changed body fails
	creds := aws.Credentials{AccessKeyID: akid, SecretAccessKey: secret, SessionToken: r.Header.Get("X-Amz-Security-Token")}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hash, "bedrock", region, at); err != nil {
		return "", "cannot check the signature"
	}
	if !strings.HasSuffix(again.Header.Get("Authorization"), "Signature="+sig) {
		return "", "the signature does not match"
	}
	return region, ""
}
