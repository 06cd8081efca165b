package webhook

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

var testSecrets = []string{kaSecret, kaSecret2}

// received is what a test receiver saw of one request.
type received struct {
	method, path string
	proto        int
	header       http.Header
	body         []byte
}

// receiver is an httptest TLS server on 127.0.0.1 that records requests.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []received
}

func newReceiver(t testing.TB, http2 bool, h http.HandlerFunc) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.srv = startTLS(t, http2, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, received{r.Method, r.URL.Path, r.ProtoMajor, r.Header.Clone(), body})
		rc.mu.Unlock()
		if h != nil {
			h(w, r)
		}
	})
	return rc
}

// startTLS starts an httptest TLS server on 127.0.0.1.
func startTLS(t testing.TB, http2 bool, h http.HandlerFunc) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = http2
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake noise from closed conns
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.reqs...)
}

// tlsConfig trusts the receiver's certificate, as Options.TLSConfig.
func (rc *receiver) tlsConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(rc.srv.Certificate())
	return &tls.Config{RootCAs: pool}
}

func (rc *receiver) sender(t testing.TB, now func() time.Time) *Sender {
	s := NewSender(Options{AllowLoopback: true, UserAgent: "opsapi-test/1", TLSConfig: rc.tlsConfig(), Now: now})
	t.Cleanup(s.CloseIdleConnections)
	return s
}

func TestSendDelivered(t *testing.T) {
	big := strings.Repeat("x", 200<<10) // larger than the read limit
	rc := newReceiver(t, false, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, big)
	})
	s := rc.sender(t, nil)
	body := []byte("{\"event_type\":\"alerts.triggered\",\"name\":\"caf\u00e9\"}\n")
	res := s.Send(context.Background(), Attempt{
		URL:     rc.srv.URL + "/hooks/in?x=1",
		Headers: map[string]string{"Authorization": "Bearer t0k", "X-Custom": "custom value"},
		Body:    body, EventID: "evt_123", Secrets: testSecrets, Timeout: 5 * time.Second,
	})
	if res.Outcome != Delivered || res.StatusCode != 200 || res.Error != "" || res.SentAt.IsZero() {
		t.Fatalf("result %+v, want delivered 200", res)
	}
	reqs := rc.requests()
	if len(reqs) != 1 {
		t.Fatalf("receiver got %d requests", len(reqs))
	}
	r := reqs[0]
	if r.method != http.MethodPost || r.path != "/hooks/in" || string(r.body) != string(body) {
		t.Errorf("got %s %s %q", r.method, r.path, r.body)
	}
	for name, want := range map[string]string{
		"Authorization": "Bearer t0k", "X-Custom": "custom value",
		"Content-Type": "application/json", "User-Agent": "opsapi-test/1",
		"Webhook-Id": "evt_123", "X-Service-Event-Id": "evt_123",
		"Content-Length": strconv.Itoa(len(body)),
	} {
		if got := r.header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if ts := r.header.Get("Webhook-Timestamp"); ts != strconv.FormatInt(res.SentAt.Unix(), 10) || r.header.Get("X-Service-Timestamp") != ts {
		t.Errorf("timestamps %q/%q, sent at %v", ts, r.header.Get("X-Service-Timestamp"), res.SentAt)
	}
	verifyBoth(t, r, testSecrets)
}

// verifyBoth checks both signature schemes as a receiver would: the
// Standard Webhooks library (timestamp tolerance included) per secret, and
// the compatibility HMAC recomputed.
func verifyBoth(t *testing.T, r received, secrets []string) {
	t.Helper()
	compat := strings.Split(r.header.Get("X-Service-Signature"), " ")
	if len(compat) != len(secrets) || len(strings.Split(r.header.Get("Webhook-Signature"), " ")) != len(secrets) {
		t.Fatalf("signatures %q / %q, want %d each", r.header.Get("Webhook-Signature"), compat, len(secrets))
	}
	for i, secret := range secrets {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(r.body, r.header); err != nil {
			t.Errorf("secret %d: receiver-side Verify: %v", i+1, err)
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(r.header.Get("X-Service-Timestamp") + "." + string(r.body)))
		if want := hex.EncodeToString(mac.Sum(nil)); compat[i] != want {
			t.Errorf("secret %d: compatibility signature %s, want %s", i+1, compat[i], want)
		}
	}
}

