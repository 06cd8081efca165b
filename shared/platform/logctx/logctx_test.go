package logctx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/logctx"
)

func TestLinesCarryTheContextsAttributes(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(logctx.New(slog.NewJSONHandler(&buf, nil))).With("fn", "alerts")
	ctx := logctx.With(context.Background(), slog.String("request_id", "req_1"))
	derived, cancel := context.WithCancel(ctx)
	defer cancel()
	// Added later, on the parent: lines logged with the derived context
	// carry it too (the caller is known only after authentication).
	logctx.With(ctx, slog.String("account_id", "acct_a"))
	log.InfoContext(derived, "one")
	log.InfoContext(ctx, "two", "request_id", "req_explicit")
	log.InfoContext(context.Background(), "three")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines: %s", len(lines), buf.String())
	}
	var one, two, three map[string]any
	for i, p := range []*map[string]any{&one, &two, &three} {
		if err := json.Unmarshal([]byte(lines[i]), p); err != nil {
			t.Fatal(err)
		}
	}
	if one["request_id"] != "req_1" || one["account_id"] != "acct_a" || one["fn"] != "alerts" {
		t.Errorf("line one %v: want the context's IDs and the logger's own attribute", one)
	}
	if two["request_id"] != "req_explicit" || strings.Count(lines[1], `"request_id"`) != 1 {
		t.Errorf("line two %s: the call's own request_id, once", lines[1])
	}
	if _, ok := three["request_id"]; ok {
		t.Errorf("line three %v: a context without attributes added some", three)
	}
}
