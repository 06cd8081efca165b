// Package netguard decides which network addresses the service may call on a
// customer's behalf. Webhook URLs are checked when they are saved and again at
// dial time, so a name that later resolves to an internal address is refused.
package netguard

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// nonPublic lists every range that is not the public internet: loopback,
// private, link-local (including the cloud metadata address 169.254.169.254),
// CGNAT, multicast, documentation, benchmarking, reserved and the IPv6
// equivalents. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are unmapped
// before the check, so they are judged as the IPv4 address they carry.
//
// ::/8 is reserved as a whole (RFC 4291): besides :: and ::1 it holds the
// deprecated IPv4-compatible addresses (::a.b.c.d, ::/96) and the SIIT
// IPv4-translated ones (::ffff:0:a.b.c.d, ::ffff:0:0:0/96), which some
// stacks and translators turn back into the IPv4 address they carry; none
// of it is routable on the internet.
var nonPublic = mustPrefixes(
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
	"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
	"255.255.255.255/32",
	"::/8", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
	"2002::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// IsPublic reports whether addr is a routable public unicast address.
func IsPublic(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.Zone() != "" {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// IsLoopback reports whether addr is a loopback address (127/8, ::1, or
// their IPv4-mapped forms).
func IsLoopback(addr netip.Addr) bool { return addr.Unmap().IsLoopback() }

// IsInternalName reports whether a host name can only name a non-public
// machine: localhost and names under it, single-label names, and the suffixes
// reserved for private networks.
func IsInternalName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || !strings.Contains(h, ".") {
		return true
	}
	for _, s := range []string{".local", ".internal", ".localdomain", ".home.arpa", ".lan", ".intranet", ".corp", ".private"} {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
}

// IsLoopbackName reports whether host is localhost or a loopback literal.
func IsLoopbackName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return IsLoopback(a)
	}
	return false
}

// ErrInvalidHost is Host's refusal of a host that no client could connect
// to as written: a name IDNA refuses, or a numeric host (one whose last
// label is a number) that is not an IPv4 address.
var ErrInvalidHost = errors.New("netguard: invalid host")

// Host returns what a client connects to when a URL names host (as
// url.URL.Hostname returns it, brackets removed):
//
//   - name is host as it goes to the resolver: mapped with IDNA's lookup
//     profile (UTS #46) when it is not ASCII, as net/http does, so
//     fullwidth or circled digits and ideographic dots become ASCII;
//     lower-cased; without one trailing dot.
//   - addr, when valid, is the IP address host spells: an IPv6 literal, or
//     an IPv4 address as inet_aton(3) and the WHATWG URL parser read it:
//     1 to 4 parts, each decimal, octal (leading 0) or hexadecimal (0x), the
//     last part filling the remaining bytes (127.1 is 127.0.0.1,
//     169.254.43518 is 169.254.169.254, 0x7f000001 is 127.0.0.1).
//   - canonical reports whether host was written the usual way: an IPv6
//     literal, or dotted decimal a.b.c.d with no extra zeros or dot.
//
// A host whose last label is a number (decimal, or 0x hex) is an IPv4
// address or invalid, never a name: no top-level domain is numeric.
func Host(host string) (name string, addr netip.Addr, canonical bool, err error) {
	return hostOf(host, idna.Lookup.ToASCII)
}

// HostAsWritten is Host without the IDNA mapping: a host that is not ASCII
// is judged as written. It is for hosts that Host judged before (a stored
// URL), in programs that should not link x/net/idna's tables.
func HostAsWritten(host string) (name string, addr netip.Addr, canonical bool, err error) {
	return hostOf(host, nil)
}

// hostOf is Host with toASCII as the IDNA mapping (nil: none).
func hostOf(host string, toASCII func(string) (string, error)) (name string, addr netip.Addr, canonical bool, err error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return strings.ToLower(host), a, true, nil
	}
	name = host
	if toASCII != nil && !isASCII(name) {
		if name, err = toASCII(name); err != nil {
			return "", netip.Addr{}, false, ErrInvalidHost
		}
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if name == "" {
		return "", netip.Addr{}, false, ErrInvalidHost
	}
	if !endsInNumber(name) {
		return name, netip.Addr{}, false, nil
	}
	a, ok := parseIPv4(name)
	if !ok {
		return "", netip.Addr{}, false, ErrInvalidHost
	}
	return name, a, false, nil // netip.ParseAddr took every canonical form
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// endsInNumber reports whether the last label of name is a number: all
// decimal digits, or 0x followed by hex digits (WHATWG URL's "ends in a
// number").
func endsInNumber(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	if last == "" {
		return false
	}
	if h, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(h, "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// parseIPv4 reads name (lower-case) the way inet_aton does.
func parseIPv4(name string) (netip.Addr, bool) {
	parts := strings.Split(name, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	// Every part but the last is one byte; the last fills the rest.
	var v uint64
	for _, n := range nums[:len(nums)-1] {
		if n > 0xff {
			return netip.Addr{}, false
		}
		v = v<<8 | n
	}
	rest := uint(8 * (5 - len(nums)))
	last := nums[len(nums)-1]
	if last >= 1<<rest {
		return netip.Addr{}, false
	}
	v = v<<rest | last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Part reads one part: 0x hex (0x alone is 0), 0-led octal, or
// decimal; at most 32 bits.
func parseIPv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case strings.HasPrefix(p, "0x"):
		if p = p[2:]; p == "" {
			return 0, true
		}
		base = 16
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil
}
