// Package lambdainvoke makes the runner's Lambda calls (hooks.LambdaInvoker):
// Lambda's Invoke API (POST /2015-03-31/functions/{name}/invocations),
// signed with the SDK's SigV4 signer and retried by the SDK's retryer.
//
// It does not use the SDK's Lambda client on purpose: that package's
// schemas cost about 0.7 ms of package init (4,000 allocations, 670 KB) and
// 0.8 MB of bootstrap on every cold start of the four functions that link
// it (chat, calls, events, sweeper), which need one operation of it
// (scripts/bench, docs/performance.md).
package lambdainvoke

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go/encoding/httpbinding"

	"github.com/voiceops/opsapi/shared/conversations/hooks"
	"github.com/voiceops/opsapi/shared/platform/tracing"
)

// maxResponse bounds what is read of a response: Lambda's synchronous
// payload limit is 6 MB; the runner keeps at most hooks.MaxAnswer.
const maxResponse = 6 << 20

// Invoker invokes functions synchronously (RequestResponse).
type Invoker struct {
	creds    aws.CredentialsProvider
	region   string
	endpoint string // scheme and host, no trailing slash
	client   aws.HTTPClient
	retryer  aws.Retryer
	signer   *v4.Signer
	tracer   *tracing.Tracer
	now      func() time.Time
}

var _ hooks.LambdaInvoker = (*Invoker)(nil)

// New returns an Invoker on cfg: its credentials, region, BaseEndpoint
// (AWS_ENDPOINT_URL; otherwise lambda.REGION.amazonaws.com), HTTP client
// and retryer (the SDK's standard one when unset), tracing each invoke as
// an X-Ray subsegment with t (nil: not traced).
func New(cfg aws.Config, t *tracing.Tracer) *Invoker {
	i := &Invoker{creds: cfg.Credentials, region: cfg.Region, client: cfg.HTTPClient, signer: v4.NewSigner(), tracer: t, now: time.Now}
	i.endpoint = "https://lambda." + cfg.Region + ".amazonaws.com"
	if cfg.BaseEndpoint != nil && *cfg.BaseEndpoint != "" {
		i.endpoint = strings.TrimRight(*cfg.BaseEndpoint, "/")
	}
	if i.client == nil {
		i.client = http.DefaultClient
	}
	if cfg.Retryer != nil {
		i.retryer = cfg.Retryer()
	} else {
		i.retryer = retry.NewStandard()
	}
	return i
}

// Error is Lambda's refusal of an invoke. ErrorCode and HTTPStatusCode are
// what the SDK's errors offer: the runner reports the code, the retryer
// retries throttling and 5xx by them.
type Error struct {
	Code      string // from X-Amzn-ErrorType, e.g. ResourceNotFoundException
	Status    int
	Message   string
	RequestID string
}

func (e *Error) Error() string {
	return fmt.Sprintf("lambda Invoke: %d %s: %s (request %s)", e.Status, e.Code, e.Message, e.RequestID)
}

// ErrorCode is the service's error code.
func (e *Error) ErrorCode() string { return e.Code }

// HTTPStatusCode is the response's status.
func (e *Error) HTTPStatusCode() int { return e.Status }

// InvokeLambda makes a RequestResponse invoke of the function arn,
// retrying what the retryer retries (throttling, 5xx, broken connections)
// within ctx.
func (i *Invoker) InvokeLambda(ctx context.Context, arn string, payload []byte) (hooks.LambdaOutput, error) {
	return i.invoke(ctx, arn, payload, "RequestResponse")
}

// InvokeEvent queues an asynchronous (Event) invoke of the function arn:
// Lambda answers 202 once it holds the event, and runs it later.
func (i *Invoker) InvokeEvent(ctx context.Context, arn string, payload []byte) error {
	_, err := i.invoke(ctx, arn, payload, "Event")
	return err
}

func (i *Invoker) invoke(ctx context.Context, arn string, payload []byte, invocationType string) (out hooks.LambdaOutput, err error) {
	ctx, seg := i.tracer.Begin(ctx, "Lambda", "aws")
	status := 0
	if seg != nil {
		defer func() {
			seg.SetAWS(map[string]any{"operation": "Invoke", "region": i.region})
			seg.End(status, err)
		}()
	}
	for attempt := 1; ; attempt++ {
		out, err = i.once(ctx, arn, payload, invocationType)
		status = out.StatusCode
		var e *Error
		if errors.As(err, &e) {
			status = e.Status
		}
		if err == nil || attempt >= i.retryer.MaxAttempts() || !i.retryer.IsErrorRetryable(err) {
			return out, err
		}
		delay, derr := i.retryer.RetryDelay(attempt, err)
		if derr != nil {
			return out, err
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return out, err
		}
	}
}

func (i *Invoker) once(ctx context.Context, arn string, payload []byte, invocationType string) (hooks.LambdaOutput, error) {
	// The name goes in the path escaped (an ARN's colons as %3A), as the
	// SDK sends it; the signer escapes the escaped path again, as SigV4
	// wants for every service but S3.
	u, err := url.Parse(i.endpoint + "/2015-03-31/functions/" + httpbinding.EscapePath(arn, true) + "/invocations")
	if err != nil {
		return hooks.LambdaOutput{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(payload))
	if err != nil {
		return hooks.LambdaOutput{}, err
	}
	req.Header.Set("X-Amz-Invocation-Type", invocationType)
	req.Header.Set("Content-Type", "application/octet-stream")
	creds, err := i.creds.Retrieve(ctx)
	if err != nil {
		return hooks.LambdaOutput{}, fmt.Errorf("lambda Invoke: credentials: %w", err)
	}
	sum := sha256.Sum256(payload)
	if err := i.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "lambda", i.region, i.now()); err != nil {
		return hooks.LambdaOutput{}, err
	}
	res, err := i.client.Do(req)
	if err != nil {
		return hooks.LambdaOutput{}, fmt.Errorf("lambda Invoke: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxResponse))
	if err != nil {
		return hooks.LambdaOutput{}, fmt.Errorf("lambda Invoke: reading the response: %w", err)
	}
	if res.StatusCode >= 300 {
		return hooks.LambdaOutput{}, responseError(res, body)
	}
	return hooks.LambdaOutput{StatusCode: res.StatusCode, FunctionError: res.Header.Get("X-Amz-Function-Error"), Payload: body}, nil
}

// responseError reads Lambda's error: the code from X-Amzn-ErrorType
// (before any ":"), else the body's "Type"/"__type"; the message from the
// body's "message" or "Message".
func responseError(res *http.Response, body []byte) *Error {
	e := &Error{Status: res.StatusCode, RequestID: res.Header.Get("X-Amzn-Requestid")}
	var doc struct {
		Type     string `json:"__type"`
		Message  string `json:"message"`
		Message2 string `json:"Message"`
	}
	_ = json.Unmarshal(body, &doc)
	e.Code, _, _ = strings.Cut(res.Header.Get("X-Amzn-ErrorType"), ":")
	if e.Code == "" {
		_, e.Code, _ = strings.Cut(doc.Type, "#") // "namespace#Code" or "Code"
		if e.Code == "" {
			e.Code = doc.Type
		}
	}
	if e.Code == "" {
		e.Code = http.StatusText(res.StatusCode)
	}
	e.Message = doc.Message
	if e.Message == "" {
		e.Message = doc.Message2
	}
	return e
}
