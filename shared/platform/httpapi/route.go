// Package httpapi is the HTTP floor every route group stands on: routes
// with their authentication scheme and error family, the middleware every
// request goes through (request ID, panics, JSON 404/405, authentication),
// JSON bodies, the one table from error kind to status, and the Lambda
// adapter. It knows no route group: studioapi and the base host's group packages list theirs.
package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Family is the error body shape of a route: the studio host's
// {message, errors} or the base host's {error_message} (docs/api.md,
// "Errors: the two shapes").
type Family int

const (
	// StudioErrors: {"message", "errors", "request_id"}; an unreadable
	// request is 400, an invalid one 422.
	StudioErrors Family = iota
	// BaseErrors: {"error_message", "request_id"}; every validation
	// error is 400.
	BaseErrors
)

// Scheme is how a route authenticates its caller. The middleware checks it
// before the handler runs, so a handler only sees a Caller it may serve.
type Scheme int

const (
	// AccountKey: an account-scoped API key in x-api-key (the studio host).
	AccountKey Scheme = iota
	// ProjectKey: an API key in x-api-key valid for the path's
	// {account_id}/{project_id} (account-scoped for any project of its
	// account, project-scoped for its own).
	ProjectKey
	// ChatKeys: ProjectKey plus an agent token (X-TOKEN) of that project.
	ChatKeys
	// ProjectScopedKey: a project-scoped API key in x-api-key; the path
	// names no project, the key does.
	ProjectScopedKey
	// ServiceKey: a project's service key in X-Service-Auth-Token.
	ServiceKey
	// EventsKey: a project's events key in X-Api-Key.
	EventsKey
	// InternalKey: the region's internal key in X-Internal-Key.
	InternalKey
	// Public: no key (documents such as the OpenAPI description).
	Public
)

// Caller is who a request comes from and the tenant it acts on.
type Caller struct {
	AccountID string
	ProjectID string             // "" for an account-wide request
	Key       voiceops.Principal // the key's principal (zero for internal and public routes)
	Agent     voiceops.Principal // the X-TOKEN's principal (ChatKeys only)
}

// Handler serves one route once its caller is authenticated; the error it
// returns is answered in the route's family.
type Handler func(w http.ResponseWriter, r *http.Request, c Caller) error

// Route is one route of a group: a Go 1.22 ServeMux pattern split into
// method and path, with how it authenticates and answers errors.
type Route struct {
	Method string
	Path   string
	Family Family
	Auth   Scheme
	Handle Handler
	// Create marks a create-like POST: it takes an Idempotency-Key
	// (guards.go). Set with Creates.
	Create bool
	// Deadline, when set, is the route's own request deadline, shorter
	// than the server's (Config.Deadline): a caller that gives up sooner
	// (Twilio's callbacks) is answered within it.
	Deadline time.Duration
}

// BaseRoute is a route of the base host (the base host): errors are
// {"error_message": ...}.
func BaseRoute(method, path string, auth Scheme, h Handler) Route {
	return Route{Method: method, Path: path, Family: BaseErrors, Auth: auth, Handle: h}
}

// Creates marks the route as create-like.
func (r Route) Creates() Route { r.Create = true; return r }

// Pattern is the route's ServeMux pattern, "METHOD /path".
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// familyOf tells which document a path that matched no route belongs to:
// the studio host lives under /v1/alert*, /v1/webhook* and /internal/v1/metric*, and
// the studio host's additions (/v1/metrics, /v1/silences, /v1/account, /console): the catalog's
// studio paths (shared/platform/catalog; family_catalog_test.go).
func familyOf(r *http.Request) Family {
	p := r.URL.Path
	for _, prefix := range []string{"/v1/alert", "/v1/webhook", "/internal/v1/metric", "/openapi", "/v1/metrics", "/v1/silences", "/console"} {
		if strings.HasPrefix(p, prefix) {
			return StudioErrors
		}
	}
	if p == "/" || p == "/v1/account" { // exactly: /v1/{account_id}/... is the base host's
		return StudioErrors
	}
	return BaseErrors
}
