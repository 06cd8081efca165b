package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFunctionsNameTheirSource: every function of every stack names the
// directory it is built from in its Metadata (FunctionMetadata), which
// scripts/stack reads instead of guessing from logical IDs; it agrees with
// the function's tag, and the directory exists. No function's environment
// carries the stack runner's local-only variables.
func TestFunctionsNameTheirSource(t *testing.T) {
	s := defaultSynth(t)
	for name := range s.templates {
		for _, r := range resources(s.json[name], "AWS::Lambda::Function") {
			meta, _ := r["Metadata"].(map[string]any)
			src, _ := meta[FunctionMetadata].(string)
			props, _ := r["Properties"].(map[string]any)
			tag := ""
			tags, _ := props["Tags"].([]any)
			for _, x := range tags {
				if kv, _ := x.(map[string]any); kv["Key"] == FunctionTag {
					tag, _ = kv["Value"].(string)
				}
			}
			if src == "" || src != tag {
				t.Errorf("%s: a function's %s metadata is %q, its %s tag %q", name, FunctionMetadata, src, FunctionTag, tag)
				continue
			}
			if _, err := os.Stat(filepath.Join("..", "functions", src, "main.go")); err != nil {
				t.Errorf("%s: function %s: %v", name, src, err)
			}
			env, _ := props["Environment"].(map[string]any)
			vars, _ := env["Variables"].(map[string]any)
			for k := range vars {
				if strings.HasPrefix(k, "VOICEOPS_LOCAL_") {
					t.Errorf("%s: function %s has the local-only variable %s", name, src, k)
				}
			}
		}
	}
}
