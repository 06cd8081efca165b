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
	"sync"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// MaxBodyBytes is the limit of a JSON request body.
const MaxBodyBytes = 1 << 20

// writeJSON encodes v as the response body. HTML escaping is off: these
// bodies are not HTML, and operators such as ">" should read as written.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	buf := bytes.NewBuffer(make([]byte, 0, 1024)) // most answers fit: no regrowth
	enc := json.NewEncoder(buf)
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

// WriteBody answers a JSON body encoded by hand (as WriteJSON would
// encode it, the newline included).
func WriteBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// WriteAppended answers the JSON body that appendBody appends to the
// empty buffer it is given, as WriteJSON would encode it without the
// newline, which WriteAppended adds. The buffer comes from a pool (the
// writer copies the body): a body written by hand costs no allocation of
// its own and no reflection.
func WriteAppended(w http.ResponseWriter, status int, appendBody func(b []byte) []byte) {
	bp := bodyPool.Get().(*[]byte)
	*bp = append(appendBody((*bp)[:0]), '\n')
	WriteBody(w, status, *bp)
	if cap(*bp) <= maxPooledBody {
		bodyPool.Put(bp)
	}
}

var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledBody bounds the buffers the pool keeps (a long list is not
// kept).
const maxPooledBody = 64 << 10

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
	// The fields in body order (a repeated name is refused: jsonkeys.go);
	// a request body has a handful, so slices searched in order beat maps.
	names  [][]byte // slices of the body: no copy per field
	values []json.RawMessage
	used   []bool
	errs   []voiceops.FieldError
	// The slices' first backing arrays: a body of a few fields is read in
	// the one allocation of its Object.
	inlineNames  [8][]byte
	inlineValues [8]json.RawMessage
	inlineUsed   [8]bool
}

// field returns the index of the field name, or -1.
func (o *Object) field(name string) int {
	for i := len(o.names) - 1; i >= 0; i-- {
		if string(o.names[i]) == name {
			return i
		}
	}
	return -1
}

// markUsed marks every field called name as read.
func (o *Object) markUsed(name string) {
	for i, n := range o.names {
		if string(n) == name {
			o.used[i] = true
		}
	}
}

// readObject reads the body of r. An empty body is an empty object when
// optional, else 400.
func ReadObject(w http.ResponseWriter, r *http.Request, optional bool) (*Object, error) {
	body, err := readBody(w, r, MaxBodyBytes)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errTooLarge
		}
		return nil, &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "could not read the request body", Fields: []voiceops.FieldError{}}
	}
	if len(bytes.Trim(body, " \t\r\n")) == 0 { // JSON whitespace only, not \v or Unicode spaces
		if optional {
			return &Object{}, nil
		}
		return nil, errNotObject
	}
	// The usual type as sent needs no parse (ParseMediaType builds a map).
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && (ct != "" || !optional) {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, errContentType
		}
	}
	return ParseObject(body)
}

// readBody reads a request body of at most max bytes, as
// io.ReadAll(http.MaxBytesReader(w, r.Body, max)) does, into a buffer of
// the declared length: a body whose length is declared within max cannot
// pass it (net/http and the Lambda adapter stop a body at its length), so
// it needs no MaxBytesReader, and a small one no 512-byte buffer.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	n := r.ContentLength
	if n < 0 || n > max {
		return io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	}
	b := make([]byte, 0, n+1) // room for the read that finds the end
	for {
		m, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if int64(len(b)) > max { // longer than declared, past the limit
			return b, &http.MaxBytesError{Limit: max}
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // io.ReadAll's growth
		}
	}
}

func ParseObject(body []byte) (*Object, error) {
	if !utf8.Valid(body) {
		// RFC 8259: JSON text is UTF-8. encoding/json would quietly turn
		// invalid bytes into U+FFFD and store what the client never sent.
		return nil, errNotUTF8
	}
	// Fast path: a valid body is sliced into its fields without decoding
	// (json.Valid allocates nothing), checking on the way that no object
	// repeats a key (jsonkeys.go); only an invalid one needs the Decoder to
	// tell which 400 to answer.
	if json.Valid(body) {
		if o, err := scanObject(body); o != nil || err != nil {
			return o, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return nil, errNotObject
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "request body has data after the JSON object", Fields: []voiceops.FieldError{}}
	}
	o := &Object{}
	for name, v := range fields {
		o.names = append(o.names, []byte(name))
		o.values = append(o.values, v)
	}
	o.used = make([]bool, len(o.names))
	return o, nil
}

