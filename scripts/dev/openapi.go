package main

import (
	"net/http"

	"github.com/voiceops/opsapi/shared/platform/apidocs"
	"github.com/voiceops/opsapi/shared/platform/apispec"
)

// docs is the rendered reference of the whole document: the dev server
// serves both hosts.
var docs = apidocs.Render(apispec.Document())

// withOpenAPI serves the OpenAPI document at exactly /openapi.json, its
// rendered reference at exactly /docs, and hands every other request to api as it came. No ServeMux in front: a
// ServeMux cleans a path with // or .. and redirects it (307, text/html,
// no request ID) before the API's own guard could answer its JSON 404.
func withOpenAPI(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/openapi.json" && r.URL.RawPath == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			apidocs.DocumentHeaders(w.Header())
			_, _ = w.Write(apispec.Document())
			return
		}
		if r.URL.Path == "/docs" && r.URL.RawPath == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			apidocs.PageHeaders(w.Header())
			_, _ = w.Write(docs)
			return
		}
		api.ServeHTTP(w, r)
	})
}
