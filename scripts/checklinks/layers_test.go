package checklinks

import (
	"bufio"
	"bytes"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// A folder of shared/ is a layer above the folders inside it: a feature's
// root package (shared/calls) builds on its subfolders that it imports
// (shared/calls/telephony), and the subfolders that import the root
// (dialer, twilioapi) stand above it. So a package may import its parent
// folder's package, and its siblings, but never a package outside its
// folder that leads back to its parent: that package stands above the
// parent, so above it too (the simulator under telephony driving the calls
// service, which telephony serves, was one).

// imports is each shared/ package's imports of the module (module-relative).
func imports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"shared/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		var own []string
		for _, d := range f[1:] {
			if rel, ok := strings.CutPrefix(d, module); ok {
				own = append(own, rel)
			}
		}
		m[strings.TrimPrefix(f[0], module)] = own
	}
	return m
}

// upward lists "a imports b, which leads to a's parent p" for every import
// of a package that stands above its importer.
func upward(imports map[string][]string) []string {
	reaches := map[string]map[string]bool{}
	var reach func(p string) map[string]bool
	reach = func(p string) map[string]bool {
		if r, ok := reaches[p]; ok {
			return r
		}
		r := map[string]bool{}
		reaches[p] = r
		for _, q := range imports[p] {
			r[q] = true
			for x := range reach(q) {
				r[x] = true
			}
		}
		return r
	}
	var out []string
	for a, bs := range imports {
		parent := ""
		for dir := path.Dir(a); dir != "." && dir != "shared"; dir = path.Dir(dir) {
			if _, ok := imports[dir]; ok {
				parent = dir
				break
			}
		}
		if parent == "" {
			continue
		}
		for _, b := range bs {
			sibling := path.Dir(b) == path.Dir(a)
			if b != parent && !sibling && reach(b)[parent] {
				out = append(out, a+" imports "+b+", which imports "+parent+": it stands above "+a)
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestNoPackageImportsOneAboveIt(t *testing.T) {
	m := imports(t)
	if len(m["shared/calls/dialer"]) == 0 {
		t.Fatalf("go list found no imports of shared/calls/dialer: %v", m)
	}
	for _, v := range upward(m) {
		t.Error(v)
	}
}

// TestUpwardCatchesAnImport: the simulator under telephony, driving the
// calls service (which imports telephony), is reported; the dialer
// importing its parent, and siblings importing each other, are not.
func TestUpwardCatchesAnImport(t *testing.T) {
	m := map[string][]string{
		"shared/calls":                     {"shared/calls/telephony"},
		"shared/calls/telephony":           nil,
		"shared/calls/telephony/simulator": {"shared/calls", "shared/calls/telephony"},
		"shared/calls/dialer":              {"shared/calls", "shared/calls/telephony"},
		"shared/calls/twilioapi":           {"shared/calls", "shared/calls/dialer"},
		"shared/calls/twilioapi/suite":     {"shared/calls/twilioapi", "shared/calls"},
	}
	got := upward(m)
	if len(got) != 1 || !strings.HasPrefix(got[0], "shared/calls/telephony/simulator imports shared/calls,") {
		t.Errorf("upward = %q, want the simulator's import of shared/calls alone", got)
	}
}

// storeMayImport is what the stores build on: the domain, the platform and
// one another, and the metric data's own record. The minute bucket with its
// latency sketch (shared/metrics/buckets, over shared/metrics' kinds and
// scopes) is what the metric stores keep, and they merge buckets inside
// their own atomic write; in voiceops it would put the sketch into every
// function's binary (docs/architecture.md, "Who imports whom").
var storeMayImport = []string{"shared/voiceops", "shared/platform/...", "shared/store/...", "shared/metrics", "shared/metrics/buckets"}

// TestStoresImportNoFeatureLogic: the stores (not their contract suite,
// which tests the features on them) import nothing else of shared/.
func TestStoresImportNoFeatureLogic(t *testing.T) {
	m := imports(t)
	n := 0
	for p, deps := range m {
		if !matches("shared/store/...", p) || matches("shared/store/storetest", p) {
			continue
		}
		n++
		for _, d := range deps {
			if !slices.ContainsFunc(storeMayImport, func(allowed string) bool { return matches(allowed, d) }) {
				t.Errorf("%s imports %s: a store takes its records from voiceops (or says why in storeMayImport and docs/architecture.md)", p, d)
			}
		}
	}
	if n < 3 {
		t.Fatalf("%d store packages found, want memory, dynamo and metricstore at least", n)
	}
}
