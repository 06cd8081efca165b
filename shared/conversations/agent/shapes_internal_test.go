package agent

import (
	"regexp"
	"strings"
	"testing"
)

// The regular expressions that specify validDTMF and placeholderKey.
var (
	dtmfSpec        = regexp.MustCompile(`^[0-9*#A-D]{1,32}$`)
	placeholderSpec = regexp.MustCompile(`^state\.([A-Za-z0-9_.-]{1,256})$`)
)

var shapeSeeds = []string{
	"", "1", "1#", "*0#ABCD", "E", "a", "12345678901234567890123456789012", "123456789012345678901234567890123", "1 2",
	"state.x", "state.", "state", "state.a.b-c_D9", "state.é", "State.x", "state.x y", "xstate.x", "state.x\n",
	"state." + strings.Repeat("k", 256), "state." + strings.Repeat("k", 257),
}

func TestShapes(t *testing.T) {
	for _, s := range shapeSeeds {
		checkShapes(t, s)
	}
}

func FuzzShapes(f *testing.F) {
	for _, s := range shapeSeeds {
		f.Add(s)
	}
	f.Fuzz(checkShapes)
}

func checkShapes(t *testing.T, s string) {
	if got, want := validDTMF(s), dtmfSpec.MatchString(s); got != want {
		t.Errorf("validDTMF(%q) = %v, want %v", s, got, want)
	}
	k, ok := placeholderKey(s)
	m := placeholderSpec.FindStringSubmatch(s)
	if ok != (m != nil) || ok && k != m[1] {
		t.Errorf("placeholderKey(%q) = %q, %v; want %q", s, k, ok, m)
	}
}
