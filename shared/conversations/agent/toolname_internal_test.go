package agent

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidToolNameIsBedrocksPattern: the hand-written check accepts what
// Bedrock's pattern accepts, and nothing else.
func TestValidToolNameIsBedrocksPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`)
	for _, name := range []string{"", "a", "Z", "lookup_order", "a-b_C9", "9bad", "_a", "-a", "a b", "a.b", "é", "aé",
		strings.Repeat("a", 64), strings.Repeat("a", 65), "a" + strings.Repeat("9", 63), "a\n"} {
		if got, want := validToolName(name), pattern.MatchString(name); got != want {
			t.Errorf("validToolName(%q) = %v, the pattern says %v", name, got, want)
		}
	}
}
