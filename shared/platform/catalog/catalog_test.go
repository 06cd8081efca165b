package catalog_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/alerts/console"
	"github.com/voiceops/opsapi/shared/alerts/studioapi"
	"github.com/voiceops/opsapi/shared/calls/outboundapi"
	"github.com/voiceops/opsapi/shared/calls/twilioapi"
	"github.com/voiceops/opsapi/shared/conversations/chatapi"
	"github.com/voiceops/opsapi/shared/conversations/conversationsapi"
	"github.com/voiceops/opsapi/shared/conversations/eventsapi"
	"github.com/voiceops/opsapi/shared/conversations/voiceapi"
	"github.com/voiceops/opsapi/shared/platform/apidocs"
	"github.com/voiceops/opsapi/shared/platform/catalog"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

// code is each group's Routes() as the code lists them, by catalog name.
// A new group is one line here (and its entry in the catalog).
var code = map[string][]httpapi.Route{
	"studioapi.Alerts":               (&studioapi.Alerts{}).Routes(),
	"studioapi.Webhooks":             (&studioapi.Webhooks{}).Routes(),
	"studioapi.Intake":               (&studioapi.Intake{}).Routes(),
	"console.Routes":                 console.Routes(),
	"apidocs.Routes(Studio)":         apidocs.Routes(apidocs.Studio),
	"apidocs.Routes(Base)":           apidocs.Routes(apidocs.Base),
	"chatapi.Chat":                   (&chatapi.Chat{}).Routes(),
	"voiceapi.Voice":                 (&voiceapi.Voice{}).Routes(),
	"voiceapi.DNI":                   (&voiceapi.DNI{}).Routes(),
	"eventsapi.Events":               (&eventsapi.Events{}).Routes(),
	"conversationsapi.Conversations": (&conversationsapi.Conversations{}).Routes(),
	"conversationsapi.Concurrency":   (&conversationsapi.Concurrency{}).Routes(),
	"conversationsapi.Handoff":       (&conversationsapi.Handoff{}).Routes(),
	"outboundapi.Outbound":           (&outboundapi.Outbound{}).Routes(),
	"twilioapi.Callbacks":            (&twilioapi.Callbacks{}).Routes(),
}

func patterns(rs []catalog.Route) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Pattern())
	}
	slices.Sort(out)
	return out
}

// TestGroupsAreTheCodesRoutes: each catalog group lists exactly the
// method+path routes of its Routes() in the code, and the error family of
// each route is its host's.
func TestGroupsAreTheCodesRoutes(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range catalog.Groups() {
		if seen[g.Name] {
			continue // a group may only be mounted by one function: TestCatalogIsConsistent
		}
		seen[g.Name] = true
		routes, ok := code[g.Name]
		if !ok {
			t.Errorf("catalog group %s: add its Routes() to code in catalog_test.go", g.Name)
			continue
		}
		var got []string
		for _, r := range routes {
			got = append(got, r.Pattern())
			if want := hostFamily[g.Host]; r.Family != want {
				t.Errorf("%s: %s answers errors in family %d, its host %s's is %d", g.Name, r.Pattern(), r.Family, g.Host, want)
			}
		}
		slices.Sort(got)
		if want := patterns(g.Routes); !slices.Equal(got, want) {
			t.Errorf("%s: Routes() serves\n\t%s\nthe catalog lists\n\t%s", g.Name, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
		}
	}
	for name := range code {
		if !seen[name] {
			t.Errorf("%s has routes but no function of the catalog mounts it", name)
		}
	}
}

var hostFamily = map[catalog.Host]httpapi.Family{catalog.Studio: httpapi.StudioErrors, catalog.Base: httpapi.BaseErrors}

// TestEveryRoutesFunctionIsInTheCatalog reads the source of shared/: every
// method or function named Routes that returns []httpapi.Route is a group
// the catalog names, so a new group cannot be served without its entry.
func TestEveryRoutesFunctionIsInTheCatalog(t *testing.T) {
	names := map[string]bool{}
	for _, g := range catalog.Groups() {
		names[strings.SplitN(g.Name, "(", 2)[0]] = true
	}
	fset := token.NewFileSet()
	found := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "Routes" || fn.Type.Results == nil || len(fn.Type.Results.List) != 1 {
				continue
			}
			if res, ok := fn.Type.Results.List[0].Type.(*ast.ArrayType); !ok || !isRouteType(res.Elt, f.Name.Name) {
				continue
			}
			name := f.Name.Name + ".Routes"
			if fn.Recv != nil {
				recv := fn.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					name = f.Name.Name + "." + id.Name
				}
			}
			found++
			if !names[name] {
				t.Errorf("%s: %s lists routes the catalog does not name (add the group to shared/platform/catalog)", fset.Position(fn.Pos()), name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < len(code)-1 { // apidocs.Routes is two groups
		t.Errorf("found %d Routes functions in shared/, the catalog has %d groups: is the walk reading the source?", found, len(code))
	}
}

// isRouteType reports whether e is httpapi.Route (or Route inside httpapi).
func isRouteType(e ast.Expr, pkg string) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "httpapi" && e.Sel.Name == "Route"
	case *ast.Ident:
		return pkg == "httpapi" && e.Name == "Route"
	}
	return false
}

