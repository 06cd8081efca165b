package hooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/voiceops"
	"github.com/voiceops/opsapi/shared/voiceops/netguard"
)

const (
	// DefaultTimeout applies when Target.Timeout is not positive.
	DefaultTimeout = time.Duration(voiceops.DefaultTimeoutMS) * time.Millisecond
	// MaxTimeout caps Target.Timeout.
	MaxTimeout = time.Duration(voiceops.MaxTimeoutMS) * time.Millisecond
	// DefaultUserAgent is sent when Options.UserAgent is empty.
	DefaultUserAgent = "VoiceOps-Functions/1.0"
	// callIDPrefix starts the webhook-id of every HTTPS call.
	callIDPrefix = "fnc_"
)

// LambdaInvoker is the one Lambda call the runner makes: a synchronous
// (RequestResponse) invoke of a function by ARN. shared/conversations/hooks/lambdainvoke
// makes it with the SDK's Lambda client; the runner itself links no AWS
// service client, so a function that never runs project functions does
// not either. A real synchronous invoke answers StatusCode 200, so fakes
// must set it too. An error may carry the service's error code
// (ErrorCode() string, as the SDK's errors do).
type LambdaInvoker interface {
	InvokeLambda(ctx context.Context, arn string, payload []byte) (LambdaOutput, error)
}

// LambdaOutput is what a synchronous invoke answers.
type LambdaOutput struct {
	StatusCode    int
	FunctionError string // "Handled" or "Unhandled"; "" when the function succeeded
	Payload       []byte
}

// Options configure a Runner.
type Options struct {
	// Lambda invokes Lambda targets; nil makes every Lambda target a
	// KindInvalidTarget error.
	Lambda LambdaInvoker
	// AllowLoopback lets HTTPS targets reach loopback addresses, and use
	// http:// on loopback hosts. Only the local dev server sets it.
	AllowLoopback bool
	// TLSConfig is cloned for the transport; nil trusts the system roots.
	TLSConfig *tls.Config
	// Now is the clock of the signature timestamp; time.Now when nil.
	Now func() time.Time
	// UserAgent is the User-Agent header; DefaultUserAgent when empty.
	UserAgent string
}

// Runner calls project functions. It keeps one pooled HTTP client whose
// dialer refuses non-public addresses (webhook.NewClient) and is safe
// for concurrent use.
type Runner struct {
	client        *http.Client
	lambda        LambdaInvoker
	allowLoopback bool
	now           func() time.Time
	userAgent     string
}

// NewRunner returns a Runner.
func NewRunner(opts Options) *Runner {
	r := &Runner{
		client: webhook.NewClient(webhook.Options{
			AllowLoopback: opts.AllowLoopback,
			TLSConfig:     opts.TLSConfig,
		}),
		lambda:        opts.Lambda,
		allowLoopback: opts.AllowLoopback,
		now:           opts.Now,
		userAgent:     opts.UserAgent,
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.userAgent == "" {
		r.userAgent = DefaultUserAgent
	}
	return r
}

// CloseIdleConnections closes the pooled connections not in use.
func (r *Runner) CloseIdleConnections() { r.client.CloseIdleConnections() }

// Run calls t's function for c within t's timeout and returns what the
// function asked for. Any failure is an *Error; the caller counts it as a
// function error and goes on with the agent's answer.
//
// An HTTPS target gets a POST of the JSON body, signed with t.Secret in the
// Standard Webhooks scheme (and the compatibility headers of webhook.Sign);
// redirects are not followed, a status other than 2xx is an error, and at
// most MaxAnswer bytes of the answer are read. A Lambda target is invoked
// synchronously with the same body as payload; a function error is an
// error. Either answer is read with ParseAnswer.
func (r *Runner) Run(ctx context.Context, t Target, c Call) (Result, error) {
	fail := func(k Kind, detail string) (Result, error) {
		return Result{}, &Error{Hook: c.Hook, Kind: k, Detail: detail}
	}
	if c.Hook == "" {
		return fail(KindInvalidCall, "no hook name")
	}
	body, err := encodeRequest(c)
	if err != nil {
		return fail(KindInvalidCall, "the conversation data cannot be encoded as JSON")
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timeout = min(timeout, MaxTimeout)

	var answer []byte
	switch {
	case t.URL != "" && t.LambdaARN != "":
		return fail(KindInvalidTarget, "both a URL and a Lambda ARN")
	case t.URL != "":
		answer, err = r.post(ctx, t, body, timeout)
	case t.LambdaARN != "":
		answer, err = r.invoke(ctx, t, body, timeout)
	default:
		return fail(KindInvalidTarget, "no URL and no Lambda ARN")
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Hook = c.Hook
		}
		return Result{}, err
	}
	res, err := ParseAnswer(answer)
	if err != nil {
		return fail(KindBadAnswer, err.Error())
	}
	return res, nil
}

// post makes the HTTPS call and returns the answer's body.
func (r *Runner) post(ctx context.Context, t Target, body []byte, timeout time.Duration) ([]byte, error) {
	u, err := url.Parse(t.URL)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil, &Error{Kind: KindInvalidTarget, Detail: "invalid URL"}
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && r.allowLoopback && netguard.IsLoopbackName(u.Hostname()):
	default:
		return nil, &Error{Kind: KindInvalidTarget, Detail: "URL must be https://"}
	}
	if u.User != nil {
		return nil, &Error{Kind: KindInvalidTarget, Detail: "URL must not contain credentials"}
	}
	if t.Secret == "" {
		return nil, &Error{Kind: KindInvalidTarget, Detail: "no signing secret"}
	}
	sig, err := webhook.Sign(voiceops.NewID(callIDPrefix), r.now(), body, []string{t.Secret})
	if err != nil {
		return nil, &Error{Kind: KindInvalidTarget, Detail: "signing secret is not whsec_ followed by base64"}
	}

	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(tctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Kind: KindInvalidTarget, Detail: "invalid URL"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", r.userAgent)
	for _, name := range []string{
		webhook.HeaderID, webhook.HeaderTimestamp, webhook.HeaderSignature,
		webhook.HeaderCompatID, webhook.HeaderCompatTimestamp, webhook.HeaderCompatSignature,
	} {
		req.Header[name] = sig.Values(name) // the wire spelling
	}

	resp, err := r.client.Do(req)
	if err != nil {
		return nil, transportError(ctx, tctx, err, timeout)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxAnswer)) // lets the connection be reused
		detail := fmt.Sprintf("HTTP %d", resp.StatusCode)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			detail += ": redirects are not followed"
		}
		return nil, &Error{Kind: KindStatus, StatusCode: resp.StatusCode, Detail: detail}
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err == nil && tctx.Err() != nil {
		// The deadline passed while the body was read: the server may have
		// ended a cut answer cleanly (its side saw the cancellation first),
		// so what was read is not an answer.
		err = tctx.Err()
	}
	if err != nil {
		return nil, transportError(ctx, tctx, err, timeout)
	}
	if len(answer) > MaxAnswer {
		return nil, &Error{Kind: KindBadAnswer, StatusCode: resp.StatusCode, Detail: "answer larger than 64 KiB"}
	}
	return answer, nil
}

