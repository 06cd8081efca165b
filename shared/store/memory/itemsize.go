package memory

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// checkItem refuses a record that DynamoDB could not hold: the memory stores
// draw the line of shared/store/dynamo (voiceops.MaxItemBytes), so that the dev
// server and the contract suite behave like the deployed stores. The size
// is the record's JSON plus extra, the bytes kept beside it (encoded maps);
// JSON spends a little more than DynamoDB's own count on names and
// punctuation, so this line is never the looser one. Records whose every
// field is bounded by validation far below the limit (alert rules) are not
// measured: encoding them on every write would cost more than the rest of
// the write. A record whose JSON cannot reach the limit by jsonBound (a
// chat turn and its conversation, nearly always) is not encoded either:
// it was a tenth of the dev server's CPU under chat load.
func checkItem(v any, extra int) error {
	if jsonBound(reflect.ValueOf(v))+extra <= voiceops.MaxItemBytes {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return voiceops.Internal(err)
	}
	if n := len(b) + extra; n > voiceops.MaxItemBytes {
		return voiceops.ItemTooLarge("record", n)
	}
	return nil
}

// unbounded is jsonBound's answer for a value whose JSON it cannot bound.
const unbounded = math.MaxInt / 4

var (
	timeType      = reflect.TypeFor[time.Time]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
)

// jsonBound is at least the length of v's encoding/json encoding, without
// encoding it: every string at its worst escaping (6 bytes a byte), every
// number at its longest, every field name and punctuation counted. A value
// of a type with its own marshaling (but time.Time) is unbounded.
func jsonBound(v reflect.Value) int {
	if !v.IsValid() {
		return 4 // null
	}
	info := infoOf(v.Type())
	if info.size >= 0 {
		return info.size
	}
	if v.Type() == timeType {
		// encoding/json refuses a year outside [0, 9999]: let it say so.
		if v.CanInterface() {
			if y := v.Interface().(time.Time).Year(); y < 0 || y > 9999 {
				return unbounded
			}
		}
		return 40 // a quoted RFC 3339 time with nanoseconds and an offset: at most 37
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return unbounded // refused by encoding/json: let it say so
		}
		return 34
	case reflect.String:
		return 2 + 6*v.Len()
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 4
		}
		return jsonBound(v.Elem())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return 6 + 4*(v.Len()/3+1) // base64
		}
		n := 4
		for i := range v.Len() {
			n += jsonBound(v.Index(i)) + 1
			if n >= unbounded {
				return unbounded
			}
		}
		return n
	case reflect.Map:
		n := 4
		for it := v.MapRange(); it.Next(); {
			n += jsonBound(it.Key()) + jsonBound(it.Value()) + 4 // a key may be quoted over its own quotes
			if n >= unbounded {
				return unbounded
			}
		}
		return n
	case reflect.Struct:
		n := info.fixed
		for _, i := range info.vars {
			n += jsonBound(v.Field(i))
			if n >= unbounded {
				return unbounded
			}
		}
		return n
	}
	return unbounded
}

// typeInfo is what jsonBound knows of a type without a value.
type typeInfo struct {
	// size is the bound of every value of the type, or -1 when it depends
	// on the value (strings, slices, maps, pointers, structs holding them).
	size int
	// fixed and vars are a struct's: the braces, every field's name and
	// punctuation and the fixed-size fields' values; the fields to bound
	// value by value.
	fixed int
	vars  []int
}

var typeInfos sync.Map // reflect.Type → *typeInfo

func infoOf(t reflect.Type) *typeInfo {
	if i, ok := typeInfos.Load(t); ok {
		return i.(*typeInfo)
	}
	info := &typeInfo{size: -1}
	switch {
	case t == timeType || t.Kind() == reflect.Pointer: // bounded value by value (jsonBound), a pointer by its element
	case t.Implements(marshalerType) || t.Implements(textType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textType):
		info.size = unbounded
	default:
		switch t.Kind() {
		case reflect.Bool:
			info.size = 5
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			info.size = 22 // quoted with ,string at most
		case reflect.Float32, reflect.Float64, reflect.String, reflect.Interface, reflect.Slice, reflect.Array, reflect.Map:
		case reflect.Struct:
			info.fixed = 2
			for i := range t.NumField() {
				f := t.Field(i)
				name := max(len(f.Name), len(f.Tag.Get("json")))
				info.fixed += 6*name + 4
				if fi := infoOf(f.Type); fi.size >= 0 {
					info.fixed = min(info.fixed+fi.size, unbounded)
				} else {
					info.vars = append(info.vars, i)
				}
			}
		default:
			info.size = unbounded // channels, functions: encoding/json refuses them
		}
	}
	actual, _ := typeInfos.LoadOrStore(t, info)
	return actual.(*typeInfo)
}
