package jsontext

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// FuzzAppendJSONString checks the string writer against encoding/json.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" backslash \\", "\x00\x1f\b\f\n\r\t", "<>&", "\u2028\u2029", "\xff\xfe", "é€😀", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}

// TestAppendFloatThousandths checks the whole-thousandths numbers (counts,
// milliseconds to the microsecond) against encoding/json across their
// range: small ones all, then a walk up to and past the bound.
func TestAppendFloatThousandths(t *testing.T) {
	check := func(v float64) {
		t.Helper()
		want, _ := json.Marshal(v)
		if got := AppendFloat(nil, v); !bytes.Equal(got, want) {
			t.Fatalf("AppendFloat(%v) = %s, encoding/json %s", v, got, want)
		}
	}
	for m := range 200_000 {
		check(float64(m) / 1000)
		check(-float64(m) / 1000)
	}
	for m := uint64(200_000); m < 2e15; m = m*1013/1000 + 7 {
		for d := range uint64(3) {
			check(float64(m+d) / 1000)
		}
	}
	for _, v := range []float64{0.1 + 0.2, 1.0005, 2.675, 1e12 - 0.0005, math.Nextafter(1e12, 0), math.Nextafter(0.001, 1)} {
		check(v)
	}
}

// FuzzAppendFloat checks the number writer against encoding/json; a value
// JSON cannot hold is null.
func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 0.001, 0.0015, 12.345, -7.25, 999999999999.999, 1e12, 1e12 - 0.001, 4503599627370.496, 1, -1.5, 1e-7, 1e-6, 1e20, 1e21, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(-1)} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		want, err := json.Marshal(v)
		if err != nil {
			want = []byte("null")
		}
		if got := AppendFloat(nil, v); !bytes.Equal(got, want) {
			t.Fatalf("AppendFloat(%v) = %s, encoding/json %s", v, got, want)
		}
	})
}