// TestSendResigns: each attempt is signed at its own time with the same id.
func TestSendResigns(t *testing.T) {
	rc := newReceiver(t, false, nil)
	var now atomic.Pointer[time.Time]
	t1 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	t2 := t1.Add(5 * time.Minute)
	now.Store(&t1)
	s := rc.sender(t, func() time.Time { return *now.Load() })
	a := Attempt{URL: rc.srv.URL, Body: []byte(`{"n":1}`), EventID: "evt_same", Secrets: testSecrets[:1]}
	r1 := s.Send(context.Background(), a)
	now.Store(&t2)
	r2 := s.Send(context.Background(), a)
	if r1.Outcome != Delivered || r2.Outcome != Delivered {
		t.Fatalf("results %+v %+v", r1, r2)
	}
	if !r1.SentAt.Equal(t1) || !r2.SentAt.Equal(t2) || r1.Duration != 0 {
		t.Errorf("SentAt %v %v, Duration %v: not from the injected clock", r1.SentAt, r2.SentAt, r1.Duration)
	}
	reqs := rc.requests()
	for i, want := range []time.Time{t1, t2} {
		h := reqs[i].header
		if h.Get("Webhook-Id") != "evt_same" || h.Get("Webhook-Timestamp") != strconv.FormatInt(want.Unix(), 10) {
			t.Errorf("attempt %d: id %q timestamp %q", i+1, h.Get("Webhook-Id"), h.Get("Webhook-Timestamp"))
		}
		wh, _ := standardwebhooks.NewWebhook(testSecrets[0])
		if err := wh.VerifyIgnoringTimestamp(reqs[i].body, h); err != nil {
			t.Errorf("attempt %d: %v", i+1, err)
		}
	}
	if reqs[0].header.Get("Webhook-Signature") == reqs[1].header.Get("Webhook-Signature") {
		t.Error("a retry reused the first attempt's signature")
	}
}

func TestSendOutcomeByStatus(t *testing.T) {
	var redirectTargetHits atomic.Int32
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var rc *receiver
	rc = newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/target" {
			redirectTargetHits.Add(1)
			return
		}
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if ra := r.URL.Query().Get("ra"); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		if code >= 300 && code < 400 {
			w.Header().Set("Location", rc.srv.URL+"/target")
		}
		w.WriteHeader(code)
	})
	s := rc.sender(t, func() time.Time { return now })
	cases := []struct {
		path       string
		outcome    Outcome
		retryAfter time.Duration
		errText    string
	}{
		{"/200", Delivered, 0, ""},
		{"/201", Delivered, 0, ""},
		{"/204", Delivered, 0, ""},
		{"/299", Delivered, 0, ""},
		{"/500", Retry, 0, "HTTP 500"},
		{"/502", Retry, 0, "HTTP 502"},
		{"/503?ra=7", Retry, 0, "HTTP 503"}, // Retry-After is taken from 429 only
		{"/599", Retry, 0, "HTTP 599"},
		{"/408", Retry, 0, "HTTP 408"},
		{"/429", Retry, 0, "HTTP 429"},
		{"/429?ra=7", Retry, 7 * time.Second, "HTTP 429"},
		{"/429?ra=" + strings.ReplaceAll(now.Add(30*time.Second).Format(http.TimeFormat), " ", "%20"), Retry, 30 * time.Second, "HTTP 429"},
		{"/429?ra=soon", Retry, 0, "HTTP 429"},
		{"/429?ra=-5", Retry, 0, "HTTP 429"},
		{"/429?ra=99999999999", Retry, maxRetryAfter, "HTTP 429"},
		{"/301", Retry, 0, "redirects are not followed"},
		{"/302", Retry, 0, "redirects are not followed"},
		{"/307", Retry, 0, "redirects are not followed"},
		{"/308", Retry, 0, "redirects are not followed"},
		{"/400", Failed, 0, "HTTP 400"},
		{"/401", Failed, 0, "HTTP 401"},
		{"/404", Failed, 0, "HTTP 404"},
		{"/410", Failed, 0, "HTTP 410"},
		{"/422", Failed, 0, "HTTP 422"},
	}
	for _, c := range cases {
		res := s.Send(context.Background(), Attempt{URL: rc.srv.URL + c.path, Body: []byte(`{}`), EventID: "evt_1", Secrets: testSecrets})
		wantCode, _ := strconv.Atoi(strings.SplitN(c.path[1:], "?", 2)[0])
		if res.Outcome != c.outcome || res.StatusCode != wantCode || res.RetryAfter != c.retryAfter || res.Error != c.errText && !strings.Contains(res.Error, c.errText) {
			t.Errorf("%s: %+v; want %s, %d, retry-after %v, error %q", c.path, res, c.outcome, wantCode, c.retryAfter, c.errText)
		}
	}
	if n := redirectTargetHits.Load(); n != 0 {
		t.Errorf("a redirect was followed: the target got %d requests", n)
	}
}

