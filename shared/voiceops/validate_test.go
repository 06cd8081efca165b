package voiceops

import (
	"strings"
	"testing"
)

// TestCheckURLRefusesEverySpellingOfANonPublicAddress: a host that a
// resolver, inet_aton or IDNA turns into a non-public address is refused
// when the URL is saved, however it is spelled. The same check
// serves the create and the PATCH of an endpoint, and the URLs of an
// agent's configuration.
func TestCheckURLRefusesEverySpellingOfANonPublicAddress(t *testing.T) {
	const (
		nonPublic = "must not point to a loopback, private, link-local or otherwise non-public address"
		invalid   = "must be an absolute https:// URL with a valid host"
		spelling  = "must write an IP address as four decimal numbers (a.b.c.d) or as [IPv6]"
	)
	for _, c := range []struct {
		url, want string // want "" means valid
	}{
		// inet_aton: 1 to 4 parts, each decimal, octal or hex.
		{"https://0x7f.0.0.1/", nonPublic},
		{"https://0X7F.0.0.1/", nonPublic},
		{"https://0177.0.0.1/", nonPublic},
		{"https://127.1/", nonPublic},
		{"https://127.0.1/", nonPublic},
		{"https://127.000.000.001/", nonPublic},
		{"https://169.254.43518/", nonPublic},
		{"https://0xA9.0xFE.0xA9.0xFE/", nonPublic},
		{"https://0xa9fea9fe/", nonPublic},
		{"https://2130706433/", nonPublic},
		{"https://017700000001/", nonPublic},
		{"https://10.1/", nonPublic},
		{"https://0/", nonPublic},
		{"https://0x/", nonPublic},
		{"https://192.168.0x1.1:8443/hook", nonPublic},
		// A trailing dot.
		{"https://127.0.0.1./", nonPublic},
		{"https://169.254.169.254./latest/meta-data/", nonPublic},
		{"https://localhost./", nonPublic},
		// IDNA (UTS #46) maps these to ASCII before any lookup, as net/http does.
		{"https://１２７.0.0.1/", nonPublic},
		{"https://①②⑦.0.0.1/", nonPublic},
		{"https://127。0。0。1/", nonPublic},
		{"https://⑩.1/", nonPublic},
		{"https://１６９.２５４.１６９.２５４/", nonPublic},
		{"https://ｌｏｃａｌｈｏｓｔ/", nonPublic},
		{"https://metadata.google.ｉｎｔｅｒｎａｌ/", nonPublic},
		// Reserved IPv6: IPv4-compatible (::/96), SIIT (::ffff:0:a.b.c.d), the rest of ::/8.
		{"https://[::127.0.0.1]/", nonPublic},
		{"https://[::7f00:1]/", nonPublic},
		{"https://[::a9fe:a9fe]/", nonPublic},
		{"https://[::ffff:0:7f00:1]/", nonPublic},
		{"https://[::ffff:0:169.254.169.254]/", nonPublic},
		{"https://[::]/", nonPublic},
		{"https://[0:0:0:0:0:0:0:2]/", nonPublic},
		{"https://[ff::1]/", nonPublic},
		{"https://[::ffff:10.0.0.1]/", nonPublic},
		// A host ending in a number is an IPv4 address or nothing.
		{"https://1.2.3.256/", invalid},
		{"https://1.2.3.4.5/", invalid},
		{"https://08.0.0.1/", invalid},
		{"https://0x1g.0.0.1/", invalid},
		{"https://hooks.example.4294967296/", invalid},
		{"https://1..1/", invalid},
		{"https://-bücher.example/", invalid},
		// Public, but spelled so that no resolver agrees on what it means.
		{"https://0x5d.0xb8.0xd8.0x22/", spelling},
		{"https://1572395042/", spelling},
		{"https://93.184.216.34./", spelling},
		{"https://９３.184.216.34/", spelling},
		// Public controls.
		{"https://hooks.example.com/", ""},
		{"https://hooks.example.com./alerts", ""},
		{"https://HOOKS.Example.com/", ""},
		{"https://93.184.216.34/", ""},
		{"https://93.184.216.34:8443/x", ""},
		{"https://[2606:2800:220:1:248:1893:25c8:1946]/", ""},
		{"https://[::ffff:93.184.216.34]/", ""},
		{"https://1.example.com/", ""},
		{"https://0x7f.example.com/", ""},
		{"https://hooks_x.example.com/", ""},
		{"https://bücher.example/", ""},
		{"https://xn--bcher-kva.example/", ""},
	} {
		got := URLPolicy{}.CheckURL(c.url)
		if got != c.want {
			t.Errorf("CheckURL(%s) = %q, want %q", c.url, got, c.want)
		}
	}
}

