package voiceops

import (
	"strings"
	"testing"
)

// TestRandomID: the prefix, then n characters of the alphabet, for the
// short IDs built on the stack and the long ones that are not.
func TestRandomID(t *testing.T) {
	for _, c := range []struct {
		prefix string
		n      int
	}{{"req_", 20}, {"ar_", 22}, {"", 40}, {"", 41}, {"long_prefix_", 60}, {"x_", 0}} {
		seen := map[string]bool{}
		for range 50 {
			id := RandomID(c.prefix, c.n)
			rest, ok := strings.CutPrefix(id, c.prefix)
			if !ok || len(rest) != c.n || strings.Trim(rest, idAlphabet) != "" {
				t.Fatalf("RandomID(%q, %d) = %q", c.prefix, c.n, id)
			}
			seen[id] = true
		}
		if c.n >= 20 && len(seen) != 50 {
			t.Errorf("RandomID(%q, %d): %d distinct of 50", c.prefix, c.n, len(seen))
		}
	}
	if id := NewID(PrefixRule); !ValidRuleID(id) || len(id) != len(PrefixRule)+22 {
		t.Errorf("NewID(%q) = %q", PrefixRule, id)
	}
}
