package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// statusOf is the one table from error kind to HTTP status. Doc 2 differs
// from doc 1 only for invalid input: doc 2 answers every validation error
// with 400 (DECISIONS.md, "Errors").
func statusOf(kind voiceops.Kind, family family) int {
	switch kind {
	case voiceops.KindBadRequest:
		return http.StatusBadRequest
	case voiceops.KindInvalid:
		if family == doc2 {
			return http.StatusBadRequest
		}
		return http.StatusUnprocessableEntity
	case voiceops.KindUnauthorized:
		return http.StatusUnauthorized
	case voiceops.KindForbidden:
		return http.StatusForbidden
	case voiceops.KindNotFound:
		return http.StatusNotFound
	case voiceops.KindConflict:
		return http.StatusConflict
	case voiceops.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case voiceops.KindGone:
		return http.StatusGone
	case voiceops.KindUnimplemented:
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}

// family is the error body shape: doc 1's {message, errors} or doc 2's
// {error_message}.
type family int

const (
	doc1 family = iota
	doc2
)

// doc1Error is the error body of doc 1. Errors is present (possibly empty)
// on 400 and 422 only.
type doc1Error struct {
	Message   string                 `json:"message"`
	Errors    *[]voiceops.FieldError `json:"errors,omitempty"`
	RequestID string                 `json:"request_id"`
}

// doc2Error is the error body of doc 2.
type doc2Error struct {
	ErrorMessage string `json:"error_message"`
	RequestID    string `json:"request_id"`
}

// writeError answers err in the shape of the family. Internal errors are
// logged with the request ID and shown only as "internal error".
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, fam family, err error) {
	var e *voiceops.Error
	if !errors.As(err, &e) {
		e = voiceops.Internal(err)
	}
	status := statusOf(e.Kind, fam)
	rid := requestID(r.Context())
	msg := e.Message
	if status == http.StatusInternalServerError {
		log.ErrorContext(r.Context(), "internal error", "request_id", rid, "method", r.Method, "path", r.URL.Path, "error", err)
		msg = "internal error"
	}
	if fam == doc2 {
		writeJSON(w, status, doc2Error{ErrorMessage: doc2Message(msg, e.Fields), RequestID: rid})
		return
	}
	body := doc1Error{Message: msg, RequestID: rid}
	if status == http.StatusBadRequest || status == http.StatusUnprocessableEntity {
		fields := e.Fields
		if fields == nil {
			fields = []voiceops.FieldError{}
		}
		body.Errors = &fields
	}
	writeJSON(w, status, body)
}

// doc2Message folds field errors into the single message doc 2 carries.
func doc2Message(msg string, fields []voiceops.FieldError) string {
	for i, f := range fields {
		if i == 0 {
			msg += ": "
		} else {
			msg += "; "
		}
		msg += f.Field + " " + f.Message
	}
	return msg
}

func badRequest(field, message string) *voiceops.Error {
	return &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "invalid request", Fields: []voiceops.FieldError{{Field: field, Message: message}}}
}
