package main

import (
	"io"
	"log/slog"
	"os"

	"github.com/voiceops/opsapi/shared/logctx"
)

// devLogger writes the server's log, one access line per request among
// it: text on a terminal, JSON lines otherwise (as a deployed function
// writes them), each line carrying its request's IDs (shared/logctx).
func devLogger(w io.Writer) *slog.Logger {
	if isTerminal(w) {
		return slog.New(logctx.New(slog.NewTextHandler(w, nil)))
	}
	return slog.New(logctx.New(slog.NewJSONHandler(w, nil)))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