func TestSendTimeout(t *testing.T) {
	release := make(chan struct{})
	rc := newReceiver(t, false, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	res := rc.sender(t, nil).Send(context.Background(), Attempt{
		URL: rc.srv.URL, Body: []byte(`{}`), EventID: "evt_1", Secrets: testSecrets, Timeout: 200 * time.Millisecond,
	})
	if res.Outcome != Retry || res.StatusCode != 0 || res.Error != "timed out after 200ms" {
		t.Fatalf("result %+v, want a retried timeout", res)
	}
}

func TestSendConnectionErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	_ = ln.Close()

	// A listener that accepts and hangs up at once.
	hangup, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hangup.Close() })
	go func() {
		for {
			c, err := hangup.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()

	// A TLS receiver whose certificate the sender does not trust.
	rc := newReceiver(t, false, nil)

	s := NewSender(Options{AllowLoopback: true})
	t.Cleanup(s.CloseIdleConnections)
	for url, wantErr := range map[string]string{
		"https://" + closedAddr + "/":             "connection refused",
		"https://" + hangup.Addr().String() + "/": "connection",
		rc.srv.URL + "/?token=s3cr3t":             "TLS certificate not accepted: x509: certificate signed by unknown authority",
	} {
		res := s.Send(context.Background(), Attempt{URL: url, Body: []byte(`{}`), EventID: "evt_1", Secrets: testSecrets, Timeout: 5 * time.Second})
		if res.Outcome != Retry || res.StatusCode != 0 || !strings.Contains(res.Error, wantErr) {
			t.Errorf("%s: %+v, want Retry with %q", url, res, wantErr)
		}
		if strings.Contains(res.Error, "s3cr3t") || strings.Contains(res.Error, "whsec_") {
			t.Errorf("%s: error %q leaks the URL or a secret", url, res.Error)
		}
	}
	if n := len(rc.requests()); n != 0 {
		t.Errorf("the untrusted receiver got %d requests", n)
	}
}

func TestSendRefusesBadURLsWithoutNetwork(t *testing.T) {
	for _, allow := range []bool{false, true} {
		s := NewSender(Options{AllowLoopback: allow})
		for _, url := range []string{
			"http://example.com/hook", "ftp://127.0.0.1/", "/relative", "https://", "::bad",
			"https://user:pa55@127.0.0.1:1/",
		} {
			res := s.Send(context.Background(), Attempt{URL: url, Body: []byte(`{}`), EventID: "evt_1", Secrets: testSecrets})
			if res.Outcome != Failed || res.Error == "" || strings.Contains(res.Error, "pa55") {
				t.Errorf("allowLoopback=%v %q: %+v, want Failed", allow, url, res)
			}
		}
	}
	// http:// on a loopback host needs AllowLoopback.
	res := NewSender(Options{}).Send(context.Background(), Attempt{URL: "http://127.0.0.1:1/", Body: []byte(`{}`), EventID: "evt_1", Secrets: testSecrets})
	if res.Outcome != Failed || res.Error != "URL must be https://" {
		t.Errorf("http loopback without the flag: %+v", res)
	}
	// A bad secret cannot be fixed by retrying.
	res = NewSender(Options{AllowLoopback: true}).Send(context.Background(), Attempt{URL: "https://127.0.0.1:1/", Body: []byte(`{}`), EventID: "evt_1", Secrets: []string{"nope"}})
	if res.Outcome != Failed || strings.Contains(res.Error, "nope") {
		t.Errorf("bad secret: %+v", res)
	}
}

// TestSendCustomHeadersCannotOverride: the endpoint's headers go first and
// cannot replace Content-Type, User-Agent or a signature header.
func TestSendCustomHeadersCannotOverride(t *testing.T) {
	rc := newReceiver(t, false, nil)
	res := rc.sender(t, nil).Send(context.Background(), Attempt{
		URL: rc.srv.URL, Body: []byte(`{"a":1}`), EventID: "evt_9", Secrets: testSecrets[:1],
		Headers: map[string]string{
			"webhook-signature": "v1,forged", "Webhook-Id": "evt_forged", "X-Service-Signature": "forged",
			"x-service-timestamp": "1", "Content-Type": "text/plain", "user-agent": "evil/1",
		},
	})
	if res.Outcome != Delivered {
		t.Fatalf("result %+v", res)
	}
	r := rc.requests()[0]
	for _, name := range []string{"Webhook-Signature", "Webhook-Id", "X-Service-Signature", "X-Service-Timestamp", "Content-Type", "User-Agent"} {
		if len(r.header.Values(name)) != 1 {
			t.Errorf("%s sent %d times: %q", name, len(r.header.Values(name)), r.header.Values(name))
		}
	}
	if r.header.Get("Webhook-Id") != "evt_9" || r.header.Get("Content-Type") != "application/json" || r.header.Get("User-Agent") != "opsapi-test/1" {
		t.Errorf("headers %v", r.header)
	}
	verifyBoth(t, r, testSecrets[:1])
}

// TestSendDropsConnectionLevelHeaders: an endpoint stored with a name now
// refused (Expect, Upgrade, Proxy-Authorization) is delivered without it.
func TestSendDropsConnectionLevelHeaders(t *testing.T) {
	rc := newReceiver(t, false, nil)
	res := rc.sender(t, nil).Send(context.Background(), Attempt{
		URL: rc.srv.URL, Body: []byte(`{"a":1}`), EventID: "evt_8", Secrets: testSecrets[:1],
		Headers: map[string]string{"Upgrade": "h2c", "Proxy-Authorization": "Basic eDp5", "Keep-Alive": "timeout=600", "X-Tenant": "t1"},
	})
	if res.Outcome != Delivered {
		t.Fatalf("result %+v", res)
	}
	r := rc.requests()[0]
	for _, name := range []string{"Upgrade", "Proxy-Authorization", "Keep-Alive"} {
		if v := r.header.Values(name); len(v) != 0 {
			t.Errorf("%s sent: %q", name, v)
		}
	}
	if r.header.Get("X-Tenant") != "t1" {
		t.Errorf("X-Tenant %q, want t1", r.header.Get("X-Tenant"))
	}
}

// TestSendWireSpelling reads the raw HTTP/1.1 request: the Standard Webhooks
// headers go out lowercase, the compatibility ones as the contract spells
// them. It also shows http:// works on loopback with AllowLoopback.
func TestSendWireSpelling(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	head := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			head <- ""
			return
		}
		defer c.Close()
		var sb strings.Builder
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			sb.WriteString(line)
			if err != nil || line == "\r\n" {
				break
			}
		}
		_, _ = io.WriteString(c, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
		head <- sb.String()
	}()
	s := NewSender(Options{AllowLoopback: true})
	res := s.Send(context.Background(), Attempt{URL: "http://" + ln.Addr().String() + "/in", Body: []byte(`{}`), EventID: "evt_w", Secrets: testSecrets[:1]})
	if res.Outcome != Delivered || res.StatusCode != 204 {
		t.Fatalf("result %+v", res)
	}
	h := <-head
	for _, want := range []string{"POST /in HTTP/1.1\r\n", "\r\nwebhook-id: evt_w\r\n", "\r\nwebhook-timestamp: ", "\r\nwebhook-signature: v1,",
		"\r\nX-Service-Event-ID: evt_w\r\n", "\r\nX-Service-Timestamp: ", "\r\nX-Service-Signature: "} {
		if !strings.Contains(h, want) {
			t.Errorf("request head lacks %q:\n%s", want, h)
		}
	}
}

