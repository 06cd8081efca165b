// Package conversationsapi serves the base host's groups (doc 2) that read
// a project's conversations: the conversations lists (v3 and v1), the
// concurrency series and the handoff state. It is apart from
// shared/baseapi, whose groups run the conversation engine, so that
// functions/conversations links no engine, agents or hooks. Each group is
// a type holding only the interfaces it uses; its Routes method lists
// every route with its authentication scheme (shared/httpapi).
package conversationsapi

import "github.com/voiceops/opsapi/shared/httpapi"

// doc2 is a route of doc 2: errors are {"error_message": ...}.
func doc2(method, path string, auth httpapi.Scheme, h httpapi.Handler) httpapi.Route {
	return httpapi.Route{Method: method, Path: path, Family: httpapi.Doc2, Auth: auth, Handle: h}
}
