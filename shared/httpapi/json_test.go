package httpapi

import (
	"encoding/json"
	"testing"
)

// FuzzPlainString: the fast path agrees with encoding/json whenever it
// answers, and answers for plain ASCII and valid UTF-8 text.
func FuzzPlainString(f *testing.F) {
	for _, s := range []string{`""`, `"plain"`, `"é€😀"`, `"a\"b"`, `"a\\b"`, `"\u00e9"`, "\"\x01\"", "\"\xff\xfe\"", `"`, `x`, `"a"b"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := plainString(raw)
		var want string
		err := json.Unmarshal(raw, &want)
		if ok && (err != nil || got != want) {
			t.Fatalf("plainString(%q) = %q; encoding/json %q, %v", raw, got, want, err)
		}
	})
}

func TestParseObjectErrors(t *testing.T) {
	for body, want := range map[string]string{
		`{"a":1} {"b":2}`: "request body has data after the JSON object",
		`{"a":1}x`:        "request body has data after the JSON object",
		`[1]`:             "request body must be a JSON object",
		`null`:            "request body must be a JSON object",
		`{"a":`:           "request body must be a JSON object",
	} {
		if _, err := ParseObject([]byte(body)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	o, err := ParseObject([]byte(` {"name":"x","n":3} `))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := o.Str("name", true); !ok || v != "x" || o.Done() == nil {
		t.Errorf("name %q %v; done %v (n is unknown)", v, ok, o.Done())
	}
}
