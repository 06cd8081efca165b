package voiceops

import (
	"fmt"
	"reflect"
	"sync"
)

// RuleInput.Patch builds a RulePatch from a create request written in Go
// by matching the fields by name (planOf), worked out once per pair of
// types. The request path applies a patch without reflection
// (RulePatch.set).

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
