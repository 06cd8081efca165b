package webhook

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// stubResolver is a resolver whose DNS server is this process: every A
// query is answered with the IPv4 addresses of addrs, every AAAA query
// with the IPv6 ones, whatever the name. Its queries travel over an
// in-memory pipe, so no packet leaves the machine.
func stubResolver(addrs ...netip.Addr) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go serveDNS(server, addrs)
		return client, nil
	}}
}

// serveDNS answers queries on c, framed as over TCP (a net.Pipe is not a
// PacketConn, so the resolver uses the stream framing). A query it cannot
// read ends the exchange, and the lookup fails.
func serveDNS(c net.Conn, addrs []netip.Addr) {
	defer c.Close()
	for {
		var n uint16
		if binary.Read(c, binary.BigEndian, &n) != nil {
			return
		}
		q := make([]byte, n)
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(q)
		if err != nil {
			return
		}
		question, err := p.Question()
		if err != nil {
			return
		}
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true})
		b.EnableCompression()
		_ = b.StartQuestions()
		_ = b.Question(question)
		_ = b.StartAnswers()
		rh := dnsmessage.ResourceHeader{Name: question.Name, Type: question.Type, Class: dnsmessage.ClassINET, TTL: 60}
		for _, a := range addrs {
			switch {
			case question.Type == dnsmessage.TypeA && a.Is4():
				_ = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
			case question.Type == dnsmessage.TypeAAAA && a.Is6():
				_ = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
			}
		}
		msg, err := b.Finish()
		if err != nil {
			return
		}
		if binary.Write(c, binary.BigEndian, uint16(len(msg))) != nil {
			return
		}
		if _, err := c.Write(msg); err != nil {
			return
		}
	}
}

// errGuardPassed stops a test dial that the guard let through, so that not
// even a broken guard connects anywhere.
var errGuardPassed = errors.New("test: the guard let this address through")

// watched wraps a dialer's Control so that every address it is asked about
// is recorded, and an address the guard accepts is not connected to either.
type watched struct {
	mu   sync.Mutex
	seen map[string]error
}

func (w *watched) wrap(guard func(string, string, syscall.RawConn) error) func(string, string, syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		err := guard(network, address, c)
		if err == nil {
			err = errGuardPassed
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.seen == nil {
			w.seen = map[string]error{}
		}
		w.seen[address] = err
		return err
	}
}

// disguised lists the spellings of non-public addresses, each
// with the address a resolver may hand back for it: inet_aton reads the
// numeric ones (glibc's getaddrinfo does), a DNS server may answer
// anything for a name.
var disguised = []struct {
	host string // as it would be written in a URL
	addr string // what it resolves to
}{
	{"0x7f.0.0.1", "127.0.0.1"},
	{"0177.0.0.1", "127.0.0.1"},
	{"127.1", "127.0.0.1"},
	{"127.0.1", "127.0.0.1"},
	{"127.000.000.001", "127.0.0.1"},
	{"169.254.43518", "169.254.169.254"},
	{"0xA9.0xFE.0xA9.0xFE", "169.254.169.254"},
	{"10.1", "10.0.0.1"},
	{"127.0.0.1.", "127.0.0.1"},
	{"169.254.169.254.", "169.254.169.254"},
	{"::127.0.0.1", "::127.0.0.1"},
	{"::ffff:0:7f00:1", "::ffff:0:7f00:1"},
	{"::ffff:0:a9fe:a9fe", "::ffff:0:a9fe:a9fe"},
	{"::a9fe:a9fe", "::a9fe:a9fe"},
	{"::ffff:127.0.0.1", "::ffff:127.0.0.1"},
	{"::2", "::2"},
	{"fd00:ec2::254", "fd00:ec2::254"},
	{"100.64.0.1", "100.64.0.1"},
}

