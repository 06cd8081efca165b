package voiceops

import (
	"fmt"
	"reflect"
	"sync"
)

// A patch type (RulePatch) has one pointer field per field of its record
// that a request may set, named like it; nil means "not sent". The
// functions below copy the sent fields by name, so a new field is declared
// once in the patch type and nowhere else in the patch's application or
// change detection (storetest's RulePatch test sends each field alone).
// The matching by name is worked out once per pair of types (planOf): a
// patch is applied on every create and PATCH.

// applyPatch sets each field the patch sent on *rec, and reports whether
// any of them changed its value.
func applyPatch[P, R any](p P, rec *R) (changed bool) {
	pv, rv := reflect.ValueOf(&p).Elem(), reflect.ValueOf(rec).Elem()
	for _, s := range planOf(pv.Type(), rv.Type(), false, false) {
		sent := pv.Field(s.src)
		if sent.IsNil() {
			continue
		}
		dst := rv.Field(s.dst)
		if !sameValue(dst, sent.Elem()) {
			dst.Set(sent.Elem())
			changed = true
		}
	}
	return changed
}

// setSent sets each field the patch sent on *rec (a new record: nothing to
// compare).
func setSent[P, R any](p P, rec *R) {
	pv, rv := reflect.ValueOf(&p).Elem(), reflect.ValueOf(rec).Elem()
	for _, s := range planOf(pv.Type(), rv.Type(), false, false) {
		if sent := pv.Field(s.src); !sent.IsNil() {
			rv.Field(s.dst).Set(sent.Elem())
		}
	}
}

// sameValue is reflect.DeepEqual of a and b (of one type) without boxing
// them for the usual fields: pointers compare what they point to.
func sameValue(a, b reflect.Value) bool {
	switch {
	case a.Kind() == reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	case a.Kind() == reflect.Struct || !a.Comparable():
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
	return a.Equal(b)
}

// copyStep copies field src of one struct to field dst of another,
// through the pointer when deref.
type copyStep struct {
	src, dst int
	deref    bool
}

type planKey struct {
	src, dst          reflect.Type
	same, dstOptional bool
}

var plans sync.Map // planKey → []copyStep

// planOf matches each field of src (pointers, or values when sameAllowed)
// with dst's field of the same name, of the pointed-to type or (when
// sameAllowed) the same type. A field without one is a programming error,
// found by the first test that sends it, unless dstOptional: then src
// fields dst lacks are left out.
func planOf(src, dst reflect.Type, sameAllowed, dstOptional bool) []copyStep {
	k := planKey{src, dst, sameAllowed, dstOptional}
	if p, ok := plans.Load(k); ok {
		return p.([]copyStep)
	}
	steps := make([]copyStep, 0, src.NumField())
	for i := range src.NumField() {
		f := src.Field(i)
		d, ok := dst.FieldByName(f.Name)
		switch {
		case !ok && dstOptional:
		case ok && len(d.Index) == 1 && sameAllowed && d.Type == f.Type:
			steps = append(steps, copyStep{src: i, dst: d.Index[0]})
		case ok && len(d.Index) == 1 && f.Type.Kind() == reflect.Pointer && d.Type == f.Type.Elem():
			steps = append(steps, copyStep{src: i, dst: d.Index[0], deref: true})
		default:
			panic(fmt.Sprintf("voiceops: %s has no field %s of type %s for %s's %s", dst, f.Name, f.Type, src, f.Type))
		}
	}
	plans.Store(k, steps)
	return steps
}
