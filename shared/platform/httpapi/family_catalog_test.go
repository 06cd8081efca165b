package httpapi

import (
	"net/http/httptest"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/catalog"
)

// TestPathFamilyIsTheCatalogHosts: where one server serves both hosts (the
// dev server), a request that matched no route is answered in the error
// shape of the host whose catalog routes own its path: every catalog path
// served on one host alone is its host's family, and an unknown method
// under it too.
func TestPathFamilyIsTheCatalogHosts(t *testing.T) {
	hosts := map[string]map[catalog.Host]bool{}
	for _, h := range catalog.Hosts {
		for _, r := range catalog.OnHost(h) {
			if hosts[r.SamplePath()] == nil {
				hosts[r.SamplePath()] = map[catalog.Host]bool{}
			}
			hosts[r.SamplePath()][h] = true
		}
	}
	want := map[catalog.Host]Family{catalog.Studio: StudioErrors, catalog.Base: BaseErrors}
	for path, on := range hosts {
		if len(on) != 1 {
			continue // on both hosts (/openapi.json): the path cannot tell
		}
		for h := range on {
			if got := familyOf(httptest.NewRequest("OPTIONS", path, nil)); got != want[h] {
				t.Errorf("%s (%s host): no-route answers in family %v, want %v", path, h, got, want[h])
			}
		}
	}
}
