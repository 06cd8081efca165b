package voiceops

import (
	"fmt"
	"reflect"
)

// A patch type (RulePatch) has one pointer field per field of its record
// that a request may set, named like it; nil means "not sent". The
// functions below copy the sent fields by name, so a new field is declared
// once in the patch type and nowhere else in the patch's application or
// change detection (storetest's RulePatch test sends each field alone).

// applyPatch sets each field the patch sent on *rec, and reports whether
// any of them changed its value.
func applyPatch[P, R any](p P, rec *R) (changed bool) {
	pv, rv := reflect.ValueOf(p), reflect.ValueOf(rec).Elem()
	for i := range pv.NumField() {
		sent := pv.Field(i)
		if sent.IsNil() {
			continue
		}
		dst := sameNamed(rv, pv.Type().Field(i), sent.Type().Elem())
		if !reflect.DeepEqual(dst.Interface(), sent.Elem().Interface()) {
			dst.Set(sent.Elem())
			changed = true
		}
	}
	return changed
}

// copySent sets each field the patch sent on *in, a struct with a field of
// the same name holding either the pointed-to value or the pointer itself
// (an optional input).
func copySent[P, I any](p P, in *I) {
	pv, iv := reflect.ValueOf(p), reflect.ValueOf(in).Elem()
	for i := range pv.NumField() {
		sent := pv.Field(i)
		if sent.IsNil() {
			continue
		}
		f := pv.Type().Field(i)
		if dst := iv.FieldByName(f.Name); dst.IsValid() && dst.Type() == sent.Type() {
			dst.Set(sent)
			continue
		}
		sameNamed(iv, f, sent.Type().Elem()).Set(sent.Elem())
	}
}

// sameNamed returns the field of v named like f, of type t. A patch field
// without one is a programming error, found by the first test that sends
// it.
func sameNamed(v reflect.Value, f reflect.StructField, t reflect.Type) reflect.Value {
	dst := v.FieldByName(f.Name)
	if !dst.IsValid() || dst.Type() != t {
		panic(fmt.Sprintf("voiceops: %s has no field %s of type %s for the patch's %s", v.Type(), f.Name, t, f.Type))
	}
	return dst
}
