//go:build stack

package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/scripts/stack/apigw"
	"github.com/voiceops/opsapi/shared/platform/catalog"
)

// TestTemplateRoutesAreTheCatalogs: in the synthesized template, each
// host's HTTP API sends every catalog route of that host to the catalog's
// function (API Gateway's route selection, apigw), and a route of the
// other host alone to the $default route (the JSON 404).
func TestTemplateRoutesAreTheCatalogs(t *testing.T) {
	owner := map[catalog.Host]map[string]string{} // host → pattern → function
	for _, f := range catalog.Functions {
		for _, g := range f.Groups {
			if owner[g.Host] == nil {
				owner[g.Host] = map[string]string{}
			}
			for _, r := range g.Routes {
				owner[g.Host][r.Pattern()] = f.Name
			}
		}
	}
	hosts := 0
	for _, a := range st.Topology.APIs {
		i := slices.IndexFunc(catalog.Hosts, func(h catalog.Host) bool { return strings.HasSuffix(a.Name, "-"+string(h)) })
		if i < 0 {
			t.Errorf("API %s serves no catalog host", a.Name)
			continue
		}
		host := catalog.Hosts[i]
		hosts++
		router, err := apigw.NewRouter(a.Routes)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range catalog.Hosts {
			for _, r := range catalog.OnHost(h) {
				m, ok := router.Match(r.Method, r.SamplePath())
				want, mine := owner[host][r.Pattern()]
				switch {
				case !ok:
					t.Errorf("%s: %s matches no route and there is no $default", a.Name, r.Pattern())
				case mine && m.Function != want:
					t.Errorf("%s: %s goes to %s (%s), the catalog's function is %s", a.Name, r.Pattern(), m.Function, m.Key, want)
				case !mine && m.Key != "$default":
					t.Errorf("%s: %s of the %s host goes to %s (%s), not $default", a.Name, r.Pattern(), h, m.Function, m.Key)
				}
			}
		}
	}
	if hosts != len(catalog.Hosts) {
		t.Errorf("%d APIs serve the %d catalog hosts", hosts, len(catalog.Hosts))
	}
}