// TestCheckStoredURL: a stored URL is checked again as CheckURL checks it,
// but for the IDNA mapping of a host that is not ASCII (judged when saved).
func TestCheckStoredURL(t *testing.T) {
	var p URLPolicy
	for _, u := range []string{"https://10.0.0.1/", "https://0x7f.1/", "http://hooks.example.com/", "https://localhost/", "https://u:p@hooks.example.com/"} {
		if msg := p.CheckStoredURL(u); msg == "" || msg != p.CheckURL(u) {
			t.Errorf("CheckStoredURL(%s) = %q, CheckURL %q: want the same refusal", u, msg, p.CheckURL(u))
		}
	}
	if msg := p.CheckStoredURL("https://bücher.example/hook"); msg != "" {
		t.Errorf("CheckStoredURL of an IDN = %q, want valid", msg)
	}
	if p.CheckURL("https://①②⑦.0.0.1/") == "" {
		t.Error("CheckURL accepted ①②⑦.0.0.1")
	}
}

// TestCheckURLDevPolicyStillRefusesDisguisedAddresses: allowing loopback
// receivers opens loopback only, in its plain spellings.
func TestCheckURLDevPolicyStillRefusesDisguisedAddresses(t *testing.T) {
	dev := URLPolicy{AllowLoopback: true}
	for _, u := range []string{"https://10.1/", "https://0xA9.0xFE.0xA9.0xFE/", "https://[::ffff:0:a9fe:a9fe]/", "https://①⓪.0.0.1/"} {
		if msg := dev.CheckURL(u); !strings.Contains(msg, "non-public") {
			t.Errorf("dev CheckURL(%s) = %q, want a refusal", u, msg)
		}
	}
	for _, u := range []string{"http://127.0.0.1:9000/hook", "https://localhost:9000/", "http://[::1]:9000/"} {
		if msg := dev.CheckURL(u); msg != "" {
			t.Errorf("dev CheckURL(%s) = %q, want valid", u, msg)
		}
	}
}

// TestCheckHeadersRefusesConnectionLevelNames: hop-by-hop and
// connection-level names are refused in any case, each naming its field;
// Authorization and ordinary names are not.
func TestCheckHeadersRefusesConnectionLevelNames(t *testing.T) {
	for _, name := range []string{"Upgrade", "TE", "te", "Expect", "Keep-Alive", "Trailer", "Proxy-Authorization",
		"proxy-authenticate", "Proxy-Connection", "HTTP2-Settings", "Connection", "Transfer-Encoding", "Host"} {
		errs := CheckHeaders(map[string]string{name: "x"})
		if len(errs) != 1 || errs[0].Field != "headers."+name || !strings.Contains(errs[0].Message, "reserved") {
			t.Errorf("%s: %v, want one error naming headers.%s as reserved", name, errs, name)
		}
	}
	for _, name := range []string{"Authorization", "X-Tenant", "Tea", "Expected", "Upgrade-Insecure"} {
		if errs := CheckHeaders(map[string]string{name: "x"}); len(errs) != 0 {
			t.Errorf("%s: %v, want accepted", name, errs)
		}
	}
}