// scanObject slices a valid JSON text into the fields of its top-level
// object, and refuses a repeated key at any depth. It returns nil, nil when
// the text is not an object.
func scanObject(b []byte) (*Object, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, nil
	}
	o := &Object{}
	o.names, o.values = o.inlineNames[:0], o.inlineValues[:0]
	i = skipSpace(b, i+1)
	if b[i] == '}' {
		o.used = o.inlineUsed[:0]
		return o, nil
	}
	var k keyCheck
	var many map[string]struct{} // the names, once there are many
	for {
		// b[i] is the opening quote of a name.
		end := endString(b, i)
		name := keyName(b[i:end])
		if seen(name, o.names, many) {
			k.dup = append(k.dup, string(name))
			return nil, errDuplicateKey(k.path())
		}
		if len(o.names) >= 32 {
			if many == nil {
				many = make(map[string]struct{}, 64)
				for _, n := range o.names {
					many[string(n)] = struct{}{}
				}
			}
			many[string(name)] = struct{}{}
		}
		i = skipSpace(b, skipSpace(b, end)+1) // past ':'
		start := i
		i = k.value(b, i)
		if k.dup != nil {
			k.dup = append(k.dup, string(name))
			return nil, errDuplicateKey(k.path())
		}
		o.names = append(o.names, name)
		o.values = append(o.values, json.RawMessage(b[start:i]))
		i = skipSpace(b, i)
		if b[i] == '}' {
			break
		}
		i = skipSpace(b, i+1) // past ','
	}
	if len(o.names) <= len(o.inlineUsed) {
		o.used = o.inlineUsed[:len(o.names)]
	} else {
		o.used = make([]bool, len(o.names))
	}
	return o, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func (o *Object) Fail(field, msg string) {
	o.errs = append(o.errs, voiceops.FieldError{Field: field, Message: msg})
}

// take returns the raw value of a field and whether it was sent. A field sent
// as null is reported as an error unless nullable.
func (o *Object) Take(name string, required, nullable bool) (json.RawMessage, bool) {
	o.markUsed(name)
	idx := o.field(name)
	if idx < 0 {
		if required {
			o.Fail(name, "is required")
		}
		return nil, false
	}
	raw := o.values[idx]
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

// Enum reads a string field that must be one of vals, as Str and then
// voiceops.ParseEnum would, without copying the string out of the body.
// ok is false when the field was not sent or is not a string (reported);
// known is false for a string outside vals, which the caller reports
// (naming the set its own way).
func Enum[T ~string](o *Object, name string, required bool, vals []T) (v T, known, ok bool) {
	raw, ok := o.Take(name, required, false)
	if !ok {
		return "", false, false
	}
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		// A plain literal: vals are UTF-8 without control characters or
		// quotes, so equal bytes are the equal string.
		for _, x := range vals {
			if string(raw[1:len(raw)-1]) == string(x) {
				return x, true, true
			}
		}
		if _, plain := plainString(raw); plain {
			return "", false, true
		}
	}
	str, ok := o.Str(name, required)
	if !ok {
		return "", false, false
	}
	v, known = voiceops.ParseEnum(str, vals)
	return v, known, true
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
	s, ok := plainString(raw)
	if !ok && (raw[0] != '"' || json.Unmarshal(raw, &s) != nil) {
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
	for i, name := range o.names {
		if !o.used[i] && !slices.Contains(unknown, string(name)) {
			unknown = append(unknown, string(name))
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

// StrMax reads a string field of at most max UTF-8 bytes.
func (o *Object) StrMax(name string, required bool, max int) (string, bool) {
	s, ok := o.Str(name, required)
	if ok && len(s) > max {
		o.Fail(name, voiceops.SizeMessage(len(s), max))
		return "", false
	}
	return s, ok
}

// JSONObjectMax reads an object field whose JSON, as sent, is at most max
// bytes.
func (o *Object) JSONObjectMax(name string, nullable bool, max int) (map[string]any, bool) {
	if i := o.field(name); i >= 0 && len(o.values[i]) > max {
		o.markUsed(name)
		o.Fail(name, voiceops.SizeMessage(len(o.values[i]), max))
		return nil, false
	}
	return o.JSONObject(name, nullable)
}

// Has reports whether the body holds the field, marking it read.
func (o *Object) Has(name string) bool {
	o.markUsed(name)
	return o.field(name) >= 0
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
