// Package jsontext writes JSON strings, numbers and times exactly as
// encoding/json (HTML escaping off), log/slog or time's Format write
// them, for the hand-written encoders of hot paths: the conversations
// page, the EMF metric lines, the access line and the rule bodies.
package jsontext

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendFloat writes a number as encoding/json does (ES6 number to string).
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	if abs < maxThousandths {
		// Most numbers written are counts and milliseconds to the
		// microsecond: a whole number of thousandths is written from its
		// integer, as strconv would (shortest form), without its search.
		if m := math.Round(abs * 1000); m/1000 == abs {
			return appendThousandths(b, math.Signbit(f), uint64(m))
		}
	}
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// maxThousandths bounds appendThousandths' numbers: under it a float's
// spacing is far below a thousandth, so the float nearest a decimal of at
// most three places has that decimal as its shortest form.
const maxThousandths = 1e12

// appendThousandths writes m/1000 in the shortest form: no trailing zeros,
// no point for a whole number.
func appendThousandths(b []byte, negative bool, m uint64) []byte {
	if negative {
		b = append(b, '-')
	}
	b = strconv.AppendUint(b, m/1000, 10)
	frac := m % 1000
	if frac == 0 {
		return b
	}
	n := 3
	for frac%10 == 0 {
		frac /= 10
		n--
	}
	return AppendDigits(append(b, '.'), int(frac), n)
}

// jsonSafe marks the ASCII bytes written as they are inside a JSON string.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString writes s as a JSON string, escaping as encoding/json
// does with HTML escaping off: quotes, backslashes, control characters,
// U+2028 and U+2029; invalid UTF-8 becomes U+FFFD. The result is always
// valid UTF-8.
func AppendString(b []byte, s string) []byte { return appendString(b, s, true) }

// AppendSlogString writes s as log/slog's JSON handler does: as
// AppendString, but \b and \f as \u0008 and \u000c.
func AppendSlogString(b []byte, s string) []byte { return appendString(b, s, false) }

// appendString is AppendString, with \b and \f by their short escapes
// when namedBF.
func appendString(b []byte, s string, namedBF bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b', '\f':
				if !namedBF {
					b = append(b, '\\', 'u', '0', '0', '0', hexDigits[c])
				} else if c == '\b' {
					b = append(b, '\\', 'b')
				} else {
					b = append(b, '\\', 'f')
				}
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendDateTime appends t's date and time of day, "2006-01-02T15:04:05",
// digit by digit: time's layout interpreter costs a twentieth of a rules
// list. It reports false, appending nothing, for a year outside 0 to 9999,
// which the caller formats with time's Format.
func AppendDateTime(b []byte, t time.Time) ([]byte, bool) {
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return b, false
	}
	hour, minute, sec := t.Clock()
	b = AppendDigits(b, year, 4)
	b = AppendDigits(append(b, '-'), int(month), 2)
	b = AppendDigits(append(b, '-'), day, 2)
	b = AppendDigits(append(b, 'T'), hour, 2)
	b = AppendDigits(append(b, ':'), minute, 2)
	return AppendDigits(append(b, ':'), sec, 2), true
}

// AppendDigits appends the n last decimal digits of v (v ≥ 0), zero-padded.
func AppendDigits(b []byte, v, n int) []byte {
	b = append(b, make([]byte, n)...)
	for i := len(b) - 1; i >= len(b)-n; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}
