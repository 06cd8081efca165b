package logctx_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/logctx"
)

// TestNewJSONWritesAsSlog holds NewJSON's hand-written lines to slog's JSON
// handler byte for byte: every record, with and without the context's
// attributes, must come out of both handlers the same.
func TestNewJSONWritesAsSlog(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 123456789, time.FixedZone("X", 3600))
	strs := []string{"", "plain", `quo"te\back`, "tab\tnl\nret\r", "ctl\b\f\x00\x1f", "<html>&amp;", "é ü 日本", "bad\xff\xfeutf8", "sep\u2028\u2029", "\u007f"}
	floats := []float64{0, 1, 0.25, 1.5e-7, 123456789.125, 1e21, -3.75, 1e-6, 12.345}
	var records []slog.Record
	for _, s := range strs {
		r := slog.NewRecord(at, slog.LevelInfo, s, 0)
		r.AddAttrs(slog.String(s+"k", s), slog.Int("n", -42), slog.Uint64("u", math.MaxUint64), slog.Bool("b", true), slog.Duration("d", 1500*time.Millisecond))
		records = append(records, r)
	}
	for _, f := range floats {
		r := slog.NewRecord(at, slog.LevelError, "request", 0)
		r.AddAttrs(slog.String("method", "GET"), slog.Float64("duration_ms", f))
		records = append(records, r)
	}
	// Left to slog: other kinds, and values it writes its own way.
	for _, a := range []slog.Attr{slog.Any("err", errors.New("boom")), slog.Time("t", at), slog.Group("g", "a", 1),
		slog.Float64("nan", math.NaN()), slog.Any("m", map[string]int{"a": 1}), {}, slog.String("", "x")} {
		r := slog.NewRecord(at, slog.LevelWarn, "other", 0)
		r.AddAttrs(slog.String("before", "x"), a)
		records = append(records, r)
	}
	records = append(records, slog.NewRecord(time.Time{}, slog.LevelDebug+1, "no time", 0),
		slog.NewRecord(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), slog.LevelInfo, "far", 0))
	ctxs := map[string]context.Context{
		"no attributes": context.Background(),
		"the request's": logctx.With(context.Background(), slog.String("request_id", "req_1"), slog.String("n", "shadowed"), slog.String("account_id", "acct_\"a")),
		"repeated keys": logctx.With(context.Background(), slog.String("k", "1"), slog.String("k", "2")),
	}
	for name, ctx := range ctxs {
		for i, r := range records {
			var want, got bytes.Buffer
			opts := &slog.HandlerOptions{Level: slog.LevelDebug}
			if err := logctx.New(slog.NewJSONHandler(&want, opts)).Handle(ctx, r.Clone()); err != nil {
				t.Fatal(err)
			}
			if err := logctx.NewJSON(&got, opts).Handle(ctx, r.Clone()); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%s, record %d:\n got %s\nwant %s", name, i, got.String(), want.String())
			}
		}
	}
}

// TestNewJSONDerivedHandlers: a handler with attributes or a group writes
// them (through slog), and the context's attributes still.
func TestNewJSONDerivedHandlers(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(logctx.NewJSON(&buf, nil)).With("fn", "alerts").WithGroup("g")
	log.InfoContext(logctx.With(context.Background(), slog.String("request_id", "req_1")), "hello", "k", "v")
	if got := strings.TrimSpace(buf.String()); !strings.Contains(got, `"fn":"alerts","g":{"k":"v","request_id":"req_1"}}`) {
		t.Errorf("line %s", got)
	}
}

// TestRFC3339NanoAsFormat: the access line's time is written as
// time.RFC3339Nano writes it, at any offset and precision.
func TestRFC3339NanoAsFormat(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("Z0", 0), time.FixedZone("E", 5*3600+1800), time.FixedZone("W", -11*3600)}
	times := []time.Time{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 100, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 120_000_000, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), time.Now()}
	for i := range 3000 {
		times = append(times, time.Unix(int64(i)*7919*104729, int64(i)*104729%1_000_000_000))
	}
	for _, at := range times {
		for _, z := range zones {
			r := slog.NewRecord(at.In(z), slog.LevelInfo, "m", 0)
			var want, got bytes.Buffer
			_ = slog.NewJSONHandler(&want, nil).Handle(context.Background(), r)
			_ = logctx.NewJSON(&got, nil).Handle(context.Background(), r)
			if got.String() != want.String() {
				t.Fatalf("%v:\n got %s\nwant %s", at.In(z), got.String(), want.String())
			}
		}
	}
}
