package webhook

import (
	"crypto/tls"
	"net/http"
	"time"
)

// NewClient returns an HTTP client for calls the service makes to customer
// URLs that need the response body (an HTTP agent, a project function): the
// same guard as a Sender's. It never uses a proxy, never follows redirects
// (a 3xx is returned as the response), and refuses at dial time every
// address that is not public (loopback too, with opts.AllowLoopback), so
// the checked address is the one connected to.
//
// The client has no overall timeout: callers bound each request with its
// context. opts.UserAgent and opts.Now are not used (the caller sets its own
// headers). It is safe for concurrent use; build one and share it.
func NewClient(opts Options) *http.Client { return noRedirects(guardedTransport(opts)) }

// guardedTransport is the transport of every call to a customer URL
// (NewClient, NewSender): no proxy, TLS 1.2 at least, and a dialer that
// refuses non-public addresses.
func guardedTransport(opts Options) *http.Transport {
	tlsConf := &tls.Config{}
	if opts.TLSConfig != nil {
		tlsConf = opts.TLSConfig.Clone()
	}
	if tlsConf.MinVersion == 0 {
		tlsConf.MinVersion = tls.VersionTLS12
	}
	return &http.Transport{
		Proxy:                  nil, // never from the environment
		DialContext:            guardedDialer(opts).DialContext,
		TLSClientConfig:        tlsConf,
		TLSHandshakeTimeout:    10 * time.Second,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// noRedirects returns a client over t that returns a 3xx as the response.
func noRedirects(t http.RoundTripper) *http.Client {
	return &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
