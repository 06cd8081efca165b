package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
	"github.com/voiceops/opsapi/shared/voiceops/netguard"
)

// Outcome is what a delivery attempt means for the delivery.
type Outcome string

const (
	// Delivered: the receiver answered 2xx.
	Delivered Outcome = "delivered"
	// Retry: a timeout, a connection, DNS or TLS error, a refused address,
	// 3xx (redirects are never followed), 408, 429 or 5xx.
	Retry Outcome = "retry"
	// Failed: any other answer (other 4xx, 1xx, codes outside 100-599), or an
	// attempt that could never succeed (bad URL scheme, bad secret).
	Failed Outcome = "failed"
)

const (
	// DefaultUserAgent is sent when Options.UserAgent is empty.
	DefaultUserAgent = "VoiceOps-Webhooks/1.0"
	// DefaultTimeout applies when Attempt.Timeout is not positive.
	DefaultTimeout = time.Duration(voiceops.DefaultTimeoutMS) * time.Millisecond
	// MaxResponseBody is how much of a response body is read (and discarded)
	// so the connection can be reused.
	MaxResponseBody = 64 << 10
	// maxRetryAfter bounds a parsed Retry-After; NextDelay caps it further.
	maxRetryAfter = 24 * time.Hour
)

// ErrRefusedAddress is the dial-time refusal of a non-public address.
var ErrRefusedAddress = errors.New("webhook: refused to connect to a non-public address")

// Options configure a Sender.
type Options struct {
	// AllowLoopback lets deliveries reach loopback addresses, and use http://
	// on loopback hosts. Only the local dev server sets it.
	AllowLoopback bool
	// UserAgent is the User-Agent header; DefaultUserAgent when empty.
	UserAgent string
	// TLSConfig is cloned for the transport; nil trusts the system roots.
	TLSConfig *tls.Config
	// Now is the clock: the signature timestamp, SentAt and Duration.
	// time.Now when nil.
	Now func() time.Time
	// Resolver looks host names up; nil is net.DefaultResolver. Tests use
	// a stub so that no query leaves the machine. Whatever it answers, the
	// dial-time guard checks the address about to be connected to.
	Resolver *net.Resolver
}

// Attempt is one delivery attempt.
type Attempt struct {
	URL     string
	Headers map[string]string // the endpoint's custom headers
	Body    []byte            // sent byte for byte
	EventID string            // webhook-id, the same on every attempt
	Secrets []string          // the endpoint's valid secrets at this time
	Timeout time.Duration     // for the whole attempt; DefaultTimeout if <= 0
	// Unsigned sends no signature headers (and needs no Secrets): for the
	// vendor kinds, whose receivers check none.
	Unsigned bool
}

// Result is what the delivery log keeps of an attempt.
type Result struct {
	StatusCode int           // 0 when no response arrived
	Duration   time.Duration // from SentAt to the end of the exchange
	Error      string        // short and safe: never a body, secret or URL
	Outcome    Outcome
	RetryAfter time.Duration // a 429's Retry-After, 0 if absent or invalid
	SentAt     time.Time     // also the signature timestamp
}

// Sender sends delivery attempts over one shared, pooled HTTP client whose
// dialer refuses non-public addresses. It is safe for concurrent use.
type Sender struct {
	client        *http.Client
	transport     *http.Transport
	allowLoopback bool
	userAgent     string
	now           func() time.Time
}

// NewSender returns a Sender. Its transport never uses a proxy, never follows
// redirects, and checks every address it connects to at dial time: the
// dialer's Control function sees the resolved IP of the very socket being
// connected, so the checked address is the dialed one (no DNS rebinding
// window between check and connect).
func NewSender(opts Options) *Sender {
	s := &Sender{allowLoopback: opts.AllowLoopback, userAgent: opts.UserAgent, now: opts.Now}
	if s.userAgent == "" {
		s.userAgent = DefaultUserAgent
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.transport = guardedTransport(opts)
	s.transport.DisableCompression = true // the body is discarded anyway
	s.client = noRedirects(s.transport)
	return s
}

// guardedDialer returns the dialer of a Sender's or NewClient's transport:
// its Control function (dialGuard) refuses every address that is not
// public, whatever name or spelling led to it.
func guardedDialer(opts Options) *net.Dialer {
	return &net.Dialer{
		Timeout:   time.Duration(voiceops.MaxTimeoutMS) * time.Millisecond, // the attempt's context is usually shorter
		KeepAlive: 30 * time.Second,
		Resolver:  opts.Resolver,
		Control:   dialGuard(opts.AllowLoopback),
	}
}

// dialGuard returns the dialer's Control function: it runs after the socket
// is created and before connect(2), with the numeric address about to be
// connected to.
func dialGuard(allowLoopback bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if network != "tcp4" && network != "tcp6" {
			return ErrRefusedAddress
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return ErrRefusedAddress
		}
		ip := ap.Addr()
		if netguard.IsPublic(ip) || (allowLoopback && netguard.IsLoopback(ip)) {
			return nil
		}
		return ErrRefusedAddress
	}
}

