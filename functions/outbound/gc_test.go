package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/lambdamain"
)

// TestStartRunsNoCollection: started with the GOGC it is deployed with
// (lambdamain.GCPercent), the function's bootstrap runs no garbage
// collection in its init, libphonenumber's metadata included; with Go's
// default it runs one or more, which is why the setting exists. The
// bootstrap is built as infra bundles it (the lambda.norpc tag changes
// what links; the other flags only strip), without -race whatever this
// test runs under, and started with no environment: it exits at its
// environment check, after every package's init, and GODEBUG=gctrace=1
// counts the collections (init allocates about 3.9 MB, past the default's
// first trigger at about 3 MB). Should the default ever run none, the
// setting can go.
func TestStartRunsNoCollection(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	collections := func(gogc int) int {
		cmd := exec.Command(bin)
		cmd.Env = []string{"GOGC=" + strconv.Itoa(gogc), "GODEBUG=gctrace=1"}
		out, err := cmd.CombinedOutput()
		if !strings.Contains(string(out), "not set in the environment") {
			t.Fatalf("GOGC=%d: the bootstrap did not stop at its environment check (%v): %s", gogc, err, out)
		}
		n := 0
		for line := range strings.Lines(string(out)) {
			if strings.HasPrefix(line, "gc ") {
				n++
			}
		}
		return n
	}
	deployed := lambdamain.GCPercent("outbound")
	if deployed == 0 {
		t.Fatal("outbound is deployed with Go's default GOGC")
	}
	if n := collections(deployed); n != 0 {
		t.Errorf("GOGC=%d: the start ran %d collections, want none", deployed, n)
	}
	// gctrace prints a collection when it ends: on a loaded machine the
	// bootstrap can exit while its first one is still marking, so a run
	// without a line is tried again.
	n := 0
	for try := 0; try < 5 && n == 0; try++ {
		n = collections(100)
	}
	if n == 0 {
		t.Errorf("GOGC=100 (Go's default): the start ran no collection, so GOGC=%d buys nothing any more", deployed)
	}
}
