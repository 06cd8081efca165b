package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/logctx"
)

// lockedBuffer is the server's stderr: written from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestDevServerPrintsAccessLinesAndServesMetrics(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	ready := make(chan Credentials, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, func(string) string { return "" }, io.Discard, &stderr, ready)
	}()
	var creds Credentials
	select {
	case creds = <-ready:
	case err := <-done:
		t.Fatalf("dev server exited: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("dev server not ready after 60s")
	}
	defer func() { cancel(); <-done }()

	key := creds.Accounts[0].APIKey
	req, _ := http.NewRequest("GET", creds.AgentStudioURL+"/v1/alert-rules", nil)
	req.Header.Set("x-api-key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	rid := res.Header.Get("X-Request-Id")

	// The access line: JSON (stderr is no terminal here), with the IDs.
	var access map[string]any
	for _, l := range strings.Split(stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" && m["request_id"] == rid {
			access = m
		}
	}
	if access == nil {
		t.Fatalf("no JSON access line with request_id %s in:\n%s", rid, stderr.String())
	}
	for k, want := range map[string]any{
		"method": "GET", "route": "GET /v1/alert-rules", "status": 200.0, "host": "studio",
		"account_id": creds.Accounts[0].AccountID,
	} {
		if access[k] != want {
			t.Errorf("access line %s = %v, want %v (%v)", k, access[k], want, access)
		}
	}
	if strings.Contains(stderr.String(), key) {
		t.Errorf("the log holds the API key")
	}

	res, err = http.Get(creds.AgentStudioURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Errorf("/metrics Content-Type %q", res.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`voiceops_requests_total{host="studio",route="GET /v1/alert-rules"} 1`,
		`voiceops_latency_milliseconds_count{host="studio",route="GET /v1/alert-rules"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
}

// TestNullDeviceIsNoTerminal: output sent to /dev/null (a load test's)
// gets the JSON lines, not the terminal's text.
func TestNullDeviceIsNoTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) || isTerminal(&bytes.Buffer{}) {
		t.Error("the null device or a buffer taken for a terminal")
	}
	var buf bytes.Buffer
	log, _ := devLogger(&buf)
	log.Info("request", "status", 200)
	if !json.Valid(buf.Bytes()) {
		t.Errorf("not a JSON line: %s", buf.String())
	}
}

// TestLogLinesToAFileAreBatched: lines to a file are written together,
// within the window of the first, and Flush writes what waits at once.
func TestLogLinesToAFileAreBatched(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "dev.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size := func() int64 {
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	b := newBatchedLines(f, time.Hour)
	log := slog.New(logctx.NewJSON(b, nil))
	log.Info("one")
	log.Info("two")
	if n := size(); n != 0 {
		t.Fatalf("%d bytes written before the window ended", n)
	}
	b.Flush()
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(got)), "\n"); len(lines) != 2 || !json.Valid([]byte(lines[1])) {
		t.Fatalf("after Flush: %q", got)
	}
	// With a short window the lines reach the file unasked.
	b = newBatchedLines(f, 10*time.Millisecond)
	slog.New(logctx.NewJSON(b, nil)).Info("three")
	deadline := time.Now().Add(5 * time.Second)
	for size() == int64(len(got)) {
		if time.Now().After(deadline) {
			t.Fatal("the line was not written within 5 s of a 10 ms window")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
