package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/voiceops"
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
		`{"n":null,"t":true,"f":-1.5e3,"o":{"p":{"q":[]}}}`, `[1]`, `{"a":1}x`, `{"a":"\\"}`, `{"a":{"b":"]"}}`,
		`{"a":{"b":1,"b":2}}`, `{"a":[{"x":1},{"x":1,"\u0078":2}]}`, `{"b":1,"a":1,"\u0062":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := ParseObject(body)
		var want map[string]json.RawMessage
		werr := json.Unmarshal(body, &want)
		if (err == nil) != (werr == nil && want != nil && utf8.Valid(body) && !repeatsKey(body)) {
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

// repeatsKey is the fuzz targets' oracle for repeated keys, written
// independently of the scanner: encoding/json's tokens, a set of names
// per open object.
func repeatsKey(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		names  map[string]bool
		object bool
		key    bool // the next string token is a name
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].key = true
				}
				continue
			}
			name := tok.(string)
			if top.names[name] {
				return true
			}
			top.names[name] = true
			top.key = false
			continue
		}
		switch d := tok.(type) {
		case json.Delim:
			switch d {
			case '{':
				stack = append(stack, &frame{names: map[string]bool{}, object: true, key: true})
				continue
			case '[':
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		}
		// A value ended: the object around it expects a name next.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}

func TestRepeatedKeys(t *testing.T) {
	for body, path := range map[string]string{
		`{"to_number":"+14155550001","to_number":"+14155550100"}`: "to_number",
		`{"a":1,"\u0061":2}`:                            "a",
		`{"m":{"x":"1","y":"2","x":"3"}}`:               "m.x",
		`{"l":[1,{"k":[{"q":1,"q":1}]}]}`:               "l[1].k[0].q",
		`{"a":{},"b":[],"c":{"d":{"e":null,"e":null}}}`: "c.d.e",
	} {
		_, err := ParseObject([]byte(body))
		var e *voiceops.Error
		if !errors.As(err, &e) || e.Kind != voiceops.KindBadRequest || len(e.Fields) != 1 || e.Fields[0].Field != path {
			t.Errorf("ParseObject(%s) = %#v, want a 400 naming %s", body, err, path)
		}
		if err := CheckJSON([]byte(body)); err == nil || err.Error() != e.Error() {
			t.Errorf("CheckJSON(%s) = %v, want %v", body, err, e)
		}
		if !repeatsKey([]byte(body)) {
			t.Errorf("the oracle misses %s", body)
		}
	}
	// Many keys (the map past 32), one repeated far apart.
	var many bytes.Buffer
	many.WriteString(`{"o":{`)
	for i := range 100 {
		fmt.Fprintf(&many, `"k%d":%d,`, i, i)
	}
	many.WriteString(`"k7":0}}`)
	if err := CheckJSON(many.Bytes()); err == nil {
		t.Error("a key repeated among 100 is accepted")
	}
	for _, body := range []string{`{"a":1,"A":2}`, `{"a":{"b":1},"b":{"a":1}}`, `{"x":[{"a":1},{"a":1}]}`, `{"a":"\"a\":1,\"a\""}`} {
		if _, err := ParseObject([]byte(body)); err != nil {
			t.Errorf("ParseObject(%s): %v", body, err)
		}
		if err := CheckJSON([]byte(body)); err != nil {
			t.Errorf("CheckJSON(%s): %v", body, err)
		}
	}
}

// FuzzCheckJSON: CheckJSON accepts exactly the valid UTF-8 JSON texts
// without a repeated key.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1,{"a":1,"a":2}]`, `"x"`, `{"a":{"b":[{"c":1}],"\u0062":2}}`, `{"a":1,"A":1}`, `[`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := CheckJSON(body)
		want := utf8.Valid(body) && json.Valid(body) && !repeatsKey(body)
		if (err == nil) != want {
			t.Fatalf("CheckJSON(%q) = %v, want accepted %v", body, err, want)
		}
	})
}

