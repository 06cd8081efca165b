package storetest

import (
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/alerting"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// A patch type has one pointer field per field of its record that a PATCH
// may change, named like it. The tests below set each field alone, found
// by reflection, to the value another record holds, and send it through
// alerting.Service, the path a PATCH takes: the change detection must see
// it (else PATCH answers 200 and stores nothing), the store must keep it,
// and the same patch again must change nothing. A field added to a patch
// type is tested with no edit here; one whose record field is named
// otherwise fails until it is renamed.

// patchFields calls try with a patch of type P that sets its field f alone
// to the value of the same-named field of from.
func patchFields[P, R any](t *testing.T, from R, try func(t *testing.T, f reflect.StructField, patch P, value reflect.Value)) {
	t.Helper()
	pt := reflect.TypeFor[P]()
	if pt.NumField() == 0 {
		t.Fatalf("%s has no fields", pt)
	}
	for i := range pt.NumField() {
		f := pt.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			value := reflect.ValueOf(from).FieldByName(f.Name)
			if !value.IsValid() || f.Type.Kind() != reflect.Pointer || f.Type.Elem() != value.Type() {
				t.Fatalf("%s.%s (%s) is not a pointer to a field of %T of the same name", pt, f.Name, f.Type, from)
			}
			var patch P
			p := reflect.New(value.Type())
			p.Elem().Set(value)
			reflect.ValueOf(&patch).Elem().Field(i).Set(p)
			try(t, f, patch, value)
		})
	}
}

// patchClock is a service clock that moves one second per reading.
func patchClock() func() time.Time {
	now := at(1000)
	return func() time.Time { now = now.Add(time.Second); return now }
}

func testRulePatchFields(t *testing.T, s voiceops.Stores) {
	a := mustAccount(t, s)
	p1, p2 := mustProject(t, s, a.ID), mustProject(t, s, a.ID)
	// other differs from every rule of the test in every patchable field.
	other := fullRule(a.ID, p2.ID, 50)
	other.Metric, other.Operator, other.Window, other.Enabled = voiceops.MetricCallCrashes, voiceops.OpLessEqual, voiceops.Window60m, false
	svc := &alerting.Service{Rules: s.Rules, Endpoints: s.Endpoints, Now: patchClock(), Log: slog.New(slog.DiscardHandler)}
	patchFields(t, other, func(t *testing.T, f reflect.StructField, patch voiceops.RulePatch, value reflect.Value) {
		r := fullRule(a.ID, p1.ID, 10)
		r.ID = voiceops.NewID(voiceops.PrefixRule)
		mustNil(t, "CreateRule", s.Rules.CreateRule(ctx(t), r))
		if _, changed := patch.Apply(r, at(1000)); !changed {
			t.Errorf("RulePatch.Apply: setting %s alone reports no change", f.Name)
		}
		got, err := svc.PatchRule(ctx(t), a.ID, r.ID, patch)
		mustNil(t, "PatchRule", err)
		stored, err := s.Rules.GetRule(ctx(t), a.ID, r.ID)
		mustNil(t, "GetRule", err)
		checkRule(t, "the stored rule against PatchRule's answer", got, stored)
		if !reflect.DeepEqual(reflect.ValueOf(stored).FieldByName(f.Name).Interface(), value.Interface()) {
			t.Errorf("PATCH of %s alone: stored %s = %s, want %s", f.Name, f.Name, show(reflect.ValueOf(stored).FieldByName(f.Name)), show(value))
		}
		if stored.Version != r.Version+1 {
			t.Errorf("PATCH of %s alone: version %d, want %d", f.Name, stored.Version, r.Version+1)
		}
		again, err := svc.PatchRule(ctx(t), a.ID, r.ID, patch)
		mustNil(t, "PatchRule again", err)
		checkRule(t, "the same patch again (no change)", stored, again)
	})
}

func testEndpointPatchFields(t *testing.T, s voiceops.Stores) {
	a := mustAccount(t, s)
	other := fullEndpoint(a.ID, 51)
	other.Enabled = false
	svc := &alerting.Service{Rules: s.Rules, Endpoints: s.Endpoints, Now: patchClock(), Log: slog.New(slog.DiscardHandler)}
	patchFields(t, other, func(t *testing.T, f reflect.StructField, patch voiceops.EndpointPatch, value reflect.Value) {
		e := fullEndpoint(a.ID, 10)
		mustNil(t, "CreateEndpoint", s.Endpoints.CreateEndpoint(ctx(t), e))
		if _, changed := patch.Apply(e, at(1000)); !changed {
			t.Errorf("EndpointPatch.Apply: setting %s alone reports no change", f.Name)
		}
		got, err := svc.PatchEndpoint(ctx(t), a.ID, e.ID, patch)
		mustNil(t, "PatchEndpoint", err)
		stored, err := s.Endpoints.GetEndpoint(ctx(t), a.ID, e.ID)
		mustNil(t, "GetEndpoint", err)
		checkEndpoint(t, "the stored endpoint against PatchEndpoint's answer", got, stored)
		if !reflect.DeepEqual(reflect.ValueOf(stored).FieldByName(f.Name).Interface(), value.Interface()) {
			t.Errorf("PATCH of %s alone: stored %s = %s, want %s", f.Name, f.Name, show(reflect.ValueOf(stored).FieldByName(f.Name)), show(value))
		}
		if stored.Version != e.Version+1 {
			t.Errorf("PATCH of %s alone: version %d, want %d", f.Name, stored.Version, e.Version+1)
		}
		again, err := svc.PatchEndpoint(ctx(t), a.ID, e.ID, patch)
		mustNil(t, "PatchEndpoint again", err)
		checkEndpoint(t, "the same patch again (no change)", stored, again)
	})
}
