package httpapi

import (
	"time"

	"github.com/voiceops/opsapi/shared/platform/jsontext"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Time writes t as every response does: UTC, millisecond precision
// (voiceops.TimeFormat).
func Time(t time.Time) string {
	var buf [32]byte
	return string(AppendTime(buf[:0], t))
}

// AppendTime appends Time(t) to b, digit by digit (jsontext.AppendDateTime).
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	b, ok := jsontext.AppendDateTime(b, t)
	if !ok {
		return t.AppendFormat(b, voiceops.TimeFormat)
	}
	b = jsontext.AppendDigits(append(b, '.'), t.Nanosecond()/1e6, 3)
	return append(b, 'Z')
}

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
