package studioapi

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

// fromRecord returns the JSON record T of rec. Each field of T is rec's
// field of the same name, or of the name its `from` tag gives: so a new
// field of the JSON record is one field here, with its JSON name and
// where it comes from, and no assignment to forget. Enums become their
// strings and times the API's format (httpapi.Time). The field matching
// is worked out once per pair of types (recordPlan), not per request.
func fromRecord[T, R any](rec R) T {
	var out T
	ov, rv := reflect.ValueOf(&out).Elem(), reflect.ValueOf(&rec).Elem()
	for _, s := range planOf(ov.Type(), rv.Type()) {
		src, dst := rv.Field(s.src), ov.Field(s.dst)
		switch s.conv {
		case convSame:
			dst.Set(src)
		case convTime:
			dst.SetString(httpapi.Time(*src.Addr().Interface().(*time.Time)))
		case convTimePtr:
			dst.Set(reflect.ValueOf(httpapi.TimePtr(src.Interface().(*time.Time))))
		case convString:
			dst.SetString(src.String())
		}
	}
	return out
}

type conv int

const (
	convSame    conv = iota // the same type
	convTime                // time.Time → string
	convTimePtr             // *time.Time → *string
	convString              // a string kind (an enum) → string
)

type fieldStep struct {
	dst, src int
	conv     conv
}

var (
	timeType = reflect.TypeFor[time.Time]()
	plans    sync.Map // [2]reflect.Type → []fieldStep
)

// planOf matches the fields of out (the JSON record) with those of rec; a
// field without a match is a programming error, found by the first test
// that shows such a record.
func planOf(out, rec reflect.Type) []fieldStep {
	key := [2]reflect.Type{out, rec}
	if p, ok := plans.Load(key); ok {
		return p.([]fieldStep)
	}
	steps := make([]fieldStep, 0, out.NumField())
	for i := range out.NumField() {
		f := out.Field(i)
		name := f.Name
		if from := f.Tag.Get("from"); from != "" {
			name = from
		}
		sf, ok := rec.FieldByName(name)
		if !ok || len(sf.Index) != 1 {
			panic(fmt.Sprintf("studioapi: %s has no field %s for %s.%s", rec, name, out, f.Name))
		}
		st, dt := sf.Type, f.Type
		s := fieldStep{dst: i, src: sf.Index[0]}
		switch {
		case st == dt:
			s.conv = convSame
		case st == timeType && dt.Kind() == reflect.String:
			s.conv = convTime
		case st == reflect.PointerTo(timeType) && dt == reflect.TypeFor[*string]():
			s.conv = convTimePtr
		case st.Kind() == reflect.String && dt.Kind() == reflect.String:
			s.conv = convString
		default:
			panic(fmt.Sprintf("studioapi: %s.%s (%s) cannot show %s.%s (%s)", out, f.Name, dt, rec, name, st))
		}
		steps = append(steps, s)
	}
	plans.Store(key, steps)
	return steps
}
