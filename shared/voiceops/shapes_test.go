package voiceops

import (
	"regexp"
	"testing"
)

// shapes are the ID and number checks with the regular expressions that
// specify them: the plain code must accept exactly what they match.
var shapes = []struct {
	name  string
	valid func(string) bool
	spec  *regexp.Regexp
}{
	{"ValidRuleID", ValidRuleID, regexp.MustCompile(`^ar_[A-Za-z0-9]+$`)},
	{"ValidEndpointID", ValidEndpointID, regexp.MustCompile(`^whe_[A-Za-z0-9]+$`)},
	{"ValidDeliveryID", ValidDeliveryID, regexp.MustCompile(`^dlv_[A-Za-z0-9]+$`)},
	{"ValidTenantID", ValidTenantID, regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)},
	{"ValidCallSID", ValidCallSID, regexp.MustCompile(`^CA[0-9a-f]{32}$`)},
	{"ValidE164", ValidE164, regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)},
	{"ValidConversationID (shape)", func(s string) bool {
		_, _, ok := ParseConversationID(s)
		return ok
	}, regexp.MustCompile(`^conv_[0-9]{13}[0-3][A-Za-z0-9]{20}$`)},
}

var shapeSeeds = []string{
	"", "ar_", "ar_x", "ar_Ab9", "ar_a-b", "ar_é", "whe_1", "whe_", "dlv_Z", "dlv_a\n", "ar_a\n",
	"acct_acme", "proj-1", "a", "_", "-", "a b", "acct/x",
	"0123456789012345678901234567890123456789012345678901234567890123",
	"01234567890123456789012345678901234567890123456789012345678901234",
	"CA0123456789abcdef0123456789abcdef", "CA0123456789ABCDEF0123456789abcdef", "CA0123456789abcdef0123456789abcde",
	"ca0123456789abcdef0123456789abcdef", "CA0123456789abcdef0123456789abcdefa",
	"+1", "+12", "+01", "+447911123456", "+123456789012345", "+1234567890123456", "+44 7911", "447911123456", "+",
	"＋447911123456", "+4479111234567890",
	"conv_17419444135892Xy3kQ9Zr1bT7LmPa0cWd", "conv_17419444135894Xy3kQ9Zr1bT7LmPa0cWd", "conv_1741944413589Xy3kQ9Zr1bT7LmPa0cWd",
	"conv_17419444135892Xy3kQ9Zr1bT7LmPa0cW_", "conv_17419444135892Xy3kQ9Zr1bT7LmPa0cWdX", "CONV_17419444135892Xy3kQ9Zr1bT7LmPa0cWd",
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
	for _, sh := range shapes {
		if got, want := sh.valid(s), sh.spec.MatchString(s); got != want {
			t.Errorf("%s(%q) = %v, want %v (%s)", sh.name, s, got, want, sh.spec)
		}
	}
}
