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
