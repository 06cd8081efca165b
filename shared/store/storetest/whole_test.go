package storetest

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

type inner struct {
	A string
	B *int
}

type record struct {
	N     int
	T     time.Time
	P     *time.Time
	M     map[string]any
	S     []string
	Items []inner
	In    *inner
}

func TestDiffValues(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	base := func() record {
		return record{N: 1, T: t0, P: ptr(t0), M: map[string]any{"x": 1.0, "l": []any{"a"}}, S: []string{"a"},
			Items: []inner{{A: "a", B: ptr(1)}}, In: &inner{A: "b"}}
	}
	for _, tc := range []struct {
		name   string
		change func(*record)
		want   []string // the paths that differ
	}{
		{"equal", func(*record) {}, nil},
		{"same instant in another zone", func(r *record) { r.T, r.P = t0.In(time.FixedZone("X", 3600)), ptr(t0.In(time.FixedZone("Y", -60))) }, nil},
		{"int", func(r *record) { r.N = 2 }, []string{"N"}},
		{"time", func(r *record) { r.T = t0.Add(time.Millisecond) }, []string{"T"}},
		{"nil pointer", func(r *record) { r.P = nil }, []string{"P"}},
		{"nil against empty map", func(r *record) { r.M = map[string]any{} }, []string{"M"}},
		{"free-form type", func(r *record) { r.M["x"] = 1 }, []string{"M[x]"}},
		{"nested list", func(r *record) { r.M["l"] = []any{"b"} }, []string{"M[l][0]"}},
		{"nil against empty slice", func(r *record) { r.S = []string{} }, []string{"S"}},
		{"element field", func(r *record) { r.Items[0].B = ptr(2) }, []string{"Items[0].B"}},
		{"pointer to struct", func(r *record) { r.In.A = "c" }, []string{"In.A"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, got := base(), base()
			tc.change(&got)
			var d []string
			diffValues(&d, "", reflect.ValueOf(want), reflect.ValueOf(got))
			var paths []string
			for _, l := range d {
				paths = append(paths, l[:strings.Index(l, ":")])
			}
			if !slices.Equal(paths, tc.want) {
				t.Errorf("differences %q, want paths %q", d, tc.want)
			}
		})
	}
}

func TestZeroPaths(t *testing.T) {
	full := record{N: 1, T: time.Now(), P: ptr(time.Now()), M: map[string]any{"x": 1}, S: []string{"a"},
		Items: []inner{{A: "a"}, {B: ptr(1)}}, In: &inner{A: "a", B: ptr(2)}}
	if z := zeroPaths("", reflect.ValueOf(full)); len(z) != 0 {
		t.Errorf("zero paths of a full record: %q (each element field is set in one element)", z)
	}
	sparse := record{M: map[string]any{}, Items: []inner{{A: "a"}, {}}, In: &inner{}}
	want := []string{"N", "T", "P", "M", "S", "Items[*].B", "In"}
	if z := zeroPaths("", reflect.ValueOf(sparse)); !slices.Equal(z, want) {
		t.Errorf("zero paths %q, want %q", z, want)
	}
	nested := struct{ L []*inner }{L: []*inner{nil, {A: "a"}, {A: "b"}}}
	if z := zeroPaths("", reflect.ValueOf(nested)); !slices.Equal(z, []string{"L[*].B"}) {
		t.Errorf("zero paths %q, want [L[*].B]: a field under a nil element is zero there", z)
	}
}

func TestDiffValuesUnexported(t *testing.T) {
	type hidden struct{ n int }
	var d []string
	diffValues(&d, "", reflect.ValueOf(hidden{1}), reflect.ValueOf(hidden{2}))
	if len(d) != 1 || !strings.HasPrefix(d[0], "n:") {
		t.Errorf("differences %q, want one at n", d)
	}
}
