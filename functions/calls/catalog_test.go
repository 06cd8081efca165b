package main

import (
	"log/slog"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/catalog/catalogtest"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
)

// TestServesItsCatalogRoutes: the handler serves exactly the routes that
// shared/platform/catalog gives the function, which infra's API Gateway routes,
// the dev server and the OpenAPI document are held to.
func TestServesItsCatalogRoutes(t *testing.T) {
	catalogtest.ServesFunction(t, "calls", func(m telemetry.Recorder) catalogtest.Lambda {
		return handler(deps{HTTP: httpapi.Config{Metrics: m, Log: slog.New(slog.DiscardHandler)}})
	})
}
