// Package logctx carries log attributes in a request's context, so that
// every line logged with that context names the request (our request ID,
// API Gateway's and Lambda's, the account and project once known) without
// each call passing them. Handler adds them to every record.
package logctx

import (
	"context"
	"log/slog"
	"slices"
	"sync"
)

type ctxKey struct{}

// fields are the attributes of one request. Later additions (the caller,
// once authenticated) show on every line logged from then on, also with a
// context derived before they were added.
type fields struct {
	mu    sync.Mutex
	attrs []slog.Attr
	// inline holds a request's usual attributes (three IDs, the account
	// and the project) in the one allocation of the set.
	inline [6]slog.Attr
}

// With returns ctx carrying attrs besides those it already carries. A
// context that carries some already shares them: With on it adds to the
// same set.
func With(ctx context.Context, attrs ...slog.Attr) context.Context {
	f, ok := ctx.Value(ctxKey{}).(*fields)
	if !ok {
		f = &fields{}
		f.attrs = f.inline[:0]
		ctx = context.WithValue(ctx, ctxKey{}, f)
	}
	f.mu.Lock()
	f.attrs = append(f.attrs, attrs...)
	f.mu.Unlock()
	return ctx
}

// Handler adds the context's attributes to every record, except those the
// record already has (a call that passes request_id itself).
type Handler struct {
	slog.Handler
	out *lockedWriter // NewJSON's writer: records written by hand (json.go)
}

// New wraps h.
func New(h slog.Handler) *Handler { return &Handler{Handler: h} }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	var attrs []slog.Attr
	if f, _ := ctx.Value(ctxKey{}).(*fields); f != nil {
		f.mu.Lock()
		attrs = f.attrs[:len(f.attrs):len(f.attrs)] // appends after this copy go elsewhere
		f.mu.Unlock()
	}
	if h.out != nil {
		// The context's attributes the record has not (on the stack for a
		// request's usual few), the record's keys gathered in one pass.
		var keysBuf [8]string
		keys := keysBuf[:0]
		r.Attrs(func(a slog.Attr) bool { keys = append(keys, a.Key); return true })
		var buf [8]slog.Attr
		missing := buf[:0]
		for _, a := range attrs {
			if !slices.Contains(keys, a.Key) && !slices.ContainsFunc(missing, func(m slog.Attr) bool { return m.Key == a.Key }) {
				missing = append(missing, a)
			}
		}
		if done, err := h.writeJSON(&r, missing); done {
			return err
		}
	}
	for _, a := range attrs {
		if !hasKey(&r, a.Key) {
			r.AddAttrs(a)
		}
	}
	return h.Handler.Handle(ctx, r)
}

// hasKey reports whether r has an attribute called key.
func hasKey(r *slog.Record, key string) bool {
	have := false
	r.Attrs(func(b slog.Attr) bool { have = b.Key == key; return !have })
	return have
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{Handler: h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{Handler: h.Handler.WithGroup(name)}
}
