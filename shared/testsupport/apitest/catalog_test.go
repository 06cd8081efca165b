package apitest

import (
	"slices"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/catalog"
	"github.com/voiceops/opsapi/shared/platform/catalog/catalogtest"
)

// testedElsewhere are the catalog groups this suite does not serve: the
// OpenAPI parts and their reference (shared/platform/apidocs) and Twilio's signed
// callbacks (shared/calls/twilioapi/callbackstest, on memory and DynamoDB).
var testedElsewhere = []string{catalog.StudioDocs.Name, catalog.BaseDocs.Name, catalog.TwilioCallbacks.Name}

// TestTheSuiteServesTheCatalog: the handler every test here calls (All)
// serves each route of the other catalog groups by its own pattern, and
// nothing else of the catalog, so that a route added to the catalog is a
// route this suite can test.
func TestTheSuiteServesTheCatalog(t *testing.T) {
	var routes []catalog.Route
	for _, g := range catalog.Groups() {
		if !slices.Contains(testedElsewhere, g.Name) {
			routes = append(routes, g.Routes...)
		}
	}
	d := newHarness(t).deps
	rec := &catalogtest.Routes{}
	d.Telemetry = rec
	catalogtest.ServesHTTP(t, "apitest.All", routes, All(d), rec)
}
