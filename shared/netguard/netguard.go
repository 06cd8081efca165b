// Package netguard decides which network addresses the service may call on a
// customer's behalf. Webhook URLs are checked when they are saved and again at
// dial time, so a name that later resolves to an internal address is refused.
package netguard

import (
	"net/netip"
	"strings"
)

// nonPublic lists every range that is not the public internet: loopback,
// private, link-local (including the cloud metadata address 169.254.169.254),
// CGNAT, multicast, documentation, benchmarking, reserved and the IPv6
// equivalents. IPv4-mapped IPv6 addresses are unmapped before the check.
var nonPublic = mustPrefixes(
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
	"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
	"255.255.255.255/32",
	"::/128", "::1/128", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
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
