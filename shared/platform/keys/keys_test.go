package keys

import (
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestNewParsesBack(t *testing.T) {
	for _, kind := range append(voiceops.KeyKinds, KindInternal) {
		k := New(kind, voiceops.RegionUK)
		p, err := Parse(k)
		if err != nil {
			t.Fatalf("Parse(%q): %v", k, err)
		}
		if p.Kind != kind || p.Region != voiceops.RegionUK {
			t.Errorf("Parse(%q) = %+v", k, p)
		}
		if !strings.HasPrefix(k, "vo_"+string(kind)+"_uk_") {
			t.Errorf("key %q lacks its readable prefix", k)
		}
	}
}

func TestParseRefusesMistypedKeys(t *testing.T) {
	k := New(voiceops.KeyAPI, voiceops.RegionUS)
	// Change one character of the random part: the checksum must catch it.
	b := []byte(k)
	i := len("vo_api_us_") + 5
	if b[i] == 'a' {
		b[i] = 'b'
	} else {
		b[i] = 'a'
	}
	cases := map[string]string{
		"typo":      string(b),
		"truncated": k[:len(k)-1],
		"empty":     "",
		"no brand":  strings.Replace(k, "vo_", "xx_", 1),
		"region":    strings.Replace(k, "_us_", "_eu_", 1),
	}
	for name, in := range cases {
		if _, err := Parse(in); err == nil {
			t.Errorf("%s: Parse(%q) accepted", name, in)
		}
	}
}

func TestDigestAndPrefix(t *testing.T) {
	k := New(voiceops.KeyAPI, voiceops.RegionUS)
	if d := Digest(k); len(d) != 64 || d == Digest(k+"x") {
		t.Errorf("Digest = %q", d)
	}
	p := Prefix(k)
	if !strings.HasPrefix(k, p) || len(p) != len("vo_api_us_")+PrefixShown {
		t.Errorf("Prefix(%q) = %q", k, p)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(New(voiceops.KeyAPI, voiceops.RegionUS))
	f.Add("vo_api_us_")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err == nil && (p.Kind == "" || p.Region == "") {
			t.Errorf("accepted %q with empty parts", s)
		}
	})
}
