package main

import (
	"testing"

	"github.com/voiceops/opsapi/shared/testsupport/envtest"
)

// TestRunReadsItsEnvironment: run stops at start, naming the variable, when
// any variable of lambdamain.Conversations (what infra sets on the function) is missing.
func TestRunReadsItsEnvironment(t *testing.T) {
	envtest.RunNeedsItsEnvironment(t, "conversations", func(getenv func(string) string) error { _, err := build(getenv); return err })
}
