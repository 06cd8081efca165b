package textfill

import "testing"

func TestFill(t *testing.T) {
	type kind string
	set := "kept"
	rec := struct {
		Name    string
		Kind    kind
		Note    *string
		Set     *string
		Count   int
		Skipped string `store:"-"`
	}{Set: &set}
	Fill(&rec, "7")
	if rec.Name != "Name 7" || rec.Kind != "Kind 7" || rec.Note == nil || *rec.Note != "Note 7" || *rec.Set != "kept" || rec.Count != 0 || rec.Skipped != "" {
		t.Errorf("Fill: %+v (note %v)", rec, rec.Note)
	}
}