func TestSendHTTP2(t *testing.T) {
	rc := newReceiver(t, true, nil)
	res := rc.sender(t, nil).Send(context.Background(), Attempt{URL: rc.srv.URL, Body: []byte(`{}`), EventID: "evt_2", Secrets: testSecrets})
	if res.Outcome != Delivered {
		t.Fatalf("result %+v", res)
	}
	r := rc.requests()[0]
	if r.proto != 2 {
		t.Errorf("receiver saw HTTP/%d, want HTTP/2", r.proto)
	}
	verifyBoth(t, r, testSecrets)
}

func TestSenderNeverProxiesOrRedirects(t *testing.T) {
	s := NewSender(Options{})
	if s.transport.Proxy != nil {
		t.Error("the transport takes a proxy")
	}
	if s.client.CheckRedirect == nil || !errors.Is(s.client.CheckRedirect(nil, nil), http.ErrUseLastResponse) {
		t.Error("the client may follow redirects")
	}
	if s.transport.TLSClientConfig.RootCAs != nil || s.transport.TLSClientConfig.MinVersion < tls.VersionTLS12 {
		t.Error("nil TLSConfig must mean the system roots, TLS 1.2 or later")
	}
}

// listener accepts TCP connections and can prove that nobody but itself
// connected: see untouched.
type listener struct {
	ln    net.Listener
	conns chan net.Conn
}

