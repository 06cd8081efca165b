//go:build stack

package main

import (
	"slices"
	"strings"
	"testing"
)

// No AccessDenied anywhere in the run: this file sorts last, so its test
// runs after every scenario (go test runs files and tests in order).
func TestZZNoAccessDenied(t *testing.T) {
	if d := st.Proxy.Denials(); len(d) > 0 {
		var lines []string
		for _, x := range d {
			lines = append(lines, x.String())
		}
		slices.Sort(lines)
		t.Fatalf("%d AWS calls refused by the template's policies:\n%s", len(d), strings.Join(slices.Compact(lines), "\n"))
	}
}