// TestDialGuardRefusesResolvedDisguisedAddresses: whatever the spelling of
// a host, the dialer resolves it and its guard sees the numeric address
// about to be connected to; every non-public one is refused before
// connect(2). Each spelling is dialed as written, and a name that the stub
// resolver answers with its address is dialed too; an address the guard
// accepted would not be connected to either (watched).
//
// Go's own resolver (deployed binaries are built with CGO_ENABLED=0) never
// looks up an all-numeric name such as 127.1: it answers "no such host"
// without a query, which also connects nowhere.
func TestDialGuardRefusesResolvedDisguisedAddresses(t *testing.T) {
	for _, c := range disguised {
		addr := netip.MustParseAddr(c.addr)
		for _, host := range []string{c.host, "hooks.attacker.example"} {
			w := &watched{}
			d := &net.Dialer{Timeout: 5 * time.Second, Resolver: stubResolver(addr), Control: w.wrap(dialGuard(false))}
			conn, err := d.DialContext(t.Context(), "tcp", net.JoinHostPort(host, "443"))
			if err == nil {
				conn.Close()
				t.Fatalf("%s (%s): connected", host, c.addr)
			}
			var dnsErr *net.DNSError
			if errors.As(err, &dnsErr) && dnsErr.IsNotFound && host == c.host && len(w.seen) == 0 {
				continue // never resolved, never dialed
			}
			// Go dials an IPv4-mapped address as the IPv4 address.
			got, asked := w.seen[netip.AddrPortFrom(addr.Unmap(), 443).String()]
			switch {
			case !asked:
				t.Errorf("%s (%s): the guard was never asked (dial error: %v; asked about %v)", host, c.addr, err, w.seen)
			case !errors.Is(got, ErrRefusedAddress):
				t.Errorf("%s (%s): guard answered %v, want ErrRefusedAddress", host, c.addr, got)
			case !errors.Is(err, ErrRefusedAddress):
				t.Errorf("%s (%s): dial error %v, want ErrRefusedAddress", host, c.addr, err)
			}
		}
	}
}

// TestSendRefusesEverySpellingThroughStubResolver: a Sender given each
// spelling in a URL (as written, including the fullwidth, circled and
// ideographic forms that net/http maps with IDNA before dialing), or a name
// resolving to it, connects nowhere: the dial is refused by the guard, or
// the name is never resolved at all. The Sender's transport dials through
// its own guardedDialer, watched.
func TestSendRefusesEverySpellingThroughStubResolver(t *testing.T) {
	urls := map[string]string{ // URL -> the address the stub resolver answers
		"https://１２７.0.0.1/":         "127.0.0.1",
		"https://①②⑦.0.0.1/":         "127.0.0.1",
		"https://127。0。0。1/":         "127.0.0.1",
		"https://１６９.２５４.１６９.２５４/":   "169.254.169.254",
		"https://⑩.1/":               "10.0.0.1",
		"https://[::127.0.0.1]/":     "::127.0.0.1",
		"https://[::ffff:0:7f00:1]/": "::ffff:0:7f00:1",
	}
	for _, c := range disguised {
		host := c.host
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		urls["https://"+host+"/"] = c.addr
		urls["https://hooks.attacker.example/"+c.addr] = c.addr
	}
	for u, addr := range urls {
		opts := Options{Resolver: stubResolver(netip.MustParseAddr(addr))}
		s := NewSender(opts)
		w := &watched{}
		d := guardedDialer(opts)
		d.Control = w.wrap(d.Control)
		s.transport.DialContext = d.DialContext
		res := s.Send(t.Context(), Attempt{URL: u, Body: []byte(`{}`), EventID: "evt_1", Secrets: testSecrets, Timeout: 5 * time.Second})
		for a, err := range w.seen {
			if !errors.Is(err, ErrRefusedAddress) {
				t.Errorf("%s: the guard let %s through", u, a)
			}
		}
		named := strings.Contains(u, "attacker")
		switch {
		case res.Outcome != Retry || res.StatusCode != 0:
			t.Errorf("%s: %+v, want Retry without a response", u, res)
		case res.Error == "refused: the host resolves to a non-public address" && len(w.seen) > 0:
		case res.Error == "DNS: no such host" && len(w.seen) == 0 && !named:
			// Go's resolver never looks up an all-numeric name.
		default:
			t.Errorf("%s: %+v (guard asked about %v), want a dial-time refusal", u, res, w.seen)
		}
	}
}