// TestReadObjectEmptyBody: only JSON whitespace makes an empty body; a body of
// \v or a Unicode space is not JSON and is refused even where a body is optional.
func TestReadObjectEmptyBody(t *testing.T) {
	for _, tt := range []struct {
		body string
		ok   bool
	}{{"", true}, {" \t\r\n", true}, {"\v", false}, {"\f", false}, {"\u00a0", false}} {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
		_, err := ReadObject(httptest.NewRecorder(), r, true)
		if (err == nil) != tt.ok {
			t.Errorf("ReadObject(%q) error %v, want ok=%v", tt.body, err, tt.ok)
		}
	}
}

// TestEnumAsStrAndParseEnum: Enum reads every value as Str and then
// voiceops.ParseEnum do, with the same field errors.
func TestEnumAsStrAndParseEnum(t *testing.T) {
	vals := []voiceops.Window{"1m", "5m", "15m"}
	for _, body := range []string{`{"w":"5m"}`, `{"w":"7m"}`, `{"w":"\u0035m"}`, `{"w":"\u0037m"}`, `{"w":5}`, `{"w":null}`, `{}`,
		`{"w":"5m\u0001"}`, `{"w":"é"}`, `{"w":["5m"]}`, `{"w":""}`, `{"w":"5m","w2":"x"}`} {
		for _, required := range []bool{true, false} {
			a, err := ParseObject([]byte(body))
			if err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			b, _ := ParseObject([]byte(body))
			v, known, ok := Enum(a, "w", required, vals)
			var wantV voiceops.Window
			var wantKnown bool
			s, wantOK := b.Str("w", required)
			if wantOK {
				wantV, wantKnown = voiceops.ParseEnum(s, vals)
			}
			if v != wantV || known != wantKnown || ok != wantOK {
				t.Errorf("%s (required %v): Enum %q %v %v, Str and ParseEnum %q %v %v", body, required, v, known, ok, wantV, wantKnown, wantOK)
			}
			if ea, eb := fmt.Sprint(a.Done()), fmt.Sprint(b.Done()); ea != eb {
				t.Errorf("%s (required %v): errors %s, want %s", body, required, ea, eb)
			}
		}
	}
}

// TestReadBodyAsReadAll: readBody reads what io.ReadAll through a
// MaxBytesReader reads, declared length or not, and refuses a body past
// the limit the same way.
func TestReadBodyAsReadAll(t *testing.T) {
	const max = 64
	for _, c := range []struct {
		body     string
		declared int64
	}{{"", 0}, {`{"a":1}`, 7}, {strings.Repeat("x", max), max}, {strings.Repeat("x", max+1), max + 1}, {strings.Repeat("x", 30), -1},
		{strings.Repeat("x", max+5), -1}, {strings.Repeat("x", 200), 10}, {"short", 50}} {
		req := func() *http.Request {
			r := httptest.NewRequest("POST", "/", io.NopCloser(strings.NewReader(c.body)))
			r.ContentLength = c.declared
			return r
		}
		want, wantErr := io.ReadAll(http.MaxBytesReader(httptest.NewRecorder(), req().Body, max))
		got, err := readBody(httptest.NewRecorder(), req(), max)
		var mbe *http.MaxBytesError
		if c.declared >= 0 && int64(len(c.body)) != c.declared {
			// A body other than its declared length: net/http never gives
			// one; past the limit it is still refused.
			if len(c.body) > max && !errors.As(err, &mbe) {
				t.Errorf("%d bytes declared %d: %v, want a MaxBytesError", len(c.body), c.declared, err)
			}
			continue
		}
		if string(got) != string(want) || errors.As(err, &mbe) != errors.As(wantErr, &mbe) || (err == nil) != (wantErr == nil) {
			t.Errorf("%d bytes declared %d: %q %v, want %q %v", len(c.body), c.declared, got, err, want, wantErr)
		}
	}
}

// WriteAppended answers what WriteJSON answers for the same JSON (the
// newline included), and a pooled buffer never leaks one answer into the
// next: a short body after a long one is itself alone.
func TestWriteAppendedAsWriteJSON(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, v := range []string{long, "short", ""} {
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		WriteJSON(want, http.StatusCreated, map[string]string{"v": v})
		WriteAppended(got, http.StatusCreated, func(b []byte) []byte {
			return append(strconv.AppendQuote(append(b, `{"v":`...), v), '}')
		})
		if got.Body.String() != want.Body.String() || got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("%.10q: got %d %s %q, want %d %s %q", v, got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
	}
}
