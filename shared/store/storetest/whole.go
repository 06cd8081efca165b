package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Records are compared whole: every field, found by reflection, so that a
// field an encoder or decoder drops fails the round trip by itself, with
// no list of fields to keep up to date (STYLE.md 18).

var timeType = reflect.TypeFor[time.Time]()

// checkWhole reports every field of got that differs from want. It is
// reflect.DeepEqual with one normalisation, the only thing stores
// legitimately change: a time.Time is compared as an instant (Equal), since
// stores keep the instant but not the zone or the monotonic reading (the
// fixtures' times are in UTC+2 and carry milliseconds, which every store
// keeps). Nil and empty maps or slices differ, and so do the dynamic types
// of free-form values (a float64 against an int): a caller sees both.
func checkWhole[T any](t *testing.T, what string, want, got T) {
	t.Helper()
	var d []string
	diffValues(&d, "", reflect.ValueOf(&want).Elem(), reflect.ValueOf(&got).Elem())
	if len(d) > 0 {
		t.Errorf("%s differs:\n  %s", what, strings.Join(d, "\n  "))
	}
}

// diffValues appends to d a line per difference between want and got (of
// one type) under path.
func diffValues(d *[]string, path string, want, got reflect.Value) {
	add := func() {
		*d = append(*d, fmt.Sprintf("%s: want %s, got %s", strings.TrimPrefix(path, "."), show(want), show(got)))
	}
	if want.Type() == timeType {
		if !want.Interface().(time.Time).Equal(got.Interface().(time.Time)) {
			add()
		}
		return
	}
	switch want.Kind() {
	case reflect.Struct:
		for i := range want.NumField() {
			if notStored(want.Type().Field(i)) {
				continue
			}
			diffValues(d, path+"."+want.Type().Field(i).Name, want.Field(i), got.Field(i))
		}
	case reflect.Pointer:
		if want.IsNil() || got.IsNil() {
			if want.IsNil() != got.IsNil() {
				add()
			}
			return
		}
		diffValues(d, path, want.Elem(), got.Elem())
	case reflect.Interface:
		if want.IsNil() || got.IsNil() || want.Elem().Type() != got.Elem().Type() {
			if !(want.IsNil() && got.IsNil()) {
				add()
			}
			return
		}
		diffValues(d, path, want.Elem(), got.Elem())
	case reflect.Slice, reflect.Array:
		if want.Kind() == reflect.Slice && want.IsNil() != got.IsNil() || want.Len() != got.Len() {
			add()
			return
		}
		for i := range want.Len() {
			diffValues(d, fmt.Sprintf("%s[%d]", path, i), want.Index(i), got.Index(i))
		}
	case reflect.Map:
		if want.IsNil() != got.IsNil() || want.Len() != got.Len() {
			add()
			return
		}
		for _, k := range want.MapKeys() {
			g := got.MapIndex(k)
			if !g.IsValid() {
				add()
				return
			}
			diffValues(d, fmt.Sprintf("%s[%v]", path, k), want.MapIndex(k), g)
		}
	default:
		// Value.Equal reads unexported fields too; records have no funcs.
		if !want.Equal(got) {
			add()
		}
	}
}

// notStored tells a field that stores never keep as such (tagged
// `store:"-"`, e.g. AlertRule.Change, the history entry written beside
// the rule): it is neither compared nor asked of a fixture.
func notStored(f reflect.StructField) bool { return f.Tag.Get("store") == "-" }

// show writes a value for a difference: times as UTC instants, free-form
// values with their Go types.
func show(v reflect.Value) string {
	if !v.IsValid() {
		return "nothing"
	}
	if !v.CanInterface() {
		return fmt.Sprintf("%v", v)
	}
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		return "&" + show(v.Elem())
	}
	if v.Type() == timeType {
		return v.Interface().(time.Time).UTC().Format(time.RFC3339Nano)
	}
	if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
		return fmt.Sprintf("%q", v.Bytes())
	}
	return fmt.Sprintf("%#v", v.Interface())
}

// checkEveryFieldSet fails for each field of the fixture v left at its zero
// value (an empty map or slice counts as zero), looking into nested
// structs, pointers and the elements of slices; a field of a slice's
// elements need only be set in one of them (a list of variants sets each
// variant's fields in its own element). A round trip of a fixture with a
// zero field does not show that a store keeps that field: when a type
// gains a field, this is the test that asks for it to be put into the
// fixture, and so into the round trip.
func checkEveryFieldSet(t *testing.T, what string, v any) {
	t.Helper()
	if zero := zeroPaths("", reflect.ValueOf(v)); len(zero) > 0 {
		t.Errorf("%s: the fixture leaves these fields zero, so the round trip does not test them; set them:\n  %s", what, strings.Join(zero, "\n  "))
	}
}

// zeroPaths returns the paths under path of the zero fields of v: the
// shortest, a zero struct or nil pointer standing for all its fields.
func zeroPaths(path string, v reflect.Value) []string {
	if v.IsZero() || (v.Kind() == reflect.Slice || v.Kind() == reflect.Map) && v.Len() == 0 {
		return []string{strings.TrimPrefix(path, ".")}
	}
	switch {
	case v.Type() == timeType:
	case v.Kind() == reflect.Struct:
		var out []string
		for i := range v.NumField() {
			if notStored(v.Type().Field(i)) {
				continue
			}
			out = append(out, zeroPaths(path+"."+v.Type().Field(i).Name, v.Field(i))...)
		}
		return out
	case v.Kind() == reflect.Pointer:
		return zeroPaths(path, v.Elem())
	case v.Kind() == reflect.Slice:
		// A path is zero when it, or a path above it, is zero in every element.
		var each [][]string
		var all []string
		for i := range v.Len() {
			z := zeroPaths(path+"[*]", v.Index(i))
			each, all = append(each, z), append(all, z...)
		}
		var out []string
		for _, p := range all {
			if !slices.Contains(out, p) && !slices.ContainsFunc(out, func(q string) bool { return under(p, q) }) &&
				!slices.ContainsFunc(each, func(z []string) bool {
					return !slices.ContainsFunc(z, func(q string) bool { return p == q || under(p, q) })
				}) {
				out = slices.DeleteFunc(out, func(q string) bool { return under(q, p) })
				out = append(out, p)
			}
		}
		return out
	}
	return nil
}

// under reports whether the field path p is below the path q.
func under(p, q string) bool {
	return strings.HasPrefix(p, q+".") || strings.HasPrefix(p, q+"[")
}

// CheckWhole is checkWhole for a store's own tests (such as reads of items
// written by older code): one comparison of every field.
func CheckWhole[T any](t *testing.T, what string, want, got T) {
	t.Helper()
	checkWhole(t, what, want, got)
}
