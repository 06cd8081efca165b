package studioapi

import (
	"fmt"
	"reflect"
	"time"

	"github.com/voiceops/opsapi/shared/httpapi"
)

// fromRecord returns the JSON record T of rec. Each field of T is rec's
// field of the same name, or of the name its `from` tag gives: so a new
// field of the JSON record is one field here, with its JSON name and
// where it comes from, and no assignment to forget. Enums become their
// strings and times the API's format (httpapi.Time).
func fromRecord[T, R any](rec R) T {
	var out T
	ov, rv := reflect.ValueOf(&out).Elem(), reflect.ValueOf(rec)
	for i := range ov.NumField() {
		f := ov.Type().Field(i)
		name := f.Name
		if from := f.Tag.Get("from"); from != "" {
			name = from
		}
		src, dst := rv.FieldByName(name), ov.Field(i)
		switch {
		case !src.IsValid():
			panic(fmt.Sprintf("studioapi: %T has no field %s for %T.%s", rec, name, out, f.Name))
		case src.Type() == dst.Type():
			dst.Set(src)
		case src.Type() == timeType && dst.Kind() == reflect.String:
			dst.SetString(httpapi.Time(src.Interface().(time.Time)))
		case src.Type() == reflect.PointerTo(timeType) && dst.Type() == reflect.TypeFor[*string]():
			dst.Set(reflect.ValueOf(httpapi.TimePtr(src.Interface().(*time.Time))))
		case src.Kind() == reflect.String && dst.Kind() == reflect.String:
			dst.SetString(src.String())
		default:
			panic(fmt.Sprintf("studioapi: %T.%s (%s) cannot show %T.%s (%s)", out, f.Name, dst.Type(), rec, name, src.Type()))
		}
	}
	return out
}

var timeType = reflect.TypeFor[time.Time]()