func listen(t *testing.T, addr string) *listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{ln: ln, conns: make(chan net.Conn, 64)}
	go func() {
		defer close(l.conns)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.conns <- c
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		for c := range l.conns {
			_ = c.Close()
		}
	})
	return l
}

func (l *listener) port() string { return strconv.Itoa(l.ln.Addr().(*net.TCPAddr).Port) }

// untouched connects to the listener itself and checks that its own
// connection is the first one accepted. The accept queue is FIFO, so an
// earlier connection by the sender would come first; no sleeping involved.
func (l *listener) untouched(t *testing.T) {
	t.Helper()
	c, err := net.Dial("tcp", l.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case got := <-l.conns:
		if got.RemoteAddr().String() != c.LocalAddr().String() {
			t.Errorf("%s accepted a connection from %s before the sentinel", l.ln.Addr(), got.RemoteAddr())
		}
		_ = got.Close()
	case <-time.After(10 * time.Second): // a safety net, not a timing assertion
		t.Fatal("the sentinel connection was never accepted")
	}
}

// TestSendRefusesNonPublicAtDialTime: non-public addresses, literal or
// resolved, are refused by the dialer before connect(2). Only loopback
// listeners exist; the 10/8, CGNAT and link-local addresses are never
// connected to because the refusal precedes connect.
func TestSendRefusesNonPublicAtDialTime(t *testing.T) {
	v4 := listen(t, "127.0.0.1:0")
	v6 := listen(t, "[::1]:0")
	strict := NewSender(Options{})
	loopbackOK := NewSender(Options{AllowLoopback: true})
	cases := []struct {
		s   *Sender
		url string
	}{
		{strict, "https://127.0.0.1:" + v4.port() + "/"},
		{strict, "https://0.0.0.0:" + v4.port() + "/"},
		{strict, "https://[::ffff:127.0.0.1]:" + v4.port() + "/"},
		{strict, "https://localhost:" + v4.port() + "/"},
		{strict, "https://[::1]:" + v6.port() + "/"},
		{strict, "https://10.0.0.1/"},
		{strict, "https://100.64.0.1/"},
		{strict, "https://169.254.169.254/latest/meta-data/"},
		{strict, "https://[::ffff:169.254.169.254]/"},
		{strict, "https://[fe80::1%25lo]/"},
		{strict, "https://[fd00::1]/"},
		// AllowLoopback opens loopback only.
		{loopbackOK, "https://10.0.0.1/"},
		{loopbackOK, "https://169.254.169.254/latest/meta-data/"},
		{loopbackOK, "https://192.168.1.1/"},
	}
	for _, c := range cases {
		res := c.s.Send(context.Background(), Attempt{URL: c.url, Body: []byte(`{}`), EventID: "evt_1", Secrets: testSecrets, Timeout: 2 * time.Second})
		if res.Outcome != Retry || res.StatusCode != 0 || res.Error != "refused: the host resolves to a non-public address" {
			t.Errorf("%s: %+v, want a dial-time refusal", c.url, res)
		}
	}
	v4.untouched(t)
	v6.untouched(t)
}

