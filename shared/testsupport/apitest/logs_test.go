package apitest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/logctx"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
)

// Every line the handlers log during this suite, and every EMF line their
// metrics make, is kept; TestMain checks them all once the tests have run:
// no line holds a key or a signing secret, and every EMF line keeps the
// format's rules.

// syncBuffer collects lines written from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() == 0 { // nothing written (a fuzz run, say): no line, not one empty line
		return nil
	}
	return strings.Split(strings.TrimSuffix(b.buf.String(), "\n"), "\n")
}

var (
	suiteLogs    = &syncBuffer{}
	suiteEMF     = &syncBuffer{}
	suiteMetrics = emf.New(suiteEMF, time.Now)

	secretsMu sync.Mutex
	secrets   = []string{testInternalKey}
)

// suiteLogger is the handlers' logger in this suite: JSON lines, with the
// request IDs from the context, as the functions log.
func suiteLogger() *slog.Logger {
	return slog.New(logctx.NewJSON(suiteLogs, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// noteSecrets adds keys the suite made to those no log line may hold.
func noteSecrets(s ...string) {
	secretsMu.Lock()
	defer secretsMu.Unlock()
	secrets = append(secrets, s...)
}

// flushEach flushes the suite's metrics after each request, as a function
// does after each invocation.
func flushEach(h http.Handler) http.Handler { return flushing(suiteMetrics, h) }

// flushing flushes m after each request.
func flushing(m *emf.Batch, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { _ = m.Flush() }()
		h.ServeHTTP(w, r)
	})
}

// benchSinks are a benchmark's logger and metrics: the same lines, not
// kept in the suite's buffers, which would grow by hundreds of megabytes
// and weigh on the figures. They are written to /dev/null, a write costing
// its system call only; with APITEST_BENCH_SINK=pipe, to a pipe that
// another process drains, as a function's stdout and stderr are pipes the
// Lambda runtime reads (each write then wakes the reader, on the same
// cores: docs/performance.md, "One write per invocation").
func benchSinks(tb testing.TB) (*slog.Logger, *emf.Batch) {
	var w io.WriteCloser
	if os.Getenv("APITEST_BENCH_SINK") == "pipe" {
		drain := exec.Command("cat")
		drain.Stdout = io.Discard
		in, err := drain.StdinPipe()
		if err != nil {
			tb.Fatal(err)
		}
		if err := drain.Start(); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = drain.Wait() })
		w = in
	} else {
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			tb.Fatal(err)
		}
		w = null
	}
	tb.Cleanup(func() { _ = w.Close() })
	return slog.New(logctx.NewJSON(w, &slog.HandlerOptions{Level: slog.LevelDebug})), emf.New(w, time.Now)
}

// Anything shaped like a full key of any kind, and any signing secret.
var secretShapes = regexp.MustCompile(`vo_[a-z]+_[a-z]{2}_[0-9A-Za-z]{30,}|whsec_[A-Za-z0-9+/=]{8,}`)

func TestMain(m *testing.M) {
	slog.SetDefault(suiteLogger())
	code := m.Run()
	if code == 0 {
		if err := checkSuiteLines(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// holdsSecret reports a line holding a known secret or anything shaped
// like a key or a signing secret.
func holdsSecret(l string, known []string) error {
	if m := secretShapes.FindString(l); m != "" {
		return fmt.Errorf("a log line holds a key or a secret (%.12s...): %s", m, l)
	}
	for _, s := range known {
		if s != "" && strings.Contains(l, s) {
			return fmt.Errorf("a log line holds a key the suite made (%.12s...): %s", s, l)
		}
	}
	return nil
}

func TestSecretCheckCatchesKeysAndSecrets(t *testing.T) {
	h := newHarness(t)
	rule := h.do("POST", "/v1/webhook-endpoints", h.keyA, map[string]any{
		"name": "x", "url": "https://example.com/hook", "event_types": []string{"alerts.triggered"},
	}).Expect(t, http.StatusCreated).JSON(t)
	secret, _ := rule["signing_secret"].(string)
	for _, l := range []string{
		`{"msg":"x","key":"` + h.keyA + `"}`,
		`{"msg":"x","error":"bad key ` + h.projKey + `"}`,
		`level=INFO msg=x secret=` + secret,
		`{"msg":"x","k":"` + testInternalKey + `"}`,
	} {
		if holdsSecret(l, []string{testInternalKey}) == nil {
			t.Errorf("the check let through %s", l)
		}
	}
	if err := holdsSecret(`{"msg":"request","request_id":"req_abc","account_id":"acct_a"}`, []string{testInternalKey}); err != nil {
		t.Errorf("an access line refused: %v", err)
	}
}

func checkSuiteLines() error {
	logs := suiteLogs.lines()
	access := 0
	secretsMu.Lock()
	known := append([]string(nil), secrets...)
	secretsMu.Unlock()
	for _, l := range logs {
		if err := holdsSecret(l, known); err != nil {
			return err
		}
		if strings.Contains(l, `"msg":"request"`) {
			access++
		}
	}
	// The metrics' stream holds the access lines too, each before its
	// request's metric lines (lambdamain.AccessLogger).
	lines, requests := 0, 0
	for _, l := range suiteEMF.lines() {
		if !strings.Contains(l, `"_aws":`) {
			if !strings.Contains(l, `"msg":"request"`) {
				return fmt.Errorf("a line on the metrics' stream is neither an access line nor an EMF line: %s", l)
			}
			if err := holdsSecret(l, known); err != nil {
				return err
			}
			access++
			continue
		}
		if err := emf.Validate([]byte(l)); err != nil {
			return fmt.Errorf("EMF line %s: %v", l, err)
		}
		var doc map[string]any
		_ = json.Unmarshal([]byte(l), &doc)
		if n, ok := doc[telemetry.Requests.Name].(float64); ok {
			requests += int(n)
		}
		lines++
	}
	// Non-vacuous: the whole suite's requests did log, and did make
	// metrics (a -run of some tests checks what they wrote).
	whole := flag.Lookup("test.run").Value.String() == ""
	if whole && access < 100 {
		return fmt.Errorf("only %d access lines in %d log lines: the suite's logs were not captured", access, len(logs))
	}
	if whole && requests < access/2 {
		return fmt.Errorf("EMF lines count %d requests for %d access lines", requests, access)
	}
	fmt.Fprintf(os.Stderr, "apitest: %d log lines and %d access lines hold no key or secret; %d EMF lines (%d requests) keep the format's rules\n", len(logs), access, lines, requests)
	return nil
}
