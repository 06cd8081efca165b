package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// maxFieldErrors bounds how many problems one error lists.
const maxFieldErrors = 20

// ConfigError lists what is wrong with a configuration (or an HTTP agent's
// answer), each problem with the JSON path of the value at fault, such as
// "variants[0].agent.scripted.rules[2].regex". It unwraps to a
// voiceops.Error of kind KindInvalid carrying the same fields.
type ConfigError struct {
	Fields []voiceops.FieldError
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("invalid agent configuration: ")
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		if f.Field != "" {
			b.WriteString(f.Field)
			b.WriteString(": ")
		}
		b.WriteString(f.Message)
	}
	return b.String()
}

// Unwrap makes errors.As(err, **voiceops.Error) find a KindInvalid error.
func (e *ConfigError) Unwrap() error { return voiceops.Invalid(e.Fields...) }

// fieldErrors collects problems with their paths.
type fieldErrors []voiceops.FieldError

func (e *fieldErrors) add(path, format string, args ...any) {
	if len(*e) < maxFieldErrors {
		*e = append(*e, voiceops.FieldError{Field: path, Message: fmt.Sprintf(format, args...)})
	}
}

// capped keeps the first maxFieldErrors problems.
func (e fieldErrors) capped() fieldErrors { return e[:min(len(e), maxFieldErrors)] }

func (e fieldErrors) err() error {
	if len(e) == 0 {
		return nil
	}
	return &ConfigError{Fields: e}
}

// index and key extend a JSON path.
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func key(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// decodeStrict decodes the JSON object in b into v (a pointer to a struct)
// and reports, with the path of each, what encoding/json lets through:
// unknown fields (and fields whose case differs), duplicate keys, a value
// of the wrong type, null where no null is possible, a fraction or an
// exponent in an integer field, and data after the object.
//
// decoded says whether v was filled in: it is, despite problems, when they
// are only unknown fields and duplicate keys (so that the caller can report
// its own checks of the values too, all at once).
func decodeStrict(b []byte, v any) (problems fieldErrors, decoded bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var soft fieldErrors // unknown fields and duplicate keys
	tree, err := parseValue(dec, "", 0, &soft)
	if err != nil {
		return fieldErrors{{Message: syntaxMessage(b, err)}}, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return fieldErrors{{Message: "unexpected data after the JSON object"}}, false
	}
	var hard fieldErrors // wrong types
	checkType(tree, reflect.TypeOf(v).Elem(), "", &soft, &hard)
	if len(hard) > 0 {
		return append(soft, hard...), false
	}
	if err := json.Unmarshal(b, v); err != nil {
		// checkType accepts only what Unmarshal can decode; keep a
		// message in case they ever disagree.
		return append(soft, voiceops.FieldError{Message: "cannot decode: " + err.Error()}), false
	}
	return soft, true
}

// maxDepth bounds the nesting of a document.
const maxDepth = 64

var errTooDeep = errors.New("nested too deeply")

// parseValue reads one JSON value into a tree of map[string]any, []any,
// json.Number, string, bool and nil, reporting duplicate keys.
func parseValue(dec *json.Decoder, path string, depth int, errs *fieldErrors) (any, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				val, err := parseValue(dec, key(path, k), depth+1, errs)
				if err != nil {
					return nil, err
				}
				if _, dup := obj[k]; dup {
					errs.add(key(path, k), "is given more than once")
				}
				obj[k] = val
			}
			_, err := dec.Token() // '}'
			return obj, err
		case '[':
			arr := []any{}
			for dec.More() {
				val, err := parseValue(dec, index(path, len(arr)), depth+1, errs)
				if err != nil {
					return nil, err
				}
				arr = append(arr, val)
			}
			_, err := dec.Token() // ']'
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return tok, nil
	}
}

// syntaxMessage describes a syntax error with its line and column.
func syntaxMessage(b []byte, err error) string {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		line, col := lineCol(b, se.Offset)
		return fmt.Sprintf("invalid JSON near line %d, column %d: %s", line, col, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "invalid JSON: unexpected end of input"
	case errors.Is(err, errTooDeep):
		return fmt.Sprintf("invalid JSON: nested more than %d levels deep", maxDepth)
	}
	return "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
}

func lineCol(b []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(b)))
	before := b[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, max(col, 1)
}

// checkType checks a parsed value against the Go type it will decode into,
// adding unknown fields to soft and wrong types to errs.
func checkType(v any, t reflect.Type, path string, soft, errs *fieldErrors) {
	if v == nil {
		switch t.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		default:
			errs.add(path, "must not be null; it must be %s", describeKind(t))
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		checkType(v, t.Elem(), path, soft, errs)
	case reflect.Interface:
		// Any JSON value.
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			errs.add(path, "must be an object")
			return
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(obj) {
			f, ok := fields[k]
			if !ok {
				soft.add(key(path, k), "unknown field")
				continue
			}
			checkType(obj[k], f.Type, key(path, k), soft, errs)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			errs.add(path, "must be an object")
			return
		}
		for _, k := range sortedKeys(obj) {
			checkType(obj[k], t.Elem(), key(path, k), soft, errs)
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			errs.add(path, "must be an array")
			return
		}
		for i, e := range arr {
			checkType(e, t.Elem(), index(path, i), soft, errs)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			errs.add(path, "must be a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			errs.add(path, "must be true or false")
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := v.(json.Number)
		if !ok {
			errs.add(path, "must be an integer")
			return
		}
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
			errs.add(path, "must be an integer (no fraction or exponent) within range")
		}
	case reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			errs.add(path, "must be a number")
		}
	default:
		errs.add(path, "cannot be decoded (%s)", t)
	}
}

func describeKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Struct:
		return "an object"
	}
	return "a value"
}

// jsonFields maps the JSON names of a struct's exported fields to them.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := make(map[string]reflect.StructField, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = f
	}
	return out
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
