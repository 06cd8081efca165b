// Package voiceops is the domain of the operations API: its resources, their
// validation, the errors every layer speaks and the interfaces of the stores.
// It imports nothing from AWS or HTTP.
package voiceops

import (
	"errors"
	"fmt"
)

// Kind classifies an error so that the transport can map it to a status in one
// place (shared/platform/httpapi/errors.go) without knowing where it came from.
type Kind int

const (
	KindInternal      Kind = iota // a failure of ours: 500, details only in logs
	KindBadRequest                // the request cannot be read: 400
	KindInvalid                   // readable but invalid: 422 (the studio host) / 400 (the base host)
	KindUnauthorized              // missing, malformed, unknown or wrong-kind key: 401
	KindForbidden                 // valid key without rights on the target: 403
	KindNotFound                  // no such resource for this caller: 404
	KindConflict                  // a limit is reached: 409
	KindTooLarge                  // body over the size limit: 413
	KindGone                      // the resource has ended: 410
	KindUnimplemented             // a recognised but unsupported combination: 501
	KindRateLimited               // the key's rate limit is reached: 429
	KindKeyReused                 // an Idempotency-Key sent with another request: 422 (both docs)
)

// FieldError names one invalid field and what is wrong with it.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is the error type of the domain. Message is safe to show to callers;
// Err, when set, is the underlying cause and is only logged.
type Error struct {
	Kind    Kind
	Message string
	Fields  []FieldError
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Message, e.Err)
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds a domain error of the given kind.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Internal wraps a cause as an internal error: callers see "internal error".
func Internal(err error) *Error {
	return &Error{Kind: KindInternal, Message: "internal error", Err: err}
}

// KindOf returns the kind of err; errors that are not *Error are internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// Common errors the stores return. They are values so tests can compare kinds.
var (
	ErrNotFound         = &Error{Kind: KindNotFound, Message: "not found"}
	ErrRuleLimit        = &Error{Kind: KindConflict, Message: fmt.Sprintf("the account already has the maximum of %d alert rules", MaxRulesPerAccount)}
	ErrEndpointLimit    = &Error{Kind: KindConflict, Message: fmt.Sprintf("the account already has the maximum of %d webhook endpoints", MaxEndpointsPerAccount)}
	ErrProjectNotFound  = &Error{Kind: KindInvalid, Message: "validation failed", Fields: []FieldError{{Field: "project_id", Message: "no such project in this account"}}}
	ErrConflictingWrite = &Error{Kind: KindConflict, Message: "the resource was changed by another request; retry"}
	ErrAlreadyExists    = &Error{Kind: KindConflict, Message: "already exists"}
)

// Invalid returns a 422-kind error listing the given field errors.
func Invalid(fields ...FieldError) *Error {
	return &Error{Kind: KindInvalid, Message: "validation failed", Fields: fields}
}
