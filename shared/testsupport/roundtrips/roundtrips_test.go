package roundtrips

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/catalog"
)

// TestEveryRouteHasARow: a route added to the catalog without its row
// fails here (and its function's round-trip test fails until it measures
// it); a row of no route fails too.
func TestEveryRouteHasARow(t *testing.T) {
	routes := map[string]bool{}
	for _, fn := range catalog.Functions {
		for _, r := range fn.Routes() {
			key := string(fn.Groups[0].Host) + " " + r.Pattern()
			routes[key] = true
			if _, ok := Want[key]; !ok {
				t.Errorf("%s (function %s) has no row in Want: measure it in functions/%s/roundtrips_test.go", key, fn.Name, fn.Name)
			}
		}
	}
	for key := range Want {
		if !routes[key] {
			t.Errorf("Want has a row for %s, which is no route of the catalog", key)
		}
	}
}

// TestDocsShowTheTable: docs/performance.md shows Want as Table renders it,
// so the page cannot drift from what the functions' tests measure.
func TestDocsShowTheTable(t *testing.T) {
	page, err := os.ReadFile("../../../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := Table(); !strings.Contains(string(page), want) {
		t.Errorf("docs/performance.md, \"AWS round trips per request\", must show this table:\n\n%s", want)
	}
}

func TestStepsGroupOverlappingCalls(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	cs := []Call{
		{"GetItem", "config", at(0), at(10)},
		{"Query", "metrics", at(10), at(20)}, // starts as the first ends: the next step
		{"Query", "config", at(12), at(25)},  // overlaps it: the same step
		{"PutItem", "metrics", at(25), at(30)},
	}
	got := Path(Steps(cs))
	if want := "GetItem config → Query config ‖ Query metrics → PutItem metrics"; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	if count(got) != 3 || calls(got) != 4 {
		t.Errorf("count %d, calls %d; want 3 and 4", count(got), calls(got))
	}
	if Path(nil) != "—" || count("—") != 0 || calls("—") != 0 {
		t.Error("no calls: want —, 0 and 0")
	}
}