// CloseIdleConnections closes the pooled connections not in use.
func (s *Sender) CloseIdleConnections() { s.transport.CloseIdleConnections() }

// Send makes one delivery attempt: a POST of a.Body, signed at this attempt's
// time, to a.URL. It never returns an error; the Result says what happened.
//
// A URL whose host resolves only to refused addresses gives Retry, not
// Failed: the endpoint's URL passed validation when saved, so a refusal means
// its DNS now points somewhere internal, which may be a temporary mistake the
// customer fixes; the schedule bounds the retries.
func (s *Sender) Send(ctx context.Context, a Attempt) Result {
	start := s.now()
	res := Result{SentAt: start}
	done := func(o Outcome, msg string) Result {
		res.Outcome, res.Error = o, msg
		res.Duration = s.now().Sub(start)
		return res
	}

	u, err := url.Parse(a.URL)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return done(Failed, "invalid URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && s.allowLoopback && netguard.IsLoopbackName(u.Hostname()):
	default:
		return done(Failed, "URL must be https://")
	}
	if u.User != nil {
		return done(Failed, "URL must not contain credentials")
	}
	var sig http.Header
	if !a.Unsigned {
		var err error
		if sig, err = Sign(a.EventID, start, a.Body, a.Secrets); err != nil {
			return done(Failed, err.Error())
		}
	}

	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, bytes.NewReader(a.Body))
	if err != nil {
		return done(Failed, "invalid URL")
	}
	for k, v := range a.Headers {
		if voiceops.ReservedHeader(k) {
			continue // never sent, whatever an endpoint holds
		}
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.userAgent)
	for _, name := range signatureHeaders {
		if sig == nil {
			break
		}
		// Custom headers cannot replace a signature header: drop any
		// canonical-case copy, then write the wire spelling.
		canon := http.CanonicalHeaderKey(name)
		v := sig[canon]
		delete(req.Header, canon)
		req.Header[name] = v
	}

	resp, err := s.client.Do(req)
	if err == nil && ctx.Err() != nil {
		// The answer raced the deadline: the attempt took longer than the
		// endpoint's timeout, so it counts as timed out (and is retried with
		// the same webhook-id, which receivers deduplicate on).
		_ = resp.Body.Close()
		err = ctx.Err()
	}
	if err != nil {
		return done(Retry, describe(err, timeout))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBody))
	_ = resp.Body.Close()

	res.StatusCode = resp.StatusCode
	if resp.StatusCode == http.StatusTooManyRequests {
		res.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), s.now())
	}
	switch o := classify(resp.StatusCode); {
	case o == Delivered:
		return done(o, "")
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return done(o, fmt.Sprintf("HTTP %d: redirects are not followed", resp.StatusCode))
	default:
		return done(o, fmt.Sprintf("HTTP %d", resp.StatusCode))
	}
}

// classify maps a status code to an outcome.
func classify(code int) Outcome {
	switch {
	case code >= 200 && code < 300:
		return Delivered
	case code >= 300 && code < 400, code == http.StatusRequestTimeout,
		code == http.StatusTooManyRequests, code >= 500 && code < 600:
		return Retry
	default:
		return Failed
	}
}

// describe turns a transport error into short text for the delivery log. It
// never uses err.Error() whole: url.Error quotes the URL, which may carry a
// token in its query.
func describe(err error, timeout time.Duration) string {
	var (
		dnsErr    *net.DNSError
		certErr   *tls.CertificateVerificationError
		alertErr  tls.AlertError
		recordErr tls.RecordHeaderError
		netErr    net.Error
	)
	switch {
	case errors.Is(err, ErrRefusedAddress):
		// No IP: it could reveal how an internal name resolves.
		return "refused: the host resolves to a non-public address"
	case errors.As(err, &dnsErr):
		switch {
		case dnsErr.IsNotFound:
			return "DNS: no such host"
		case dnsErr.IsTimeout:
			return "DNS lookup timed out"
		}
		return "DNS lookup failed"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timed out after " + timeout.String()
	case errors.Is(err, context.Canceled):
		return "canceled before a response arrived"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the receiver"
	case errors.As(err, &certErr):
		return "TLS certificate not accepted: " + certErr.Err.Error()
	case errors.As(err, &alertErr):
		return "TLS handshake failed: " + alertErr.Error()
	case errors.As(err, &recordErr):
		return "TLS handshake failed: the receiver did not answer TLS"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by the receiver before a response"
	default:
		return "connection failed"
	}
}

// parseRetryAfter reads delay-seconds or an HTTP-date (RFC 9110 10.2.3); 0
// when absent, invalid or in the past, at most maxRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}
