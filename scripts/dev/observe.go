package main

import (
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/voiceops/opsapi/shared/platform/logctx"
)

// devLogger writes the server's log, one access line per request among
// it: text on a terminal, JSON lines otherwise (as a deployed function
// writes them), each line carrying its request's IDs (shared/platform/logctx).
func devLogger(w io.Writer) *slog.Logger {
	if isTerminal(w) {
		return slog.New(logctx.New(slog.NewTextHandler(w, nil)))
	}
	return slog.New(logctx.NewJSON(w, nil))
}

// isTerminal reports whether w is a character device other than the null
// device: output sent to /dev/null (a load test's) is not a terminal, and
// takes the JSON lines' faster path (logctx.NewJSON).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// withMetrics serves the process's metrics (Prometheus text) at exactly
// GET /metrics and hands every other request to next as it came (no
// ServeMux: see withOpenAPI).
func withMetrics(metrics http.Handler, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && r.URL.RawPath == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			metrics.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