var (
	validPath   = regexp.MustCompile(`^(/[A-Za-z0-9._~-]+|/\{[A-Za-z_][A-Za-z0-9_]*\})*(/\{[A-Za-z_][A-Za-z0-9_]*\.\.\.\})?$`)
	validMethod = regexp.MustCompile(`^(GET|POST|PUT|PATCH|DELETE)$`)
	validName   = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// TestCatalogIsConsistent: names are unique, each group is mounted by one
// function and serves one host, paths are ServeMux paths API Gateway
// takes, and no two routes of a host are the same pattern.
func TestCatalogIsConsistent(t *testing.T) {
	functions, groups := map[string]bool{}, map[string]string{}
	byHost := map[catalog.Host]map[string]string{}
	for _, f := range catalog.Functions {
		if !validName.MatchString(f.Name) || functions[f.Name] {
			t.Errorf("function %q: a name must be a functions/ directory, listed once", f.Name)
		}
		functions[f.Name] = true
		if len(f.Groups) == 0 {
			t.Errorf("function %s has no group", f.Name)
		}
		if got, ok := catalog.Lookup(f.Name); !ok || got.Name != f.Name {
			t.Errorf("Lookup(%q) = %v, %v", f.Name, got.Name, ok)
		}
		for _, g := range f.Groups {
			if other, dup := groups[g.Name]; dup {
				t.Errorf("group %s is mounted by %s and %s", g.Name, other, f.Name)
			}
			groups[g.Name] = f.Name
			if !slices.Contains(catalog.Hosts, g.Host) {
				t.Errorf("group %s: unknown host %q", g.Name, g.Host)
			}
			if len(g.Routes) == 0 {
				t.Errorf("group %s has no route", g.Name)
			}
			if byHost[g.Host] == nil {
				byHost[g.Host] = map[string]string{}
			}
			for _, r := range g.Routes {
				if !validMethod.MatchString(r.Method) || !validPath.MatchString(r.Path) || r.Path == "" {
					t.Errorf("group %s: route %q is not METHOD /path[/{rest...}]", g.Name, r.Pattern())
				}
				if other, dup := byHost[g.Host][r.Pattern()]; dup {
					t.Errorf("%s host: %s is in both %s and %s", g.Host, r.Pattern(), other, g.Name)
				}
				byHost[g.Host][r.Pattern()] = g.Name
			}
		}
	}
	if _, ok := catalog.Lookup("no-such-function"); ok {
		t.Error("Lookup found a function that is not listed")
	}
	for _, h := range catalog.Hosts {
		if len(catalog.OnHost(h)) != len(byHost[h]) {
			t.Errorf("OnHost(%s) lists %d routes, the groups %d", h, len(catalog.OnHost(h)), len(byHost[h]))
		}
	}
}

func TestSamplePath(t *testing.T) {
	for path, want := range map[string]string{
		"/v1/alert-rules":                    "/v1/alert-rules",
		"/{version}/{account_id}/chat/close": "/x/x/chat/close",
		"/console/{file...}":                 "/console/x",
	} {
		if got := (catalog.Route{Method: "GET", Path: path}).SamplePath(); got != want {
			t.Errorf("SamplePath(%s) = %s, want %s", path, got, want)
		}
	}
}