func TestDialGuard(t *testing.T) {
	strict, loose := dialGuard(false), dialGuard(true)
	for addr, want := range map[string][2]bool{ // strict, loose
		"93.184.215.14:443":          {true, true},
		"[2606:4700::6810:85e5]:443": {true, true},
		"127.0.0.1:443":              {false, true},
		"[::1]:443":                  {false, true},
		"[::ffff:127.0.0.1]:443":     {false, true},
		"10.1.2.3:443":               {false, false},
		"169.254.169.254:80":         {false, false},
		"[fe80::1%eth0]:443":         {false, false},
		"[::ffff:10.0.0.1]:443":      {false, false},
		"not-an-address":             {false, false},
	} {
		for i, g := range []func(string, string, syscall.RawConn) error{strict, loose} {
			network := "tcp4"
			if strings.HasPrefix(addr, "[") {
				network = "tcp6"
			}
			if err := g(network, addr, nil); (err == nil) != want[i] {
				t.Errorf("guard(allowLoopback=%v)(%s) = %v", i == 1, addr, err)
			}
		}
	}
	if strict("udp4", "93.184.215.14:53", nil) == nil {
		t.Error("guard allowed a non-TCP network")
	}
}

// TestDescribe covers the error texts the end-to-end tests cannot reach
// without outside DNS.
func TestDescribe(t *testing.T) {
	wrap := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://h.example/?token=s3cr3t", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{wrap(&net.DNSError{Err: "no such host", Name: "h.example", IsNotFound: true}), "DNS: no such host"},
		{wrap(&net.DNSError{Err: "i/o timeout", Name: "h.example", IsTimeout: true}), "DNS lookup timed out"},
		{wrap(&net.DNSError{Err: "server misbehaving", Name: "h.example"}), "DNS lookup failed"},
		{wrap(ErrRefusedAddress), "refused: the host resolves to a non-public address"},
		{wrap(context.DeadlineExceeded), "timed out after 3s"},
		{wrap(context.Canceled), "canceled before a response arrived"},
		{wrap(syscall.ECONNREFUSED), "connection refused"},
		{wrap(syscall.ECONNRESET), "connection reset by the receiver"},
		{wrap(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), "TLS handshake failed: the receiver did not answer TLS"},
		{wrap(io.ErrUnexpectedEOF), "connection closed by the receiver before a response"},
		{wrap(errors.New("something with s3cr3t")), "connection failed"},
	} {
		if got := describe(c.err, 3*time.Second); got != c.want {
			t.Errorf("describe(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
