package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// StatusOf is the one table from error kind to HTTP status. The base host differs
// from the studio host only for invalid input: the base host answers every validation error
// with 400 (docs/api.md, "Errors: the two shapes").
func StatusOf(kind voiceops.Kind, family Family) int {
	switch kind {
	case voiceops.KindBadRequest:
		return http.StatusBadRequest
	case voiceops.KindInvalid:
		if family == BaseErrors {
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
	case voiceops.KindRateLimited:
		return http.StatusTooManyRequests
	case voiceops.KindKeyReused:
		return http.StatusUnprocessableEntity
	}
	return http.StatusInternalServerError
}

// StudioErrorBody is the error body of the studio host. Errors is present (possibly empty)
// on 400 and 422 only.
type StudioErrorBody struct {
	Message   string                 `json:"message"`
	Errors    *[]voiceops.FieldError `json:"errors,omitempty"`
	RequestID string                 `json:"request_id"`
}

// BaseErrorBody is the error body of the base host.
type BaseErrorBody struct {
	ErrorMessage string `json:"error_message"`
	RequestID    string `json:"request_id"`
}

// WriteError answers err in the shape of the family. Internal errors are
// logged with the request ID and shown only as "internal error".
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, fam Family, err error) {
	var e *voiceops.Error
	if !errors.As(err, &e) {
		e = voiceops.Internal(err)
	}
	status := StatusOf(e.Kind, fam)
	rid := RequestID(r.Context())
	msg := e.Message
	if status == http.StatusInternalServerError {
		log.ErrorContext(r.Context(), "internal error", "request_id", rid, "method", r.Method, "path", r.URL.Path, "error", err)
		msg = "internal error"
	}
	if fam == BaseErrors {
		WriteJSON(w, status, BaseErrorBody{ErrorMessage: baseMessage(msg, e.Fields), RequestID: rid})
		return
	}
	body := StudioErrorBody{Message: msg, RequestID: rid}
	if status == http.StatusBadRequest || status == http.StatusUnprocessableEntity {
		fields := e.Fields
		if fields == nil {
			fields = []voiceops.FieldError{}
		}
		body.Errors = &fields
	}
	WriteJSON(w, status, body)
}

// baseMessage folds field errors into the single message the base host carries.
func baseMessage(msg string, fields []voiceops.FieldError) string {
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

// BadRequest is a 400 naming one field (or query parameter).
func BadRequest(field, message string) *voiceops.Error {
	return &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "invalid request", Fields: []voiceops.FieldError{{Field: field, Message: message}}}
}

// NotFoundAs names the missing resource in a not-found error.
func NotFoundAs(err error, what string) error {
	if errors.Is(err, voiceops.ErrNotFound) {
		return voiceops.Errorf(voiceops.KindNotFound, "%s not found", what)
	}
	return err
}
