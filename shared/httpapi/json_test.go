package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
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

// FuzzParseObject: the scanner and encoding/json agree on every body:
// accepted or not, and field by field.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}], "d":"x\"y" } `, `{"a":1,"a":2}`, `{"a\u0062":1}`,
		`{"n":null,"t":true,"f":-1.5e3,"o":{"p":{"q":[]}}}`, `[1]`, `{"a":1}x`, `{"a":"\\"}`, `{"a":{"b":"]"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := ParseObject(body)
		var want map[string]json.RawMessage
		werr := json.Unmarshal(body, &want)
		if (err == nil) != (werr == nil && want != nil && utf8.Valid(body)) {
			t.Fatalf("ParseObject(%q): %v; encoding/json: %v", body, err, werr)
		}
		if err != nil {
			return
		}
		if len(o.names) < len(want) {
			t.Fatalf("%q: %d fields, encoding/json %d", body, len(o.names), len(want))
		}
		for name, w := range want {
			i := o.field(name)
			if i < 0 || !bytes.Equal(bytes.TrimSpace(o.values[i]), bytes.TrimSpace(w)) {
				t.Fatalf("%q: field %q = %q, encoding/json %q", body, name, o.values[max(i, 0)], w)
			}
		}
	})
}
