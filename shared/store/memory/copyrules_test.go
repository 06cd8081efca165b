package memory

import (
	"reflect"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestCopyRulesSharesNothing: a listed rule equals copyRule's copy, and
// none of its pointers (every pointer field of AlertRule, set) points into
// the store's rule: a new optional field that copyRules does not copy
// fails here.
func TestCopyRulesSharesNothing(t *testing.T) {
	full := func(id string) voiceops.AlertRule {
		r := voiceops.AlertRule{ID: id, Name: "n", CreatedAt: time.Unix(1, 0)}
		v := reflect.ValueOf(&r).Elem()
		for i := range v.NumField() {
			if f := v.Field(i); f.Kind() == reflect.Pointer && v.Type().Field(i).Name != "Change" {
				f.Set(reflect.New(f.Type().Elem()))
			}
		}
		return r
	}
	stored := map[string]voiceops.AlertRule{"ar_1": full("ar_1"), "ar_2": {ID: "ar_2"}, "ar_3": full("ar_3")}
	for _, got := range copyRules(stored) {
		orig := stored[got.ID]
		if !reflect.DeepEqual(got, copyRule(orig)) {
			t.Errorf("%s: %+v, copyRule gives %+v", got.ID, got, copyRule(orig))
		}
		g, o := reflect.ValueOf(got), reflect.ValueOf(orig)
		for i := range g.NumField() {
			if g.Field(i).Kind() == reflect.Pointer && !o.Field(i).IsNil() && g.Field(i).Pointer() == o.Field(i).Pointer() {
				t.Errorf("%s: %s shared with the store", got.ID, g.Type().Field(i).Name)
			}
		}
	}
}
