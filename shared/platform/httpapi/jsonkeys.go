package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Every JSON request body, on both hosts, is read by ParseObject or checked
// by CheckJSON, and both refuse a body that repeats an object key at any
// depth (docs/api.md, "Rate limits and retries"): encoding/json keeps the last
// of two equal keys while other parsers keep the first, and a body two
// parsers read differently is how request smuggling starts. Keys are
// compared as decoded strings, so "a" and "\u0061" are the same key. Names
// that differ in case are different keys (routes match names exactly).

// errDuplicateKey is the 400 of a body whose object at path repeats a key.
func errDuplicateKey(path string) *voiceops.Error {
	return &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "request body repeats an object key",
		Fields: []voiceops.FieldError{{Field: path, Message: "is repeated (the keys of a JSON object must be unique)"}}}
}

var errNotJSON = &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "request body is not valid JSON", Fields: []voiceops.FieldError{}}

// CheckJSON checks a JSON request body that is not read by ParseObject (an
// external event's): valid UTF-8, one valid JSON value, no repeated key.
func CheckJSON(body []byte) error {
	if !utf8.Valid(body) {
		return errNotUTF8
	}
	if !json.Valid(body) {
		return errNotJSON
	}
	var k keyCheck
	k.value(body, skipSpace(body, 0))
	if k.dup != nil {
		return errDuplicateKey(k.path())
	}
	return nil
}

// keyCheck walks a valid JSON text and stops at the first object that
// repeats a key. dup holds the path to it, innermost segment first, as the
// walk unwinds.
type keyCheck struct {
	dup []string
}

// path writes dup outermost first: a.b[2].c.
func (k *keyCheck) path() string {
	var b []byte
	for i := len(k.dup) - 1; i >= 0; i-- {
		s := k.dup[i]
		if s == "" {
			s = `""` // the empty key
		}
		if len(b) > 0 && s[0] != '[' {
			b = append(b, '.')
		}
		b = append(b, s...)
	}
	return string(b)
}

// value returns the end of the valid JSON value at b[i].
func (k *keyCheck) value(b []byte, i int) int {
	switch b[i] {
	case '{':
		return k.object(b, i)
	case '[':
		i = skipSpace(b, i+1)
		if b[i] == ']' {
			return i + 1
		}
		for n := 0; ; n++ {
			i = k.value(b, i)
			if k.dup != nil {
				k.dup = append(k.dup, "["+strconv.Itoa(n)+"]")
				return i
			}
			i = skipSpace(b, i)
			if b[i] == ']' {
				return i + 1
			}
			i = skipSpace(b, i+1) // past ','
		}
	case '"':
		return endString(b, i)
	}
	for i < len(b) && !isDelim(b[i]) {
		i++
	}
	return i
}

// object returns the end of the object at b[i]. Its keys are compared
// in a slice while few (most objects have a handful), in a map beyond.
func (k *keyCheck) object(b []byte, i int) int {
	var small [8][]byte
	names := small[:0]
	var many map[string]struct{}
	i = skipSpace(b, i+1)
	if b[i] == '}' {
		return i + 1
	}
	for {
		end := endString(b, i)
		name := keyName(b[i:end])
		if seen(name, names, many) {
			k.dup = append(k.dup, string(name))
			return end
		}
		switch {
		case many != nil:
			many[string(name)] = struct{}{}
		case len(names) < 32:
			names = append(names, name)
		default:
			many = make(map[string]struct{}, 64)
			for _, n := range names {
				many[string(n)] = struct{}{}
			}
			many[string(name)] = struct{}{}
		}
		i = skipSpace(b, skipSpace(b, end)+1) // past ':'
		i = k.value(b, i)
		if k.dup != nil {
			k.dup = append(k.dup, string(name))
			return i
		}
		i = skipSpace(b, i)
		if b[i] == '}' {
			return i + 1
		}
		i = skipSpace(b, i+1) // past ','
	}
}

func seen(name []byte, names [][]byte, many map[string]struct{}) bool {
	if many != nil {
		_, ok := many[string(name)]
		return ok
	}
	for _, n := range names {
		if bytes.Equal(n, name) {
			return true
		}
	}
	return false
}

// keyName is the decoded name of a valid JSON string literal: its bytes
// between the quotes when it holds no escape (no copy), else decoded.
func keyName(lit []byte) []byte {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner
	}
	var s string
	_ = json.Unmarshal(lit, &s) // valid: the body passed json.Valid
	return []byte(s)
}

// endString returns the end of the valid JSON string literal at b[i].
func endString(b []byte, i int) int {
	i++
	for b[i] != '"' {
		if b[i] == '\\' {
			i++
		}
		i++
	}
	return i + 1
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
