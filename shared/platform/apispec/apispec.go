// Package apispec holds the OpenAPI 3.1 document of the service (both hosts:
// alert rules, webhook endpoints and deliveries, the metric intake; chat,
// voice intake, conversation lists, concurrency, handoff state) and a
// validator that handler tests use to check that every response they
// receive matches it.
package apispec

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

//go:embed openapi.json
var document []byte

// Document returns the OpenAPI document (JSON). The caller gets its own copy.
func Document() []byte { return bytes.Clone(document) }

// Validator checks responses against the document. It is safe for concurrent
// use.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
	// mu serialises validations: kin-openapi does not promise that
	// validating against a shared document is free of data races.
	mu sync.Mutex
}

// NewValidator loads and validates the document and builds a router that
// matches requests on their method and path only, whatever their scheme and
// host (tests use httptest addresses, not the regional hosts).
func NewValidator() (*Validator, error) {
	doc, err := load()
	if err != nil {
		return nil, err
	}
	if !doc.IsOpenAPI31OrLater() {
		return nil, fmt.Errorf("apispec: document is OpenAPI %q, want 3.1", doc.OpenAPI)
	}
	// The document was loaded for the validator alone: dropping its servers
	// makes the router match on the path only.
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("apispec: building the router: %w", err)
	}
	return &Validator{doc: doc, router: router}, nil
}

// load parses and validates the embedded document.
func load() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(Document())
	if err != nil {
		return nil, fmt.Errorf("apispec: loading the document: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("apispec: invalid document: %w", err)
	}
	return doc, nil
}

// Check returns an error unless the response (status, header, body) that
// answered req is documented: the operation (method and path) exists, the
// status is listed for it, the X-Request-Id header is present, the body
// matches the schema of that status (no body where none is documented), and
// an error body's request_id equals the X-Request-Id header. req's body is
// neither read nor needed.
func (v *Validator) Check(req *http.Request, status int, header http.Header, body []byte) error {
	if req == nil || req.URL == nil {
		return errors.New("apispec: no request")
	}
	what := fmt.Sprintf("%s %s -> %d", req.Method, req.URL.Path, status)
	if header == nil {
		header = http.Header{}
	}
	rid := header.Get("X-Request-Id")
	if rid == "" {
		return fmt.Errorf("apispec: %s: response has no X-Request-Id header", what)
	}

	v.mu.Lock()
	defer v.mu.Unlock()

	route, pathParams, err := v.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("apispec: %s: operation not in the document: %w", what, err)
	}
	ref := route.Operation.Responses.Status(status)
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("apispec: %s: status %d is not documented for %s %s", what, status, route.Method, route.Path)
	}
	if len(ref.Value.Content) == 0 && len(body) > 0 {
		return fmt.Errorf("apispec: %s: the document has no body for this status, got %d bytes", what, len(body))
	}

	// Only the response is validated: the request is the test's own and its
	// body may be deliberately invalid.
	reqCopy := req.Clone(context.Background())
	reqCopy.Body = http.NoBody
	opts := &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	}
	opts.WithCustomSchemaErrorFunc(schemaErrorMessage)
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    reqCopy,
			PathParams: pathParams,
			Route:      route,
			Options:    &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: opts,
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return fmt.Errorf("apispec: %s: %w", what, err)
	}

	if status >= 400 {
		var e struct {
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			return fmt.Errorf("apispec: %s: error body: %w", what, err)
		}
		if e.RequestID != rid {
			return fmt.Errorf("apispec: %s: body request_id %q differs from X-Request-Id %q", what, e.RequestID, rid)
		}
	}
	return nil
}

// schemaErrorMessage words a schema error on one line: where, why and the
// value (shortened), instead of kin-openapi's dump of the whole schema.
func schemaErrorMessage(e *openapi3.SchemaError) string {
	value, _ := json.Marshal(e.Value)
	if len(value) > 200 {
		value = append(value[:200:200], "..."...)
	}
	return fmt.Sprintf("at /%s: %s (value %s)", strings.Join(e.JSONPointer(), "/"), e.Reason, value)
}
