package studioapi

import (
	"github.com/voiceops/opsapi/shared/testsupport/textfill"

	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/apispec"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// A rule field is declared once in each of a few places (docs/architecture.md, "Where to add a rule field");
// these tests hold the API's places to each other, so that leaving one
// out fails here: the rule record shows every field, the OpenAPI document
// describes what the handlers write and read, and every property of the
// PATCH body sets its field of RulePatch.

// notShown are the rule's fields that the API never shows.
var notShown = []string{"AccountID", "Sequence", "SilencedFrom", "Version", "Change", "Wake"}

// twoRules returns two rules that differ in every field, each set.
func twoRules(t *testing.T) (a, b voiceops.AlertRule) {
	t.Helper()
	at := func(n int) *time.Time { v := time.Date(2026, 11, 1, 0, n, 0, 0, time.UTC); return &v }
	pa, pb := "proj_a", "proj_b"
	va, vb := int64(7), int64(8)
	a = voiceops.AlertRule{ID: "ar_a", AccountID: "acct_a", Name: "a", ProjectID: &pa, Metric: voiceops.MetricAPIErrors,
		Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m, Enabled: true, State: voiceops.StateAlert,
		CreatedAt: *at(1), UpdatedAt: *at(2), Since: at(3), LastEvaluatedAt: at(4), CurrentValue: &va, Sequence: 1, Version: 1}
	b = voiceops.AlertRule{ID: "ar_b", AccountID: "acct_b", Name: "b", ProjectID: &pb, Metric: voiceops.MetricCallCrashes,
		Operator: voiceops.OpLessEqual, Threshold: 2, Window: voiceops.Window60m, Enabled: false, State: voiceops.StateOK,
		CreatedAt: *at(11), UpdatedAt: *at(12), Since: at(13), LastEvaluatedAt: at(14), CurrentValue: &vb, Sequence: 2, Version: 2}
	textfill.Fill(&a, "a") // a new text field too
	textfill.Fill(&b, "b")
	av, bv := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for i := range av.NumField() {
		f := av.Type().Field(i)
		if f.Tag.Get("store") == "-" {
			continue
		}
		if reflect.DeepEqual(av.Field(i).Interface(), bv.Field(i).Interface()) {
			t.Fatalf("the test's two rules have the same %s: give them different values", f.Name)
		}
	}
	return a, b
}

func ruleObject(t *testing.T, r voiceops.AlertRule) map[string]any {
	t.Helper()
	body, err := json.Marshal(toRuleJSON(r))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Every field of the rule but notShown changes the record the API shows.
func TestTheRuleRecordShowsEveryField(t *testing.T) {
	a, b := twoRules(t)
	shown := ruleObject(t, a)
	rt := reflect.TypeFor[voiceops.AlertRule]()
	for i := range rt.NumField() {
		name := rt.Field(i).Name
		if slices.Contains(notShown, name) {
			continue
		}
		r := a
		reflect.ValueOf(&r).Elem().Field(i).Set(reflect.ValueOf(b).Field(i))
		if reflect.DeepEqual(ruleObject(t, r), shown) {
			t.Errorf("AlertRule.%s is not in the rule record: add it to ruleJSON (or to notShown if the API never shows it)", name)
		}
	}
}

// docSchema is what the tests read of a component schema.
type docSchema struct {
	Required   []string       `json:"required"`
	Properties map[string]any `json:"properties"`
	AllOf      []struct {
		Ref string `json:"$ref"`
	} `json:"allOf"`
}

// schemas returns the OpenAPI document's component schemas.
func schemas(t *testing.T) map[string]docSchema {
	t.Helper()
	var doc struct {
		Components struct {
			Schemas map[string]docSchema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(apispec.Document(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Components.Schemas
}

func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// The document's AlertRule is the record the handlers write, every field
// always present; the create and preview bodies take the PATCH body's
// properties (the preview's with its range).
func TestTheDocumentDescribesTheRuleRecordAndBodies(t *testing.T) {
	a, _ := twoRules(t)
	s := schemas(t)
	record := keys(ruleObject(t, a))
	if got := keys(s["AlertRule"].Properties); !slices.Equal(got, record) {
		t.Errorf("openapi.json AlertRule has the properties %v, the handlers write %v", got, record)
	}
	if got := slices.Sorted(slices.Values(s["AlertRule"].Required)); !slices.Equal(got, record) {
		t.Errorf("openapi.json AlertRule requires %v, the handlers always write %v", got, record)
	}
	patch := keys(s["AlertRulePatch"].Properties)
	// The create body is the PATCH body with its required fields: both are
	// read by readRuleFields.
	create := s["AlertRuleCreate"]
	if len(create.AllOf) != 1 || create.AllOf[0].Ref != "#/components/schemas/AlertRulePatch" || len(create.Properties) != 0 {
		t.Errorf("openapi.json AlertRuleCreate: allOf %v and properties %v, want allOf AlertRulePatch alone", create.AllOf, keys(create.Properties))
	}
	for _, name := range create.Required {
		if !slices.Contains(patch, name) {
			t.Errorf("openapi.json AlertRuleCreate requires %q, no property of AlertRulePatch", name)
		}
	}
	preview := slices.Sorted(slices.Values(append(slices.Clone(patch), "from", "to")))
	if got := keys(s["AlertRulePreviewRequest"].Properties); !slices.Equal(got, preview) {
		t.Errorf("openapi.json AlertRulePreviewRequest has the properties %v, want AlertRulePatch's and from, to: %v", got, preview)
	}
}

// Each property of the document's PATCH body, sent alone with the value
// another rule shows, sets exactly one field of RulePatch to that rule's
// value, and every field of RulePatch is set by one: a field missing from
// readRuleFields or from the document fails here.
func TestEveryPatchPropertySetsItsField(t *testing.T) {
	a, b := twoRules(t)
	shown := ruleObject(t, b)
	set := map[string]string{} // RulePatch field -> property
	for _, prop := range keys(schemas(t)["AlertRulePatch"].Properties) {
		value, ok := shown[prop]
		if !ok {
			t.Errorf("AlertRulePatch's %s is no property of the rule record", prop)
			continue
		}
		body, _ := json.Marshal(map[string]any{prop: value})
		o, err := httpapi.ParseObject(body)
		if err != nil {
			t.Fatal(err)
		}
		p := readRuleFields(o, false)
		if err := o.Done(); err != nil {
			t.Errorf("PATCH %s: %v", body, err)
			continue
		}
		var sent []string
		pv := reflect.ValueOf(p)
		for i := range pv.NumField() {
			if !pv.Field(i).IsNil() {
				sent = append(sent, pv.Type().Field(i).Name)
			}
		}
		if len(sent) != 1 {
			t.Errorf("PATCH %s sets %v of RulePatch, want one field", body, sent)
			continue
		}
		set[sent[0]] = prop
		got, _ := p.Apply(a, a.UpdatedAt)
		if want := reflect.ValueOf(b).FieldByName(sent[0]).Interface(); !reflect.DeepEqual(reflect.ValueOf(got).FieldByName(sent[0]).Interface(), want) {
			t.Errorf("PATCH %s: the rule's %s = %v, want %v", body, sent[0], show(reflect.ValueOf(got).FieldByName(sent[0])), show(reflect.ValueOf(want)))
		}
	}
	pt := reflect.TypeFor[voiceops.RulePatch]()
	for i := range pt.NumField() {
		if _, ok := set[pt.Field(i).Name]; !ok {
			t.Errorf("RulePatch.%s is set by no property of openapi.json's AlertRulePatch: read it in readRuleFields and document it", pt.Field(i).Name)
		}
	}
}

func show(v reflect.Value) string {
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		return fmt.Sprint(v.Elem().Interface())
	}
	return fmt.Sprint(v.Interface())
}
