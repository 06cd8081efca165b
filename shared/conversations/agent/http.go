package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The HTTP agent's exchange. Each turn (and the greeting) is one POST of
//
//	{"conversation": {"id", "state", "integration_attributes", "variant_id",
//	                  "channel", "asr_lang_code", "tts_lang_code"},
//	 "turn": {"user_input", "user_input_dtmf", "is_silence", "metadata"},
//	 "start": true|false}
//
// with Content-Type application/json, the spec's custom headers and the
// Standard Webhooks headers webhook-id (a new "msg_" ID per request),
// webhook-timestamp and webhook-signature, keyed by the spec's
// signing_secret. The endpoint answers 2xx with
//
//	{"response": "...",            required; may be empty only with end or handoff
//	 "state": {...},               keys to set in the conversation's state
//	 "intents": ["..."], "entities": [{...}],
//	 "ood": false, "end": false,
//	 "handoff": {"destination", "reason", "sip": {"outbound_caller_id", "outbound_endpoint"}}}
//
// where every key but "response" may be left out or null. Anything else
// (another status, a redirect, a body that is not that object, unknown
// fields, more than MaxReplyBytes, no answer within timeout_ms) is an
// error.

// MaxReplyBytes bounds an HTTP agent's answer.
const MaxReplyBytes = 256 << 10

// Errors of the HTTP agent; Respond wraps them with a short detail that
// never holds the URL, a secret or the endpoint's body.
var (
	ErrTimeout     = errors.New("agent: the endpoint did not answer in time")
	ErrUnreachable = errors.New("agent: the endpoint could not be reached")
	ErrStatus      = errors.New("agent: the endpoint answered with a non-2xx status")
	ErrBadReply    = errors.New("agent: the endpoint's answer is invalid")
)

type httpAgent struct {
	url       string
	secrets   []string
	timeout   time.Duration
	headers   map[string]string
	client    *http.Client
	now       func() time.Time
	userAgent string
}

