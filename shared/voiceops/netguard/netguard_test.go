package netguard

import (
	"net/netip"
	"testing"
)

func TestIsPublic(t *testing.T) {
	for addr, public := range map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "2606:4700:4700::1111": true,
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "100.64.0.1": false, "0.0.0.0": false, "224.0.0.1": false,
		"::1": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "fd00::1": false,
		"fe80::1": false, "fd00:ec2::254": false, "255.255.255.255": false, "198.18.0.1": false,
	} {
		if got := IsPublic(netip.MustParseAddr(addr)); got != public {
			t.Errorf("IsPublic(%s) = %v", addr, got)
		}
	}
}

func TestNames(t *testing.T) {
	for host, internal := range map[string]bool{
		"localhost": true, "api.localhost": true, "intranet": true, "db.internal": true, "printer.local": true,
		"hooks.example.com": false, "example.com.": false,
	} {
		if got := IsInternalName(host); got != internal {
			t.Errorf("IsInternalName(%s) = %v", host, got)
		}
	}
	for host, lb := range map[string]bool{"localhost": true, "127.0.0.2": true, "[::1]": true, "::ffff:127.0.0.1": true, "example.com": false, "10.0.0.1": false} {
		if got := IsLoopbackName(host); got != lb {
			t.Errorf("IsLoopbackName(%s) = %v", host, got)
		}
	}
}

// TestReservedIPv6IsNotPublic: the whole of ::/8 is reserved:
// IPv4-compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d and the rest. Mapped
// ::ffff:a.b.c.d is judged as the IPv4 address it carries.
func TestReservedIPv6IsNotPublic(t *testing.T) {
	for addr, public := range map[string]bool{
		"::127.0.0.1": false, "::7f00:1": false, "::169.254.169.254": false, "::8.8.8.8": false,
		"::ffff:0:7f00:1": false, "::ffff:0:127.0.0.1": false, "::ffff:0:a9fe:a9fe": false, "::ffff:0:8.8.8.8": false,
		"::": false, "::2": false, "::1:0:0:1": false, "ff::1": false, "1::": false, "2001:4860:4860::8888": true,
		"::ffff:8.8.8.8": true, "::ffff:169.254.169.254": false, "2606:4700:4700::1111": true,
	} {
		if got := IsPublic(netip.MustParseAddr(addr)); got != public {
			t.Errorf("IsPublic(%s) = %v, want %v", addr, got, public)
		}
	}
}

func TestHost(t *testing.T) {
	for _, c := range []struct {
		host, name, addr   string // addr "" when host is a name
		canonical, invalid bool
	}{
		{host: "127.0.0.1", name: "127.0.0.1", addr: "127.0.0.1", canonical: true},
		{host: "::127.0.0.1", name: "::127.0.0.1", addr: "::7f00:1", canonical: true},
		{host: "0x7f.0.0.1", name: "0x7f.0.0.1", addr: "127.0.0.1"},
		{host: "0X7F.0.0.1", name: "0x7f.0.0.1", addr: "127.0.0.1"},
		{host: "0177.0.0.1", name: "0177.0.0.1", addr: "127.0.0.1"},
		{host: "127.1", name: "127.1", addr: "127.0.0.1"},
		{host: "127.0.1", name: "127.0.1", addr: "127.0.0.1"},
		{host: "127.000.000.001", name: "127.000.000.001", addr: "127.0.0.1"},
		{host: "169.254.43518", name: "169.254.43518", addr: "169.254.169.254"},
		{host: "0xA9.0xFE.0xA9.0xFE", name: "0xa9.0xfe.0xa9.0xfe", addr: "169.254.169.254"},
		{host: "2852039166", name: "2852039166", addr: "169.254.169.254"},
		{host: "0xa9fea9fe", name: "0xa9fea9fe", addr: "169.254.169.254"},
		{host: "10.1", name: "10.1", addr: "10.0.0.1"},
		{host: "0x", name: "0x", addr: "0.0.0.0"},
		{host: "4294967295", name: "4294967295", addr: "255.255.255.255"},
		{host: "1.16777215", name: "1.16777215", addr: "1.255.255.255"},
		{host: "127.0.0.1.", name: "127.0.0.1", addr: "127.0.0.1"},
		{host: "１２７.0.0.1", name: "127.0.0.1", addr: "127.0.0.1"},
		{host: "①②⑦.0.0.1", name: "127.0.0.1", addr: "127.0.0.1"},
		{host: "127。0。0。1", name: "127.0.0.1", addr: "127.0.0.1"},
		{host: "Hooks.Example.COM.", name: "hooks.example.com"},
		{host: "bücher.example", name: "xn--bcher-kva.example"},
		{host: "ｌｏｃａｌｈｏｓｔ", name: "localhost"},
		{host: "1.example", name: "1.example"},
		{host: "example.0x7g", name: "example.0x7g"},
		{host: "4294967296", invalid: true},
		{host: "1.16777216", invalid: true},
		{host: "256.0.0.1", invalid: true},
		{host: "1.2.3.4.5", invalid: true},
		{host: "09.0.0.1", invalid: true},
		{host: "0x1g.1", invalid: true},
		{host: "1..1", invalid: true},
		{host: "example.1", invalid: true},
		{host: ".", invalid: true},
		{host: "-bücher.example", invalid: true},
	} {
		name, addr, canonical, err := Host(c.host)
		if c.invalid {
			if err == nil {
				t.Errorf("Host(%q) = %q, %v: want ErrInvalidHost", c.host, name, addr)
			}
			continue
		}
		want := netip.Addr{}
		if c.addr != "" {
			want = netip.MustParseAddr(c.addr)
		}
		if err != nil || name != c.name || addr != want || canonical != c.canonical {
			t.Errorf("Host(%q) = %q, %v, %v, %v; want %q, %v, %v", c.host, name, addr, canonical, err, c.name, want, c.canonical)
		}
	}
}

// TestHostAsWritten: without the IDNA mapping, ASCII hosts are judged as
// Host judges them, and a host that is not ASCII is left as written.
func TestHostAsWritten(t *testing.T) {
	for _, h := range []string{"127.0.0.1", "0x7f.0.0.1", "169.254.43518", "Hooks.Example.COM.", "example.1"} {
		n1, a1, c1, e1 := Host(h)
		n2, a2, c2, e2 := HostAsWritten(h)
		if n1 != n2 || a1 != a2 || c1 != c2 || (e1 == nil) != (e2 == nil) {
			t.Errorf("HostAsWritten(%q) = %q, %v, %v, %v; Host gives %q, %v, %v, %v", h, n2, a2, c2, e2, n1, a1, c1, e1)
		}
	}
	if name, addr, _, err := HostAsWritten("bücher.example"); err != nil || name != "bücher.example" || addr.IsValid() {
		t.Errorf("HostAsWritten(bücher.example) = %q, %v, %v; want it as written", name, addr, err)
	}
}
