package hooks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/voiceops/opsapi/shared/alerts/webhook"
)

// testSecret is the Standard Webhooks documentation's example secret.
const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// received is what the test function saw of one call.
type received struct {
	header http.Header
	body   []byte
}

// function is an httptest TLS server on 127.0.0.1 playing a project's
// function: it records each call and answers with h.
type function struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []received
}

func newFunction(t testing.TB, h http.HandlerFunc) *function {
	t.Helper()
	fn := &function{}
	fn.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fn.mu.Lock()
		fn.reqs = append(fn.reqs, received{r.Header.Clone(), body})
		fn.mu.Unlock()
		h(w, r)
	}))
	fn.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake noise from refused or cut calls
	fn.srv.StartTLS()
	t.Cleanup(fn.srv.Close)
	return fn
}

func answering(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func (fn *function) requests() []received {
	fn.mu.Lock()
	defer fn.mu.Unlock()
	return append([]received(nil), fn.reqs...)
}

func (fn *function) target() Target {
	return Target{URL: fn.srv.URL + "/hooks?token=s3cr3t-query", Timeout: 5 * time.Second, Secret: testSecret}
}

// runner returns a Runner that trusts fn's certificate and may reach
// loopback, as the dev server's.
func (fn *function) runner(t testing.TB, now func() time.Time) *Runner {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(fn.srv.Certificate())
	r := NewRunner(Options{AllowLoopback: true, TLSConfig: &tls.Config{RootCAs: pool}, Now: now})
	t.Cleanup(r.CloseIdleConnections)
	return r
}

// MustKind fails unless err is an *Error of kind k, and returns it.
func MustKind(tb testing.TB, err error, k Kind) *Error {
	tb.Helper()
	var e *Error
	if !errors.As(err, &e) {
		tb.Fatalf("error %v (%T), want *hooks.Error of kind %s", err, err, k)
	}
	if e.Kind != k {
		tb.Fatalf("error %q of kind %s, want %s", e, e.Kind, k)
	}
	return e
}

func turnCall() Call {
	return Call{Hook: "on_turn", Conversation: testConversation(), Turn: testTurn()}
}

func TestHTTPSAnswers(t *testing.T) {
	tests := []struct {
		name   string
		status int
		answer string
		want   Result
	}{
		{"state, override, end", 200, `{"state":{"paid":true},"response":"All done.","end":true}`,
			Result{State: map[string]any{"paid": true}, Response: ptr("All done."), End: true}},
		{"plain handoff", 200, `{"handoff":{"destination":"billing-team","reason":"dispute"}}`,
			Result{Handoff: &Handoff{Destination: "billing-team", Reason: "dispute"}}},
		{"custom SIP handoff", 200, `{"handoff":true,"outbound_caller_id":"+441234567890","outbound_endpoint":"pbx-main"}`,
			Result{Handoff: &Handoff{Destination: "pbx-main", SIP: &SIP{OutboundCallerID: "+441234567890", OutboundEndpoint: "pbx-main"}}}},
		{"201 with nothing to change", 201, `{}`, Result{}},
		{"204 empty", 204, ``, Result{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn := newFunction(t, answering(tt.status, tt.answer))
			got, err := fn.runner(t, nil).Run(context.Background(), fn.target(), turnCall())
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// TestHTTPSRequest: the call is a signed POST of the documented body, and a
// receiver verifies the signature with the official Standard Webhooks
// library.
func TestHTTPSRequest(t *testing.T) {
	fn := newFunction(t, answering(200, `{}`))
	at := time.Now().Add(-time.Minute).Truncate(time.Second) // within the library's tolerance
	if _, err := fn.runner(t, func() time.Time { return at }).Run(context.Background(), fn.target(), turnCall()); err != nil {
		t.Fatal(err)
	}
	reqs := fn.requests()
	if len(reqs) != 1 {
		t.Fatalf("function got %d calls", len(reqs))
	}
	r := reqs[0]
	want, err := encodeRequest(turnCall())
	if err != nil {
		t.Fatal(err)
	}
	if string(r.body) != string(want) {
		t.Errorf("body %s\nwant %s", r.body, want)
	}
	wh, err := standardwebhooks.NewWebhook(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(r.body, r.header); err != nil {
		t.Errorf("Standard Webhooks verification: %v", err)
	}
	if err := wh.Verify(append(r.body, ' '), r.header); err == nil {
		t.Error("a changed body verified")
	}
	id := r.header.Get("Webhook-Id")
	if !strings.HasPrefix(id, callIDPrefix) || r.header.Get("X-Service-Event-Id") != id {
		t.Errorf("ids %q / %q", id, r.header.Get("X-Service-Event-Id"))
	}
	for name, want := range map[string]string{
		"Webhook-Timestamp": strconv.FormatInt(at.Unix(), 10),
		"Content-Type":      "application/json",
		"User-Agent":        DefaultUserAgent,
	} {
		if got := r.header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestHTTPSFailures(t *testing.T) {
	const private = "PRIVATE-ANSWER-TEXT"
	tests := []struct {
		name   string
		h      http.HandlerFunc
		kind   Kind
		status int
	}{
		{"500", answering(500, `{"error":"`+private+`"}`), KindStatus, 500},
		{"404", answering(404, private), KindStatus, 404},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		}, KindStatus, 302},
		{"garbage", answering(200, "<html>"+private+"</html>"), KindBadAnswer, 0},
		{"wrong types", answering(200, `{"end":"yes","response":"`+private+`"}`), KindBadAnswer, 0},
		{"unknown key", answering(200, `{"`+private+`":1}`), KindBadAnswer, 0},
		{"too large", answering(200, `{"response":"`+strings.Repeat("x", MaxAnswer)+`"}`), KindBadAnswer, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn := newFunction(t, tt.h)
			tg := fn.target()
			res, err := fn.runner(t, nil).Run(context.Background(), tg, turnCall())
			e := MustKind(t, err, tt.kind)
			if e.StatusCode != tt.status || e.Hook != "on_turn" {
				t.Errorf("error %+v, want status %d, hook on_turn", e, tt.status)
			}
			if !reflect.DeepEqual(res, Result{}) {
				t.Errorf("result %#v with the error", res)
			}
			assertSafe(t, err, tg)
			if n := len(fn.requests()); n != 1 {
				t.Errorf("function got %d calls, want 1", n)
			}
		})
	}
}

// assertSafe fails if err's text holds the answer, the URL or the secret.
func assertSafe(t *testing.T, err error, tg Target) {
	t.Helper()
	for _, s := range []string{"PRIVATE", "xxxx", "s3cr3t", "127.0.0.1", "/hooks", testSecret, "whsec_"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q holds %q", err, s)
		}
	}
	if tg.URL != "" && strings.Contains(err.Error(), tg.URL) {
		t.Errorf("error %q holds the URL", err)
	}
}

func TestHTTPSTimeout(t *testing.T) {
	release := make(chan struct{})
	fn := newFunction(t, func(w http.ResponseWriter, r *http.Request) {
		select { // slower than the timeout
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // before the server closes
	tg := fn.target()
	tg.Timeout = 50 * time.Millisecond
	_, err := fn.runner(t, nil).Run(context.Background(), tg, turnCall())
	MustKind(t, err, KindTimeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(%v, DeadlineExceeded) = false", err)
	}
	assertSafe(t, err, tg)
}

// TestHTTPSSlowBody: a function that sends its headers in time but not its
// body also times out.
func TestHTTPSSlowBody(t *testing.T) {
	release := make(chan struct{})
	fn := newFunction(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"response":`)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	tg := fn.target()
	tg.Timeout = 50 * time.Millisecond
	_, err := fn.runner(t, nil).Run(context.Background(), tg, turnCall())
	MustKind(t, err, KindTimeout)
}

func TestCallerCanceled(t *testing.T) {
	fn := newFunction(t, answering(200, `{}`))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := fn.runner(t, nil).Run(ctx, fn.target(), turnCall())
	MustKind(t, err, KindCanceled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(%v, Canceled) = false", err)
	}
}

// TestSSRF: without AllowLoopback, loopback, private and link-local
// (metadata) addresses are refused at dial time; with it, only loopback is
// let through.
func TestSSRF(t *testing.T) {
	fn := newFunction(t, answering(200, `{"end":true}`))
	port := fn.srv.URL[strings.LastIndex(fn.srv.URL, ":"):]
	guarded := NewRunner(Options{}) // production options
	tests := []struct {
		name string
		r    *Runner
		url  string
	}{
		{"loopback", guarded, "https://127.0.0.1" + port + "/hooks"},
		{"localhost", guarded, "https://localhost" + port + "/hooks"},
		{"private", guarded, "https://10.0.0.1/hooks"},
		{"metadata", guarded, "https://169.254.169.254/latest/meta-data/"},
		{"IPv6 loopback", guarded, "https://[::1]" + port + "/hooks"},
		{"private with AllowLoopback", fn.runner(t, nil), "https://10.0.0.1/hooks"},
		{"metadata with AllowLoopback", fn.runner(t, nil), "https://169.254.169.254/latest/meta-data/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := Target{URL: tt.url, Timeout: 2 * time.Second, Secret: testSecret}
			_, err := tt.r.Run(context.Background(), tg, turnCall())
			MustKind(t, err, KindRefused)
			if !errors.Is(err, webhook.ErrRefusedAddress) {
				t.Errorf("errors.Is(%v, ErrRefusedAddress) = false", err)
			}
			for _, s := range []string{"127.0.0.1", "10.0.0.1", "169.254", "::1", "localhost"} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q names the address", err)
				}
			}
		})
	}
	if n := len(fn.requests()); n != 0 {
		t.Errorf("the loopback function got %d calls", n)
	}
	// The same loopback target passes with AllowLoopback.
	if res, err := fn.runner(t, nil).Run(context.Background(), fn.target(), turnCall()); err != nil || !res.End {
		t.Errorf("with AllowLoopback: %#v, %v", res, err)
	}
}

func TestInvalidTargets(t *testing.T) {
	guarded := NewRunner(Options{Lambda: &fakeLambda{}})
	dev := NewRunner(Options{AllowLoopback: true})
	arn := "arn:aws:lambda:eu-west-1:123456789012:function:on-turn"
	tests := []struct {
		name string
		r    *Runner
		t    Target
		c    Call
		kind Kind
	}{
		{"neither", guarded, Target{}, turnCall(), KindInvalidTarget},
		{"both", guarded, Target{URL: "https://example.com/", LambdaARN: arn, Secret: testSecret}, turnCall(), KindInvalidTarget},
		{"http", guarded, Target{URL: "http://example.com/", Secret: testSecret}, turnCall(), KindInvalidTarget},
		{"http to a public host in dev", dev, Target{URL: "http://example.com/", Secret: testSecret}, turnCall(), KindInvalidTarget},
		{"ftp", guarded, Target{URL: "ftp://example.com/", Secret: testSecret}, turnCall(), KindInvalidTarget},
		{"relative", guarded, Target{URL: "/hooks", Secret: testSecret}, turnCall(), KindInvalidTarget},
		{"credentials", guarded, Target{URL: "https://user:pw@example.com/", Secret: testSecret}, turnCall(), KindInvalidTarget},
		{"no secret", guarded, Target{URL: "https://example.com/"}, turnCall(), KindInvalidTarget},
		{"bad secret", guarded, Target{URL: "https://example.com/", Secret: "whsec_not base64!"}, turnCall(), KindInvalidTarget},
		{"not an ARN", guarded, Target{LambdaARN: "on-turn"}, turnCall(), KindInvalidTarget},
		{"no Lambda client", dev, Target{LambdaARN: arn}, turnCall(), KindInvalidTarget},
		{"no hook", guarded, Target{LambdaARN: arn}, Call{}, KindInvalidCall},
		{"unencodable", guarded, Target{LambdaARN: arn}, Call{Hook: "on_end", Extra: map[string]any{"f": func() {}}}, KindInvalidCall},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.r.Run(context.Background(), tt.t, tt.c)
			MustKind(t, err, tt.kind)
			if strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "not base64!") {
				t.Errorf("error %q holds a secret", err)
			}
		})
	}
}

// fakeLambda is a hand-written LambdaInvoker.
// Its cases speak the SDK's types, converted as
// shared/conversations/hooks/lambdainvoke converts them.
type fakeLambda struct {
	invoke func(ctx context.Context, in *lambda.InvokeInput) (*lambda.InvokeOutput, error)
	calls  atomic.Int32
}

var _ LambdaInvoker = (*fakeLambda)(nil)

func (f *fakeLambda) InvokeLambda(ctx context.Context, arn string, payload []byte) (LambdaOutput, error) {
	f.calls.Add(1)
	if f.invoke == nil {
		return LambdaOutput{StatusCode: 200}, nil
	}
	out, err := f.invoke(ctx, &lambda.InvokeInput{FunctionName: &arn, InvocationType: types.InvocationTypeRequestResponse, Payload: payload})
	if err != nil {
		return LambdaOutput{}, err
	}
	fe := ""
	if out.FunctionError != nil {
		fe = *out.FunctionError
	}
	return LambdaOutput{StatusCode: int(out.StatusCode), FunctionError: fe, Payload: out.Payload}, nil
}

func TestLambda(t *testing.T) {
	const arn = "arn:aws:lambda:eu-west-1:123456789012:function:on-turn:live"
	const private = "PRIVATE-PAYLOAD"
	payload := func(status int32, p string) func(context.Context, *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
		return func(context.Context, *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
			return &lambda.InvokeOutput{StatusCode: status, Payload: []byte(p)}, nil
		}
	}
	tests := []struct {
		name   string
		invoke func(context.Context, *lambda.InvokeInput) (*lambda.InvokeOutput, error)
		want   Result
		kind   Kind // "" for success
	}{
		{"success", payload(200, `{"state":{"lang":"fr"},"response":"Bonjour","end":true}`),
			Result{State: map[string]any{"lang": "fr"}, Response: ptr("Bonjour"), End: true}, ""},
		{"custom SIP handoff", payload(200, `{"handoff":true,"outbound_caller_id":"+33100000000","outbound_endpoint":"paris-pbx"}`),
			Result{Handoff: &Handoff{Destination: "paris-pbx", SIP: &SIP{OutboundCallerID: "+33100000000", OutboundEndpoint: "paris-pbx"}}}, ""},
		{"null payload", payload(200, `null`), Result{}, ""},
		{"function error", func(context.Context, *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
			return &lambda.InvokeOutput{StatusCode: 200, FunctionError: ptr("Unhandled"),
				Payload: []byte(`{"errorMessage":"` + private + `","errorType":"TypeError"}`)}, nil
		}, Result{}, KindFunctionError},
		{"garbage payload", payload(200, `"`+private+`"`), Result{}, KindBadAnswer},
		{"wrong types", payload(200, `{"state":"`+private+`"}`), Result{}, KindBadAnswer},
		{"too large", payload(200, `{"response":"`+strings.Repeat("x", MaxAnswer)+`"}`), Result{}, KindBadAnswer},
		{"status not 2xx", payload(500, `{}`), Result{}, KindInvoke},
		{"service error", func(context.Context, *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
			return nil, &smithy.OperationError{ServiceID: "Lambda", OperationName: "Invoke", Err: &types.ResourceNotFoundException{
				Message: ptr("Function not found: " + arn + " " + private)}}
		}, Result{}, KindInvoke},
		{"slow", func(ctx context.Context, _ *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
			<-ctx.Done() // slower than the timeout
			return nil, ctx.Err()
		}, Result{}, KindTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in *lambda.InvokeInput
			fake := &fakeLambda{invoke: func(ctx context.Context, i *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
				in = i
				return tt.invoke(ctx, i)
			}}
			r := NewRunner(Options{Lambda: fake})
			tg := Target{LambdaARN: arn, Timeout: 50 * time.Millisecond}
			got, err := r.Run(context.Background(), tg, turnCall())
			if in == nil || *in.FunctionName != arn || in.InvocationType != types.InvocationTypeRequestResponse {
				t.Fatalf("invoke input %+v", in)
			}
			if want, _ := encodeRequest(turnCall()); string(in.Payload) != string(want) {
				t.Errorf("payload %s\nwant %s", in.Payload, want)
			}
			if tt.kind != "" {
				e := MustKind(t, err, tt.kind)
				if e.Hook != "on_turn" {
					t.Errorf("hook %q", e.Hook)
				}
				for _, s := range []string{"PRIVATE", "xxxx", "123456789012", "errorMessage"} {
					if strings.Contains(err.Error(), s) {
						t.Errorf("error %q holds %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestLambdaErrorText(t *testing.T) {
	fake := &fakeLambda{invoke: func(context.Context, *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
		return nil, &smithy.GenericAPIError{Code: "TooManyRequestsException", Message: "Rate exceeded"}
	}}
	_, err := NewRunner(Options{Lambda: fake}).Run(context.Background(),
		Target{LambdaARN: "arn:aws:lambda:eu-west-1:123456789012:function:f"}, Call{Hook: "on_end", Conversation: testConversation()})
	e := MustKind(t, err, KindInvoke)
	if want := "hooks: on_end: invoke: Lambda refused the invoke: TooManyRequestsException"; e.Error() != want {
		t.Errorf("error %q, want %q", e, want)
	}
}

// TestConcurrentRuns shares one Runner between goroutines (run with -race).
func TestConcurrentRuns(t *testing.T) {
	var n atomic.Int32
	fn := newFunction(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"state":{"n":`+strconv.Itoa(int(n.Add(1)))+`}}`)
	})
	r := fn.runner(t, nil)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if _, err := r.Run(context.Background(), fn.target(), turnCall()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := len(fn.requests()); got != 16 {
		t.Errorf("function got %d calls, want 16", got)
	}
}