func newHTTPAgent(spec HTTPSpec, deps Deps) *httpAgent {
	a := &httpAgent{
		url: spec.URL, secrets: []string{spec.SigningSecret}, timeout: spec.Timeout(),
		headers: spec.Headers, client: deps.HTTPClient, now: deps.Now, userAgent: deps.UserAgent,
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.userAgent == "" {
		a.userAgent = DefaultUserAgent
	}
	return a
}

type wireRequest struct {
	Conversation wireConversation `json:"conversation"`
	Turn         wireTurn         `json:"turn"`
	Start        bool             `json:"start"`
}

type wireConversation struct {
	ID                    string         `json:"id"`
	State                 map[string]any `json:"state"`
	IntegrationAttributes map[string]any `json:"integration_attributes"`
	VariantID             string         `json:"variant_id"`
	Channel               string         `json:"channel"`
	ASRLang               string         `json:"asr_lang_code,omitempty"`
	TTSLang               string         `json:"tts_lang_code,omitempty"`
}

type wireTurn struct {
	UserInput     string         `json:"user_input"`
	UserInputDTMF string         `json:"user_input_dtmf"`
	IsSilence     bool           `json:"is_silence"`
	Metadata      map[string]any `json:"metadata"`
}

type wireReply struct {
	Response *string          `json:"response"`
	State    map[string]any   `json:"state"`
	Intents  []string         `json:"intents"`
	Entities []map[string]any `json:"entities"`
	OOD      bool             `json:"ood"`
	End      bool             `json:"end"`
	Handoff  *Handoff         `json:"handoff"`
}

// encodeRequest is the body of a call.
func encodeRequest(req Request) ([]byte, error) {
	c := req.Conversation
	w := wireRequest{
		Conversation: wireConversation{
			ID: c.ID, State: c.State, IntegrationAttributes: c.IntegrationAttributes,
			VariantID: c.VariantID, Channel: string(c.Channel), ASRLang: c.ASRLang, TTSLang: c.TTSLang,
		},
		Start: req.Start,
	}
	if w.Conversation.State == nil {
		w.Conversation.State = map[string]any{}
	}
	if !req.Start {
		t := req.Turn
		w.Turn = wireTurn{UserInput: t.UserInput, UserInputDTMF: t.UserInputDTMF, IsSilence: t.IsSilence, Metadata: t.Metadata}
	}
	if w.Turn.Metadata == nil {
		w.Turn.Metadata = map[string]any{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, fmt.Errorf("agent: cannot encode the request: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// Respond makes one signed call to the endpoint.
func (a *httpAgent) Respond(ctx context.Context, req Request) (Reply, error) {
	body, err := encodeRequest(req)
	if err != nil {
		return Reply{}, err
	}
	sig, err := webhook.Sign(voiceops.NewID("msg_"), a.now(), body, a.secrets)
	if err != nil {
		return Reply{}, fmt.Errorf("agent: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url, bytes.NewReader(body))
	if err != nil {
		return Reply{}, fmt.Errorf("%w: invalid URL", ErrUnreachable)
	}
	for k, v := range a.headers {
		hreq.Header.Set(k, v)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", a.userAgent)
	for _, name := range []string{webhook.HeaderID, webhook.HeaderTimestamp, webhook.HeaderSignature} {
		hreq.Header[name] = sig[http.CanonicalHeaderKey(name)] // wire spelling, as deliveries
	}

	resp, err := a.client.Do(hreq)
	if err != nil {
		return Reply{}, a.describe(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxReplyBytes))
		return Reply{}, fmt.Errorf("%w: HTTP %d", ErrStatus, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxReplyBytes+1))
	if err == nil {
		// When the deadline cuts a body short, net/http may report a
		// clean end of the body (the server, seeing the connection
		// close, ends it); the deadline is what happened.
		err = ctx.Err()
	}
	if err != nil {
		return Reply{}, a.describe(ctx, err)
	}
	if len(b) > MaxReplyBytes {
		return Reply{}, fmt.Errorf("%w: larger than %d bytes", ErrBadReply, MaxReplyBytes)
	}
	return decodeReply(b)
}

// decodeReply reads and checks an endpoint's answer.
func decodeReply(b []byte) (Reply, error) {
	var w wireReply
	if problems, decoded := decodeStrict(b, &w); !decoded || len(problems) > 0 {
		return Reply{}, fmt.Errorf("%w: %s", ErrBadReply, joinFields(problems))
	}
	var errs fieldErrors
	if w.Response == nil {
		errs.add("response", "is required")
	} else {
		checkText(*w.Response, "response", MaxResponseLength, !w.End && w.Handoff == nil, true, &errs)
	}
	checkStateKeys(w.State, "state", &errs)
	checkLabels(w.Intents, "intents", &errs)
	checkEntities(w.Entities, "entities", &errs)
	if w.Handoff != nil {
		checkHandoff(w.Handoff, "handoff", &errs)
	}
	if len(errs) > 0 {
		return Reply{}, fmt.Errorf("%w: %s", ErrBadReply, joinFields(errs))
	}
	return Reply{
		Response: *w.Response, State: w.State, Intents: w.Intents, Entities: w.Entities,
		OOD: w.OOD, End: w.End, Handoff: w.Handoff.resolved(),
	}, nil
}

func joinFields(fs []voiceops.FieldError) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		if f.Field == "" {
			parts[i] = f.Message
		} else {
			parts[i] = f.Field + ": " + f.Message
		}
	}
	return strings.Join(parts, "; ")
}

// describe turns a transport error into one of the package's errors with a
// short detail. It never uses err.Error() whole: url.Error quotes the URL,
// whose query may carry a token.
func (a *httpAgent) describe(ctx context.Context, err error) error {
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		netErr  net.Error
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("%w: no answer within %s", ErrTimeout, a.timeout)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("agent: the call was canceled: %w", ctx.Err())
	case errors.Is(err, webhook.ErrRefusedAddress):
		return fmt.Errorf("%w: the host resolves to a non-public address", ErrUnreachable)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("%w: DNS lookup failed", ErrUnreachable)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w: connection refused", ErrUnreachable)
	case errors.As(err, &certErr):
		return fmt.Errorf("%w: TLS certificate not accepted", ErrUnreachable)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: connection closed before a full answer", ErrUnreachable)
	}
	return fmt.Errorf("%w: connection failed", ErrUnreachable)
}
