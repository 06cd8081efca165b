package httpapi

import (
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Time writes t as every response does: UTC, millisecond precision
// (voiceops.TimeFormat).
func Time(t time.Time) string { return t.UTC().Format(voiceops.TimeFormat) }

// TimePtr is Time for an optional time: nil stays nil (JSON null).
func TimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Time(*t)
	return &s
}

// ParseBool reads a query parameter's true or false.
func ParseBool(s string) (bool, bool) {
	switch s {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}
