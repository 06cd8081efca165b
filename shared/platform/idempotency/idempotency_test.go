package idempotency

import (
	"testing"
)

func TestValidKey(t *testing.T) {
	for k, want := range map[string]bool{
		"": false, "a": true, "6f1c2a9e-4b7d-4c21-9e55-0c8d7f3b2a10": true, "order#42/retry~1": true,
		"has space": false, "tab\t": false, "é": false, "\x7f": false,
	} {
		if got := ValidKey(k); got != want {
			t.Errorf("ValidKey(%q) = %v, want %v", k, got, want)
		}
	}
	long := make([]byte, MaxKeyLength+1)
	for i := range long {
		long[i] = 'k'
	}
	if !ValidKey(string(long[:MaxKeyLength])) || ValidKey(string(long)) {
		t.Error("the length limit is not 255")
	}
}

// FuzzValidKey holds ValidKey to its definition: 1 to 255 bytes, each a
// visible ASCII character.
func FuzzValidKey(f *testing.F) {
	for _, s := range []string{"", "a", "uuid-1234", "has space", "é", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, k string) {
		want := len(k) >= 1 && len(k) <= MaxKeyLength
		for _, c := range []byte(k) {
			if c < '!' || c > '~' {
				want = false
			}
		}
		if got := ValidKey(k); got != want {
			t.Errorf("ValidKey(%q) = %v, want %v", k, got, want)
		}
	})
}

// FuzzFingerprint: two different requests never share a fingerprint, however
// their bytes are split between method, path and body.
func FuzzFingerprint(f *testing.F) {
	f.Add("POST", "/v1/alert-rules", []byte(`{"a":1}`), "POST", "/v1/alert-rules", []byte(`{"a":2}`))
	f.Add("A", "B\x00C", []byte(""), "A", "B", []byte("C\x00"))
	f.Add("POST", "/a", []byte("b"), "POST", "/ab", []byte(""))
	f.Fuzz(func(t *testing.T, m1, u1 string, b1 []byte, m2, u2 string, b2 []byte) {
		same := m1 == m2 && u1 == u2 && string(b1) == string(b2)
		if eq := Fingerprint(m1, u1, b1) == Fingerprint(m2, u2, b2); eq != same {
			t.Errorf("Fingerprint(%q,%q,%q) == Fingerprint(%q,%q,%q) is %v", m1, u1, b1, m2, u2, b2, eq)
		}
	})
}
