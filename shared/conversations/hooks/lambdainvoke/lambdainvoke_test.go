package lambdainvoke

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

const arn = "arn:aws:lambda:eu-west-1:123456789012:function:voiceops-fn-on-turn"

var signedAt = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// fakeLambda answers Invoke as Lambda does, after checking the request
// and its signature (signed again here from what arrived).
type fakeLambda struct {
	t     *testing.T
	calls atomic.Int32
	// answer writes the response of call n (1-based).
	answer func(w http.ResponseWriter, n int)
	// event: the invokes must be asynchronous (Event), not RequestResponse.
	event bool
}

func (f *fakeLambda) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(f.calls.Add(1))
	body, _ := io.ReadAll(r.Body)
	if r.Method != "POST" || r.URL.EscapedPath() != "/2015-03-31/functions/arn%3Aaws%3Alambda%3Aeu-west-1%3A123456789012%3Afunction%3Avoiceops-fn-on-turn/invocations" {
		f.t.Errorf("%s %s", r.Method, r.URL.EscapedPath())
	}
	want := "RequestResponse"
	if f.event {
		want = "Event"
	}
	if r.Header.Get("X-Amz-Invocation-Type") != want || string(body) != `{"hook":"on_turn"}` {
		f.t.Errorf("invocation type %q, body %q", r.Header.Get("X-Amz-Invocation-Type"), body)
	}
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDBENCH/20261126/eu-west-1/lambda/aws4_request") || r.Header.Get("X-Amz-Security-Token") != "session" {
		f.t.Errorf("authorization %q, token %q", auth, r.Header.Get("X-Amz-Security-Token"))
	}
	again, _ := http.NewRequest("POST", "http://"+r.Host+r.URL.EscapedPath(), nil)
	again.ContentLength = r.ContentLength
	for _, h := range []string{"X-Amz-Invocation-Type", "Content-Type"} {
		again.Header.Set(h, r.Header.Get(h))
	}
	sum := sha256.Sum256(body)
	_ = v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "AKIDBENCH", SecretAccessKey: "secret", SessionToken: "session"},
		again, hex.EncodeToString(sum[:]), "lambda", "eu-west-1", signedAt)
	if again.Header.Get("Authorization") != auth {
		f.t.Errorf("signature\n got %s\nwant %s", auth, again.Header.Get("Authorization"))
	}
	f.answer(w, n)
}

func invoker(t *testing.T, f *fakeLambda) *Invoker {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL + "/"),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDBENCH", "secret", "session"),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			})
		}}
	i := New(cfg, nil)
	i.now = func() time.Time { return signedAt }
	return i
}

func TestInvokeLambda(t *testing.T) {
	f := &fakeLambda{t: t, answer: func(w http.ResponseWriter, _ int) {
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		_, _ = io.WriteString(w, `{"errorMessage":"boom"}`)
	}}
	out, err := invoker(t, f).InvokeLambda(context.Background(), arn, []byte(`{"hook":"on_turn"}`))
	if err != nil || out.StatusCode != 200 || out.FunctionError != "Unhandled" || string(out.Payload) != `{"errorMessage":"boom"}` {
		t.Fatalf("%+v %v", out, err)
	}
}

// TestInvokeEvent: an asynchronous invoke is accepted with 202; a
// refusal is its error, after the retryer's attempts.
func TestInvokeEvent(t *testing.T) {
	f := &fakeLambda{t: t, event: true, answer: func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusAccepted) }}
	if err := invoker(t, f).InvokeEvent(context.Background(), arn, []byte(`{"hook":"on_turn"}`)); err != nil || f.calls.Load() != 1 {
		t.Fatalf("%v after %d calls", err, f.calls.Load())
	}
	f.calls.Store(0)
	f.answer = func(w http.ResponseWriter, _ int) {
		w.Header().Set("X-Amzn-ErrorType", "AccessDeniedException")
		w.WriteHeader(http.StatusForbidden)
	}
	var coded interface{ ErrorCode() string }
	if err := invoker(t, f).InvokeEvent(context.Background(), arn, []byte(`{"hook":"on_turn"}`)); !errors.As(err, &coded) || coded.ErrorCode() != "AccessDeniedException" {
		t.Errorf("refused event invoke: %v", err)
	}
}

func TestInvokeLambdaRefused(t *testing.T) {
	f := &fakeLambda{t: t, answer: func(w http.ResponseWriter, _ int) {
		w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException:http://internal.amazon.com/coral/com.amazonaws.awsgatewaylambda/")
		w.Header().Set("X-Amzn-Requestid", "req-1")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"Type":"User","message":"Function not found: `+arn+`"}`)
	}}
	_, err := invoker(t, f).InvokeLambda(context.Background(), arn, []byte(`{"hook":"on_turn"}`))
	var coded interface{ ErrorCode() string }
	if !errors.As(err, &coded) || coded.ErrorCode() != "ResourceNotFoundException" {
		t.Fatalf("error %v keeps no code", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Status != 404 || e.RequestID != "req-1" || !strings.HasPrefix(e.Message, "Function not found") {
		t.Errorf("error %+v", e)
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("a 404 was sent %d times, want 1 (not retried)", n)
	}
}

// TestInvokeLambdaRetries: throttling and 5xx are retried by the retryer,
// up to its attempts (3 for the standard one).
func TestInvokeLambdaRetries(t *testing.T) {
	f := &fakeLambda{t: t, answer: func(w http.ResponseWriter, n int) {
		switch n {
		case 1:
			w.Header().Set("X-Amzn-ErrorType", "TooManyRequestsException")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"Reason":"ReservedFunctionConcurrentInvocationLimitExceeded","message":"Rate exceeded"}`)
		case 2:
			w.WriteHeader(http.StatusBadGateway) // no code: the status decides
		default:
			_, _ = io.WriteString(w, `{"ok":true}`)
		}
	}}
	out, err := invoker(t, f).InvokeLambda(context.Background(), arn, []byte(`{"hook":"on_turn"}`))
	if err != nil || string(out.Payload) != `{"ok":true}` || f.calls.Load() != 3 {
		t.Fatalf("%+v %v after %d calls", out, err, f.calls.Load())
	}
	f.calls.Store(0)
	f.answer = func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusServiceUnavailable) }
	_, err = invoker(t, f).InvokeLambda(context.Background(), arn, []byte(`{"hook":"on_turn"}`))
	var e *Error
	if !errors.As(err, &e) || e.Status != 503 || f.calls.Load() != 3 {
		t.Errorf("error %v after %d calls, want a 503 after 3", err, f.calls.Load())
	}
}

// TestSameRequestAsSDK: the request is the one the SDK's Lambda client
// sends for the same invoke (method, escaped path, invocation type, body,
// credential scope).
func TestSameRequestAsSDK(t *testing.T) {
	type seen struct{ method, path, invocationType, body, scope string }
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization")
		scope, _, _ := strings.Cut(auth, ",")
		got = append(got, seen{r.Method, r.URL.EscapedPath(), r.Header.Get("X-Amz-Invocation-Type"), string(body), scope})
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	cfg := aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDBENCH", "secret", "")}
	payload := []byte(`{"hook":"on_turn"}`)
	if _, err := lambda.NewFromConfig(cfg).Invoke(context.Background(), &lambda.InvokeInput{
		FunctionName: aws.String(arn), InvocationType: types.InvocationTypeRequestResponse, Payload: payload}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg, nil).InvokeLambda(context.Background(), arn, payload); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != got[1] {
		t.Fatalf("the SDK sent %+v\nthis package %+v", got[0], got[len(got)-1])
	}
}