// invoke makes the Lambda call and returns the function's payload.
func (r *Runner) invoke(ctx context.Context, t Target, body []byte, timeout time.Duration) ([]byte, error) {
	if !strings.HasPrefix(t.LambdaARN, "arn:") || !strings.Contains(t.LambdaARN, ":function:") {
		return nil, &Error{Kind: KindInvalidTarget, Detail: "not a Lambda function ARN"}
	}
	if r.lambda == nil {
		return nil, &Error{Kind: KindInvalidTarget, Detail: "no Lambda client configured"}
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := r.lambda.InvokeLambda(tctx, t.LambdaARN, body)
	if err != nil {
		if e := contextError(ctx, tctx, timeout); e != nil {
			return nil, e
		}
		// The service's message may quote the ARN or the request; its
		// code says enough.
		var apiErr interface{ ErrorCode() string }
		if errors.As(err, &apiErr) && safeCode(apiErr.ErrorCode()) {
			return nil, &Error{Kind: KindInvoke, Detail: "Lambda refused the invoke: " + apiErr.ErrorCode()}
		}
		return nil, &Error{Kind: KindInvoke, Detail: "Lambda invoke failed"}
	}
	status := out.StatusCode
	if out.FunctionError != "" {
		// "Handled" or "Unhandled"; the payload (the error message) is not
		// kept.
		detail := "the function failed"
		if fe := out.FunctionError; safeCode(fe) {
			detail += " (" + fe + ")"
		}
		return nil, &Error{Kind: KindFunctionError, StatusCode: status, Detail: detail}
	}
	if status < 200 || status > 299 {
		return nil, &Error{Kind: KindInvoke, StatusCode: status, Detail: fmt.Sprintf("Lambda status %d", status)}
	}
	if len(out.Payload) > MaxAnswer {
		return nil, &Error{Kind: KindBadAnswer, StatusCode: status, Detail: "answer larger than 64 KiB"}
	}
	return out.Payload, nil
}

// safeCode reports whether s looks like an error code (a short identifier),
// so that it can go into an error's text.
func safeCode(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// contextError is the *Error of a call whose context ended: the caller's
// (Canceled, or the caller's own deadline) or the target's timeout. It is nil
// when neither context has ended.
func contextError(ctx, tctx context.Context, timeout time.Duration) *Error {
	switch {
	case ctx.Err() != nil:
		return &Error{Kind: KindCanceled, Detail: "the caller gave up before the answer", cause: ctx.Err()}
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Detail: "timed out after " + timeout.String(), cause: context.DeadlineExceeded}
	}
	return nil
}

// transportError turns an HTTP client error into an *Error. It never uses
// err.Error(): url.Error quotes the URL, which may carry a token.
func transportError(ctx, tctx context.Context, err error, timeout time.Duration) *Error {
	if errors.Is(err, webhook.ErrRefusedAddress) {
		// No IP: it could reveal how an internal name resolves.
		return &Error{Kind: KindRefused, Detail: "the host resolves to a non-public address", cause: webhook.ErrRefusedAddress}
	}
	if e := contextError(ctx, tctx, timeout); e != nil {
		return e
	}
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		netErr  net.Error
	)
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return &Error{Kind: KindTimeout, Detail: "timed out after " + timeout.String(), cause: context.DeadlineExceeded}
	case errors.As(err, &dnsErr):
		return &Error{Kind: KindUnreachable, Detail: "DNS lookup failed"}
	case errors.As(err, &certErr):
		return &Error{Kind: KindUnreachable, Detail: "TLS certificate not accepted"}
	default:
		return &Error{Kind: KindUnreachable, Detail: "connection failed"}
	}
}
