package voiceops

import (
	"github.com/voiceops/opsapi/shared/testsupport/textfill"

	"reflect"
	"testing"
	"time"
)

// fullPatch returns a RulePatch that sends every field, each with the
// value the same-named field of from holds.
func fullPatch(t *testing.T, from AlertRule) RulePatch {
	t.Helper()
	var p RulePatch
	pv, fv := reflect.ValueOf(&p).Elem(), reflect.ValueOf(from)
	for i := range pv.NumField() {
		f := pv.Type().Field(i)
		v := fv.FieldByName(f.Name)
		if !v.IsValid() || f.Type.Elem() != v.Type() {
			t.Fatalf("RulePatch.%s (%s) is not a pointer to a field of AlertRule of the same name", f.Name, f.Type)
		}
		ptr := reflect.New(v.Type())
		ptr.Elem().Set(v)
		pv.Field(i).Set(ptr)
	}
	return p
}

// A create body is read like a PATCH that sends the required fields: every
// field a PATCH can send reaches the created rule (NewRuleFrom), and
// RuleInput (Go's create requests) holds only patch fields.
func TestCreateTakesEveryPatchField(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	project := "proj_x"
	// Every patchable field differs from NewRule's defaults.
	from := AlertRule{Name: "n", ProjectID: &project, Metric: MetricCallCrashes, Operator: OpLessEqual, Threshold: 7,
		Window: Window60m, Enabled: false}
	textfill.Fill(&from, "x") // a new text field too
	p := fullPatch(t, from)
	r := NewRuleFrom("ar_1", "acct", p, t0)
	pt := reflect.TypeFor[RulePatch]()
	for i := range pt.NumField() {
		name := pt.Field(i).Name
		got, want := reflect.ValueOf(r).FieldByName(name), reflect.ValueOf(from).FieldByName(name)
		if want.IsZero() && want.Kind() != reflect.Bool {
			t.Errorf("the test's rule leaves %s zero: give it a value", name)
		}
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Errorf("created from a body with %s: the rule's %s = %v, want %v", name, name, got, want)
		}
	}
	// And nothing else: RuleInput's fields are the patch's.
	it := reflect.TypeFor[RuleInput]()
	for i := range it.NumField() {
		if _, ok := pt.FieldByName(it.Field(i).Name); !ok {
			t.Errorf("RuleInput.%s is no field of RulePatch", it.Field(i).Name)
		}
	}
	if r.State != StateOK || r.Version != 1 || !r.CreatedAt.Equal(t0) || r.Since == nil || !r.Since.Equal(t0) {
		t.Errorf("NewRule's defaults: %+v", r)
	}
}

// A rule created without enabled is enabled; the input's pointer fields are
// not shared with the rule.
func TestNewRuleDefaults(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	r := NewRule("ar_1", "acct", RuleInput{Name: "n", Metric: MetricAPIErrors, Operator: OpGreater, Threshold: 1, Window: Window5m}, t0)
	if !r.Enabled || r.ProjectID != nil {
		t.Errorf("NewRule without enabled and project: enabled %v, project %v", r.Enabled, r.ProjectID)
	}
}

// Apply changes only what the patch sends and reports a change only when a
// value differs.
func TestApplyChangesOnlyWhatIsSent(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	project := "proj_x"
	r := NewRule("ar_1", "acct", RuleInput{Name: "n", ProjectID: &project, Metric: MetricAPIErrors, Operator: OpGreater, Threshold: 1, Window: Window5m}, t0)
	if got, changed := fullPatch(t, r).Apply(r, t0.Add(time.Hour)); changed || !reflect.DeepEqual(got, r) {
		t.Errorf("a patch of the rule's own values: changed %v, %+v", changed, got)
	}
	same := "proj_x" // another pointer to an equal value changes nothing
	samePtr := &same
	if _, changed := (RulePatch{ProjectID: &samePtr}).Apply(r, t0); changed {
		t.Error("the same project by another pointer reports a change")
	}
	var none *string
	got, changed := RulePatch{ProjectID: &none}.Apply(r, t0.Add(time.Hour))
	if !changed || got.ProjectID != nil || got.Name != r.Name || !got.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("project_id null: changed %v, %+v", changed, got)
	}
}

// Every field a PATCH can send, sent alone, changes the rule's field of
// the same name and nothing else of what a patch can change: a field of
// RulePatch that RulePatch.set leaves out fails here.
func TestApplyTakesEveryPatchField(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	p1, p2 := "proj_1", "proj_2"
	r := NewRule("ar_1", "acct", RuleInput{Name: "n", ProjectID: &p1, Metric: MetricAPIErrors, Operator: OpGreater, Threshold: 1, Window: Window5m}, t0)
	// Every patchable field differs from r's.
	other := AlertRule{Name: "m", ProjectID: &p2, Metric: MetricCallCrashes, Operator: OpLessEqual, Threshold: 7, Window: Window60m, Enabled: false}
	textfill.Fill(&other, "y") // a new text field too
	full := fullPatch(t, other)
	pt := reflect.TypeFor[RulePatch]()
	for i := range pt.NumField() {
		name := pt.Field(i).Name
		var alone RulePatch
		reflect.ValueOf(&alone).Elem().Field(i).Set(reflect.ValueOf(full).Field(i))
		got, changed := alone.Apply(r, t0.Add(time.Hour))
		if !changed {
			t.Errorf("a patch sending only %s: no change reported", name)
		}
		for j := range pt.NumField() {
			n := pt.Field(j).Name
			g := reflect.ValueOf(got).FieldByName(n).Interface()
			want := reflect.ValueOf(r).FieldByName(n).Interface()
			if j == i {
				want = reflect.ValueOf(other).FieldByName(n).Interface()
			}
			if !reflect.DeepEqual(g, want) {
				t.Errorf("a patch sending only %s: the rule's %s = %v, want %v", name, n, g, want)
			}
		}
	}
}

// RuleInput.Patch sends every field of the input: a value as a pointer
// to it, an optional pointer as it is (Enabled nil is not sent; ProjectID
// is always sent, nil meaning account-wide).
func TestRuleInputSendsEveryField(t *testing.T) {
	project, on := "proj_x", false
	in := RuleInput{ProjectID: &project, Metric: MetricCallCrashes, Operator: OpLessEqual, Threshold: 7, Window: Window60m, Enabled: &on}
	textfill.Fill(&in, "x")
	p := in.Patch()
	iv, pv := reflect.ValueOf(in), reflect.ValueOf(p)
	for i := range iv.NumField() {
		name := iv.Type().Field(i).Name
		sent := pv.FieldByName(name)
		if !sent.IsValid() || sent.IsNil() {
			t.Errorf("RuleInput.%s is not sent", name)
			continue
		}
		got, want := sent.Elem().Interface(), iv.Field(i).Interface()
		if iv.Field(i).Kind() == reflect.Pointer && sent.Type().Elem().Kind() != reflect.Pointer {
			got, want = sent.Interface(), iv.Field(i).Interface()
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("RuleInput.%s sent as %v, want %v", name, got, want)
		}
	}
	if p := (RuleInput{}).Patch(); p.Enabled != nil || p.ProjectID == nil || *p.ProjectID != nil {
		t.Errorf("an input without enabled and project: enabled %v, project %v (want not sent, and sent as nil)", p.Enabled, p.ProjectID)
	}
}
