package lambdas

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestIsErrorPayload(t *testing.T) {
	for out, want := range map[string]bool{
		`{"errorMessage":"boom","errorType":"errorString"}`:                 true,
		`{"errorMessage":"boom","errorType":"x","stackTrace":[]}`:           true,
		`{"statusCode":500,"body":"{}","errorMessage":"x","errorType":"y"}`: false, // a response that happens to carry the names
		`{"statusCode":200,"body":"ok"}`:                                    false,
		`{"batchItemFailures":[]}`:                                          false,
		`null`:                                                              false,
		`Task timed out after 10.00 seconds`:                                false,
	} {
		if got := isErrorPayload([]byte(out)); got != want {
			t.Errorf("isErrorPayload(%s) = %v, want %v", out, got, want)
		}
	}
}

// TestCloseStopsTheFunctionsProcesses: Close stops each environment's RIE
// and the process the RIE started (the function), and an invocation that
// comes after Close (a schedule's, a poller's) starts nothing. A runner
// that killed only the RIE left the functions running after the tests.
func TestCloseStopsTheFunctionsProcesses(t *testing.T) {
	dir := t.TempDir()
	rie := filepath.Join(dir, "fakerie")
	build := exec.Command("go", "build", "-o", rie, "./testdata/fakerie")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in RIE: %v\n%s", err, out)
	}
	fn := filepath.Join(dir, "f")
	if err := os.MkdirAll(fn, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Runner{RIE: rie, Region: "us-east-1"}
	r.Add(Spec{Name: "f", Bootstrap: filepath.Join(fn, "bootstrap"), Timeout: time.Second, Concurrency: 1})
	p := r.pools["f"]
	in, err := p.start()
	if err != nil {
		t.Fatal(err)
	}
	var child int
	for deadline := time.Now().Add(5 * time.Second); child == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(fn, "child.pid")); err == nil {
			child, _ = strconv.Atoi(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatal("the stand-in RIE started no child")
		}
	}
	r.Close()
	for _, pid := range []int{in.cmd.Process.Pid, child} {
		for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("process %d still runs after Close", pid)
				break
			}
		}
	}
	if _, err := p.start(); !errors.Is(err, errClosed) {
		t.Errorf("a start after Close: %v, want errClosed", err)
	}
}

// alive reports whether pid runs (a zombie, exited but not reaped by
// whoever adopted it, does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
