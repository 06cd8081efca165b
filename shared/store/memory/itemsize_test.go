package memory

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestJSONBoundHoldsEncoding: for records of every type checkItem
// measures, filled at random (every field, strings of every escape, nil and
// not), jsonBound is never below the length of encoding/json's encoding,
// so that checkItem only skips the encoding of records it would pass.
func TestJSONBoundHoldsEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, typ := range []reflect.Type{reflect.TypeFor[voiceops.Conversation](), reflect.TypeFor[voiceops.Turn](),
		reflect.TypeFor[voiceops.Call](), reflect.TypeFor[voiceops.WebhookEndpoint]()} {
		for i := range 300 {
			v := reflect.New(typ).Elem()
			fill(rng, v, 0)
			b, err := json.Marshal(v.Interface())
			if err != nil {
				t.Fatalf("%v %d: %v", typ, i, err)
			}
			if bound := jsonBound(v); bound < len(b) {
				t.Fatalf("%v %d: bound %d under the encoding's %d bytes: %s", typ, i, bound, len(b), b)
			}
		}
	}
}

// TestCheckItemAsEncoding: checkItem answers as measuring the encoding
// does: a record over the limit is refused with its size, one encoding/json
// refuses (a NaN, a year past 9999) is an internal error, and one under
// the limit passes.
func TestCheckItemAsEncoding(t *testing.T) {
	big := voiceops.Turn{UserInput: string(make([]byte, voiceops.MaxItemBytes/6))} // \u0000 each: 6 bytes a byte
	if err := checkItem(big, 0); voiceops.KindOf(err) != voiceops.KindTooLarge {
		t.Errorf("a turn of %d escaped bytes: %v, want too large", len(big.UserInput), err)
	}
	if err := checkItem(voiceops.Turn{UserInput: "hello"}, voiceops.MaxItemBytes); voiceops.KindOf(err) != voiceops.KindTooLarge {
		t.Errorf("a turn whose extra fills the limit: %v, want too large", err)
	}
	if err := checkItem(voiceops.Turn{UserInput: "hello"}, 0); err != nil {
		t.Errorf("a small turn: %v", err)
	}
	// The records of a chat turn are bounded without encoding them.
	for _, v := range []any{voiceops.Turn{UserInput: "hello", Intents: []string{"balance"}}, voiceops.Conversation{ID: "conv", Metrics: []voiceops.CustomMetric{{Name: "n", Value: "v"}}}} {
		if n := jsonBound(reflect.ValueOf(v)); n >= voiceops.MaxItemBytes/10 {
			t.Errorf("%T: bound %d, want a small one", v, n)
		}
	}
	for name, v := range map[string]any{
		"NaN":        struct{ F float64 }{math.NaN()},
		"year 10000": voiceops.Turn{UserInputAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"a func":     struct{ F func() }{func() {}},
	} {
		var e *voiceops.Error
		if err := checkItem(v, 0); !errors.As(err, &e) || e.Kind != voiceops.KindInternal {
			t.Errorf("%s: %v, want encoding/json's error as internal", name, err)
		}
	}
}

var strs = []string{"", "plain", "é日本😀", "\x00\x01\n\"\\", "\xff\xfe", "<>&\u2028", "x"}

// fill sets every field of v at random.
func fill(rng *rand.Rand, v reflect.Value, depth int) {
	if !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		s := strs[rng.IntN(len(strs))]
		for range rng.IntN(4) {
			s += strs[rng.IntN(len(strs))]
		}
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Type() == reflect.TypeFor[time.Duration]() || rng.IntN(2) == 0 {
			v.SetInt(math.MinInt64 >> (64 - v.Type().Bits()))
		} else {
			v.SetInt(rng.Int64() >> (64 - v.Type().Bits()))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(math.MaxUint64 >> (64 - v.Type().Bits()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(-rng.Float64() * math.MaxFloat64)
	case reflect.Pointer:
		if rng.IntN(3) == 0 || depth > 3 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if rng.IntN(3) == 0 || depth > 3 {
			return
		}
		s := reflect.MakeSlice(v.Type(), rng.IntN(4), 4)
		for i := range s.Len() {
			fill(rng, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if rng.IntN(3) == 0 || depth > 3 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range rng.IntN(4) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(rng, k, depth+1)
			fill(rng, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface: // any: a string, a number, a list or a map
		switch rng.IntN(4) {
		case 0:
			v.Set(reflect.ValueOf(strs[rng.IntN(len(strs))]))
		case 1:
			v.Set(reflect.ValueOf(-rng.Float64() * 1e300))
		case 2:
			v.Set(reflect.ValueOf([]any{"\x01", 1.5e-300, true, nil}))
		default:
			v.Set(reflect.ValueOf(map[string]any{"\"k\"": []any{"v\n"}, "n": nil}))
		}
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(time.Date(rng.IntN(10000), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 23, 59, 59, 1+rng.IntN(999999999),
				time.FixedZone("", (rng.IntN(48)-24)*1800))))
			return
		}
		for i := range v.NumField() {
			fill(rng, v.Field(i), depth)
		}
	}
}
