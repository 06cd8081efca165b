package httpapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// MaxBodyBytes is the limit of a JSON request body (DECISIONS.md).
const MaxBodyBytes = 1 << 20

// writeJSON encodes v as the response body. HTML escaping is off: these
// bodies are not HTML, and operators such as ">" should read as written.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Our own types always marshal; this is a programming error.
		http.Error(w, `{"message":"internal error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

var (
	errNotObject   = &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "request body must be a JSON object", Fields: []voiceops.FieldError{}}
	errTooLarge    = &voiceops.Error{Kind: voiceops.KindTooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", MaxBodyBytes)}
	errNotUTF8     = &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "request body is not valid UTF-8 (JSON text must be UTF-8, RFC 8259)", Fields: []voiceops.FieldError{}}
	errContentType = &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "Content-Type must be application/json", Fields: []voiceops.FieldError{}}
)

// object is a request body read as a JSON object whose fields are taken one
// by one with their type checked, so that every problem is reported with its
// field name (422) while unreadable bodies are refused whole (400).
type Object struct {
	fields map[string]json.RawMessage
	used   map[string]bool
	errs   []voiceops.FieldError
}

// readObject reads the body of r. An empty body is an empty object when
// optional, else 400.
func ReadObject(w http.ResponseWriter, r *http.Request, optional bool) (*Object, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errTooLarge
		}
		return nil, &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "could not read the request body", Fields: []voiceops.FieldError{}}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return &Object{fields: map[string]json.RawMessage{}, used: map[string]bool{}}, nil
		}
		return nil, errNotObject
	}
	if ct := r.Header.Get("Content-Type"); ct != "" || !optional {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, errContentType
		}
	}
	return ParseObject(body)
}

func ParseObject(body []byte) (*Object, error) {
	if !utf8.Valid(body) {
		// RFC 8259: JSON text is UTF-8. encoding/json would quietly turn
		// invalid bytes into U+FFFD and store what the client never sent.
		return nil, errNotUTF8
	}
	// Fast path: one Unmarshal. It refuses trailing data too, so only a
	// failure needs the Decoder to tell which 400 to answer.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err == nil && fields != nil {
		return &Object{fields: fields, used: make(map[string]bool, len(fields))}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	fields = nil
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return nil, errNotObject
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "request body has data after the JSON object", Fields: []voiceops.FieldError{}}
	}
	return &Object{fields: fields, used: map[string]bool{}}, nil
}

// plainString returns the value of a JSON string literal that holds no
// escape and no control character, valid UTF-8: most strings a client
// sends, read without a second pass of encoding/json.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	ascii := true
	for _, c := range inner {
		if c < 0x20 || c == '\\' || c == '"' {
			return "", false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	if !ascii && !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}

func (o *Object) Fail(field, msg string) {
	o.errs = append(o.errs, voiceops.FieldError{Field: field, Message: msg})
}

// take returns the raw value of a field and whether it was sent. A field sent
// as null is reported as an error unless nullable.
func (o *Object) Take(name string, required, nullable bool) (json.RawMessage, bool) {
	o.used[name] = true
	raw, ok := o.fields[name]
	if !ok {
		if required {
			o.Fail(name, "is required")
		}
		return nil, false
	}
	if string(raw) == "null" {
		if !nullable {
			o.Fail(name, "must not be null")
		}
		return raw, nullable
	}
	return raw, true
}

func IsNull(raw json.RawMessage) bool { return string(raw) == "null" }

// str reads a string field.
func (o *Object) Str(name string, required bool) (string, bool) {
	raw, ok := o.Take(name, required, false)
	if !ok {
		return "", false
	}
	if s, ok := plainString(raw); ok {
		return s, true
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		o.Fail(name, "must be a string")
		return "", false
	}
	return s, true
}

// nullableStr reads a string-or-null field; the outer pointer is nil when the
// field was not sent.
func (o *Object) NullableStr(name string) (**string, bool) {
	raw, ok := o.Take(name, false, true)
	if !ok {
		return nil, false
	}
	if IsNull(raw) {
		var p *string
		return &p, true
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		o.Fail(name, "must be a string or null")
		return nil, false
	}
	p := &s
	return &p, true
}

// integer reads a field that must be a JSON integer literal: 1.5, "5" and
// 1e3 are refused with msg, which names the field's rule.
func (o *Object) Integer(name string, required bool, msg string) (int64, bool) {
	raw, ok := o.Take(name, required, false)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	if !IsIntegerLiteral(raw) || err != nil {
		o.Fail(name, msg)
		return 0, false
	}
	return v, true
}

// IsIntegerLiteral reports whether raw is a JSON integer literal (no
// fraction, no exponent).
func IsIntegerLiteral(raw []byte) bool {
	if len(raw) > 0 && raw[0] == '-' {
		raw = raw[1:]
	}
	if len(raw) == 0 {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (o *Object) Boolean(name string, required bool) (bool, bool) {
	raw, ok := o.Take(name, required, false)
	if !ok {
		return false, false
	}
	switch string(raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	o.Fail(name, "must be a boolean")
	return false, false
}

func (o *Object) StringList(name string, required bool) ([]string, bool) {
	raw, ok := o.Take(name, required, false)
	if !ok {
		return nil, false
	}
	var s []string
	if raw[0] != '[' || json.Unmarshal(raw, &s) != nil {
		o.Fail(name, "must be an array of strings")
		return nil, false
	}
	return s, true
}

func (o *Object) StringMap(name string, required bool) (map[string]string, bool) {
	raw, ok := o.Take(name, required, false)
	if !ok {
		return nil, false
	}
	// Decoded value by value: a null would become "" in a map of strings.
	var raws map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &raws) != nil {
		o.Fail(name, "must be an object whose values are strings")
		return nil, false
	}
	m := make(map[string]string, len(raws))
	for k, v := range raws {
		s, ok := plainString(v)
		if !ok && (v[0] != '"' || json.Unmarshal(v, &s) != nil) {
			o.Fail(name, "must be an object whose values are strings")
			return nil, false
		}
		m[k] = s
	}
	return m, true
}

// done reports unknown fields and returns every collected error as one 422.
func (o *Object) Done() error {
	var unknown []string
	for name := range o.fields {
		if !o.used[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		o.Fail(name, "is not a known field")
	}
	if len(o.errs) > 0 {
		return voiceops.Invalid(o.errs...)
	}
	return nil
}

// JSONObject reads an object field of any JSON values; with nullable, null
// reads as nil.
func (o *Object) JSONObject(name string, nullable bool) (map[string]any, bool) {
	raw, ok := o.Take(name, false, nullable)
	if !ok || IsNull(raw) {
		return nil, ok
	}
	var m map[string]any
	if raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		o.Fail(name, "must be an object")
		return nil, false
	}
	return m, true
}

// Has reports whether the body holds the field, marking it read.
func (o *Object) Has(name string) bool {
	o.used[name] = true
	_, ok := o.fields[name]
	return ok
}

// FailAll adds field errors found by a domain check.
func (o *Object) FailAll(errs ...voiceops.FieldError) { o.errs = append(o.errs, errs...) }

// Errors returns the field errors found so far.
func (o *Object) Errors() []voiceops.FieldError { return slices.Clone(o.errs) }

// SortErrors orders the field errors by the position of their field in
// order (stable; fields not in order first).
func (o *Object) SortErrors(order []string) {
	slices.SortStableFunc(o.errs, func(a, b voiceops.FieldError) int {
		return cmp.Compare(slices.Index(order, a.Field), slices.Index(order, b.Field))
	})
}
