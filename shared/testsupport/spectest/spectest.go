// Package spectest gives tests the OpenAPI validator of the document
// (shared/platform/apispec), loaded once per test binary.
package spectest

import (
	"sync"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/apispec"
)

var (
	once      sync.Once
	validator *apispec.Validator
	loadErr   error
)

// Validator returns the validator every response is checked with; a
// document that does not load fails the test.
func Validator(tb testing.TB) *apispec.Validator {
	tb.Helper()
	once.Do(func() { validator, loadErr = apispec.NewValidator() })
	if loadErr != nil {
		tb.Fatalf("loading the OpenAPI document: %v", loadErr)
	}
	return validator
}
