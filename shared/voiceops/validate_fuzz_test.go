package voiceops

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/voiceops/netguard"
)

// FuzzCheckURL: a webhook URL that CheckURL accepts is one the dispatcher
// can send to and that names no non-public address, however it is spelled.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example.com/a", "https://127.1/x", "https://0x7f.0.0.1/", "https://[::1]/", "http://localhost:8080/",
		"https://user:pw@example.com/", "https://example.com:0/", "https://①②⑦.0.0.1/", "https://example.com./#f", "https://exa mple.com/",
		"https://[::ffff:10.0.0.1]/", "https://169.254.169.254/latest", "HTTPS://EXAMPLE.COM/",
	} {
		f.Add(s, false)
	}
	f.Add("http://127.0.0.1:9000/hook", true)
	f.Fuzz(func(t *testing.T, raw string, loopback bool) {
		if msg := (URLPolicy{AllowLoopback: loopback}).CheckURL(raw); msg != "" {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(raw, "#") {
			t.Fatalf("accepted %q: %v %+v", raw, err, u)
		}
		if utf8.RuneCountInString(raw) > MaxURLLength || strings.ContainsAny(raw, " \t\r\n\x00") {
			t.Fatalf("accepted %q: too long or with spaces", raw)
		}
		if _, err := http.NewRequest(http.MethodPost, raw, nil); err != nil {
			t.Fatalf("accepted %q, which net/http cannot send to: %v", raw, err)
		}
		host := u.Hostname()
		if loopback && netguard.IsLoopbackName(host) {
			return
		}
		if !strings.HasPrefix(raw, "https://") {
			t.Fatalf("accepted %q without https://", raw)
		}
		name, addr, _, err := netguard.Host(host)
		if err != nil || (addr.IsValid() && !netguard.IsPublic(addr)) || (!addr.IsValid() && netguard.IsInternalName(name)) {
			t.Fatalf("accepted %q naming a non-public host %q (%v %v)", raw, name, addr, err)
		}
	})
}

// FuzzCheckHeaders: a custom delivery header that CheckHeaders accepts can
// be sent as it is, and clashes with none the dispatcher sets.
func FuzzCheckHeaders(f *testing.F) {
	for _, s := range [][2]string{{"Authorization", "Bearer x"}, {"X-A", "a\r\nInjected: 1"}, {"Host", "evil"}, {"webhook-id", "x"}, {"bad name", "v"}, {"X-N", "\x00"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		if errs := CheckHeaders(map[string]string{name: value}); len(errs) > 0 {
			return
		}
		if !isToken(name) || ReservedHeader(name) || strings.ContainsAny(value, "\r\n\x00") || utf8.RuneCountInString(value) > MaxHeaderValue {
			t.Fatalf("accepted header %q: %q", name, value)
		}
		req, _ := http.NewRequest(http.MethodPost, "https://example.com/", nil)
		req.Header.Set(name, value)
		var b strings.Builder
		if err := req.Write(&b); err != nil {
			t.Fatalf("accepted header %q: %q, which net/http cannot write: %v", name, value, err)
		}
		if strings.Count(b.String(), "\r\n") != strings.Count(b.String(), "\n") {
			t.Fatalf("header %q: %q splits the request", name, value)
		}
	})
}
