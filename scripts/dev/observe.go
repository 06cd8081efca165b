package main

import (
	"bufio"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/platform/logctx"
)

// devLogger writes the server's log, one access line per request among
// it: text on a terminal, JSON lines otherwise (as a deployed function
// writes them), each line carrying its request's IDs (shared/platform/logctx).
//
// To a file or a pipe, lines are written in batches (batchedLines): one
// write per batch, not one per request. flush writes what is waiting; the
// server calls it as it stops.
func devLogger(w io.Writer) (log *slog.Logger, flush func()) {
	if isTerminal(w) {
		return slog.New(logctx.New(slog.NewTextHandler(w, nil))), func() {}
	}
	if f, ok := w.(*os.File); ok {
		b := newBatchedLines(f, logBatchWindow)
		return slog.New(logctx.NewJSON(b, nil)), b.Flush
	}
	return slog.New(logctx.NewJSON(w, nil)), func() {}
}

// logBatchWindow is how long a log line may wait before it is written: short
// enough for a person, or a script polling the log, not to notice.
const logBatchWindow = 50 * time.Millisecond

// batchedLines buffers what is written to it and writes it out within
// window of the first unwritten line, or as soon as 32 KiB wait. Under
// load (thousands of access lines a second) that is a write every few
// hundred lines instead of a system call per request.
type batchedLines struct {
	window time.Duration
	mu     sync.Mutex
	out    *bufio.Writer
	armed  bool // a flush is scheduled
}

func newBatchedLines(w io.Writer, window time.Duration) *batchedLines {
	return &batchedLines{window: window, out: bufio.NewWriterSize(w, 32<<10)}
}

func (b *batchedLines) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.armed {
		b.armed = true
		time.AfterFunc(b.window, b.Flush)
	}
	return b.out.Write(p)
}

// Flush writes what is waiting.
func (b *batchedLines) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = false
	_ = b.out.Flush()
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
