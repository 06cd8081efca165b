// Package envtest checks, in each function's tests, that its main reads
// its environment through lambdamain.Load: the variables of its struct in
// lambdamain.Environments, which infra sets, and each one checked at start.
package envtest

import (
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/lambdamain"
)

// RunNeedsItsEnvironment calls run (the function's run with a getenv) with
// each required variable of the function's environment left out in turn,
// the others set: each time run must fail at once with an error naming
// the missing variable.
func RunNeedsItsEnvironment(t *testing.T, function string, run func(getenv func(string) string) error) {
	t.Helper()
	env, ok := lambdamain.Environments[function]
	if !ok {
		t.Fatalf("functions/%s has no environment in lambdamain.Environments", function)
	}
	names := lambdamain.Names(env)
	if len(names) == 0 {
		t.Fatalf("functions/%s reads no variable", function)
	}
	for _, missing := range names {
		err := run(func(k string) string {
			switch {
			case k == missing:
				return ""
			case k == lambdamain.RegionEnv:
				return "us"
			case strings.HasPrefix(k, "AWS_"):
				return "" // no AWS configuration: run must stop before it
			}
			return "x"
		})
		if err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("functions/%s without %s: %v, want an error naming it", function, missing, err)
		}
	}
}
