package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartRunsNoCollection: the function's bootstrap runs no garbage
// collection before its first request, with Go's default GOGC. Its init
// allocates well under Go's first heap goal: phone numbers are checked
// against static data (shared/calls/phone), where a library that decodes
// its metadata at init allocated 2.5 MB and made every cold start collect.
// The bootstrap is built as infra bundles it (the lambda.norpc tag changes
// what links; the other flags only strip), without -race whatever this
// test runs under, and started with no environment: it exits at its
// environment check, after every package's init, and GODEBUG=gctrace=1
// prints each collection.
func TestStartRunsNoCollection(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{"GODEBUG=gctrace=1"}
	out, err := cmd.CombinedOutput()
	if !strings.Contains(string(out), "not set in the environment") {
		t.Fatalf("the bootstrap did not stop at its environment check (%v): %s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, "gc ") {
			t.Errorf("the start ran a collection: %s", line)
		}
	}
}
