package logctx

import (
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/platform/jsontext"
)

// NewJSON is New over slog.NewJSONHandler(w, opts), the functions' logger.
// A record of plain attributes (strings, integers, finite floats, booleans,
// durations), the access line among them, is written by hand, byte for
// byte as slog's JSON handler writes it, from a pooled buffer in one write:
// through slog it was a tenth of a request's CPU (the float goes through
// encoding/json there, and the context's attributes through a copy of the
// record). Any other record, and every handler derived with WithAttrs or
// WithGroup, goes through slog's handler. Options other than Level
// (ReplaceAttr, AddSource) turn the hand-written path off.
func NewJSON(w io.Writer, opts *slog.HandlerOptions) *Handler {
	// One lock for both paths: slog's own lock does not cover our writes.
	lw := &lockedWriter{w: w}
	h := &Handler{Handler: slog.NewJSONHandler(lw, opts)}
	if opts == nil || (opts.ReplaceAttr == nil && !opts.AddSource) {
		h.out = lw
	}
	return h
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// writeJSON writes r and the context's attributes not in r (ctxAttrs) as
// slog's JSON handler does; false when the record holds a value it leaves
// to slog (nothing is written then).
func (h *Handler) writeJSON(r *slog.Record, ctxAttrs []slog.Attr) (bool, error) {
	if y := r.Time.Year(); !r.Time.IsZero() && (y < 0 || y >= 10000) {
		return false, nil
	}
	bp := linePool.Get().(*[]byte)
	defer linePool.Put(bp)
	b := append((*bp)[:0], '{')
	if !r.Time.IsZero() {
		b = append(b, `"time":"`...)
		b = appendRFC3339Nano(b, r.Time)
		b = append(b, `",`...)
	}
	b = append(b, `"level":`...)
	b = jsontext.AppendSlogString(b, r.Level.String())
	b = append(b, `,"msg":`...)
	b = jsontext.AppendSlogString(b, r.Message)
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		b, ok = appendAttr(b, a)
		return ok
	})
	for _, a := range ctxAttrs {
		if !ok {
			break
		}
		b, ok = appendAttr(b, a)
	}
	if !ok {
		*bp = b
		return false, nil
	}
	b = append(b, '}', '\n')
	*bp = b
	_, err := h.out.Write(b)
	return true, err
}

// appendAttr appends ,"key":value for the kinds written by hand.
func appendAttr(b []byte, a slog.Attr) ([]byte, bool) {
	if a.Key == "" {
		return b, false // slog drops an empty attribute: let it decide
	}
	b = jsontext.AppendSlogString(append(b, ','), a.Key)
	b = append(b, ':')
	v := a.Value
	switch v.Kind() {
	case slog.KindString:
		return jsontext.AppendSlogString(b, v.String()), true
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10), true
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10), true
	case slog.KindFloat64:
		f := v.Float64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, false
		}
		return jsontext.AppendFloat(b, f), true // encoding/json's, as slog's
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool()), true
	case slog.KindDuration:
		return strconv.AppendInt(b, int64(v.Duration()), 10), true
	}
	return b, false
}

// appendRFC3339Nano appends t as t.AppendFormat(b, time.RFC3339Nano) does,
// digit by digit for a time at UTC's offset (the functions' local time),
// through the layout interpreter otherwise.
func appendRFC3339Nano(b []byte, t time.Time) []byte {
	if _, off := t.Zone(); off != 0 {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	b, ok := jsontext.AppendDateTime(b, t)
	if !ok {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	if ns := t.Nanosecond(); ns != 0 {
		n := 9
		for ns%10 == 0 { // trailing zeros are dropped
			ns /= 10
			n--
		}
		b = jsontext.AppendDigits(append(b, '.'), ns, n)
	}
	return append(b, 'Z')
}
