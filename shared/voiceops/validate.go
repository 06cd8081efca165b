package voiceops

import (
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/voiceops/netguard"
)

// Each Check function returns "" when the value is valid, else a message that
// names the violated rule; the transport pairs it with the field name.

// CheckName validates a rule or endpoint name: 1 to 255 characters, no
// control characters.
func CheckName(s string) string {
	n := utf8.RuneCountInString(s)
	if n < 1 || n > MaxNameLength {
		return fmt.Sprintf("must be 1 to %d characters", MaxNameLength)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return "must not contain control characters"
		}
	}
	return ""
}

// CheckThreshold validates threshold_value: 0 to 2^31-1.
func CheckThreshold(v int64) string {
	if v < 0 || v > MaxThreshold {
		return ThresholdMessage
	}
	return ""
}

// ThresholdMessage is the field error of a threshold_value out of range
// or not an integer.
var ThresholdMessage = fmt.Sprintf("must be an integer between 0 and %d", MaxThreshold)

// CheckTimeout validates timeout_ms.
func CheckTimeout(v int64) string {
	if v < MinTimeoutMS || v > MaxTimeoutMS {
		return fmt.Sprintf("must be an integer between %d and %d", MinTimeoutMS, MaxTimeoutMS)
	}
	return ""
}

// OneOf formats the allowed set of an enum for error messages.
func OneOf[T ~string](vals []T) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = string(v)
	}
	return "must be one of: " + strings.Join(s, ", ")
}

// ParseEnum returns v as T if it is one of vals.
func ParseEnum[T ~string](v string, vals []T) (T, bool) {
	for _, x := range vals {
		if string(x) == v {
			return x, true
		}
	}
	return "", false
}

// URLPolicy says which webhook URLs are acceptable. Deployed stacks use the
// zero value; the dev server may allow loopback receivers.
type URLPolicy struct {
	AllowLoopback bool
}

// CheckURL validates a webhook URL: absolute https:// with a host, at most
// 2048 characters, no credentials, not naming a non-public address.
func (p URLPolicy) CheckURL(raw string) string { return p.checkURL(raw, netguard.Host) }

// CheckStoredURL checks again a URL that CheckURL accepted when it was
// saved, but a host that is not ASCII only as written: it was IDNA-mapped
// and judged then, and each connection to it is judged when dialled. The
// functions that answer conversations call it, so they do not link a second
// copy of the IDNA tables beside net/http's.
func (p URLPolicy) CheckStoredURL(raw string) string { return p.checkURL(raw, netguard.HostAsWritten) }

func (p URLPolicy) checkURL(raw string, hostOf func(string) (string, netip.Addr, bool, error)) string {
	if utf8.RuneCountInString(raw) > MaxURLLength {
		return fmt.Sprintf("must be at most %d characters", MaxURLLength)
	}
	for _, r := range raw {
		if r <= ' ' || r == 0x7f || unicode.IsSpace(r) {
			return "must not contain spaces or control characters"
		}
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return "must be an absolute https:// URL with a host"
	}
	host := u.Hostname()
	loopback := p.AllowLoopback && netguard.IsLoopbackName(host)
	// The scheme is checked on the raw text: url.Parse lower-cases it, and
	// the stored URL must match ^https:// as sent.
	switch {
	case strings.HasPrefix(raw, "https://"):
	case strings.HasPrefix(raw, "http://") && loopback:
	default:
		return "must match ^https://"
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "must have a port between 1 and 65535"
		}
	}
	if u.User != nil {
		return "must not contain credentials; use the headers field for Authorization"
	}
	if strings.Contains(raw, "#") {
		return "must not contain a fragment"
	}
	if host == "" {
		return "must be an absolute https:// URL with a host"
	}
	if loopback {
		return ""
	}
	// The host is judged as a client would connect to it: IDNA-mapped,
	// without a trailing dot, and as an address when inet_aton would read
	// it as one (0x7f.1, 127.1, ①②⑦.0.0.1 are 127.0.0.1).
	name, addr, canonical, err := hostOf(host)
	switch {
	case err != nil:
		return "must be an absolute https:// URL with a valid host"
	case addr.IsValid() && !netguard.IsPublic(addr), !addr.IsValid() && netguard.IsInternalName(name):
		return nonPublicMessage
	case addr.IsValid() && !canonical:
		return "must write an IP address as four decimal numbers (a.b.c.d) or as [IPv6]"
	}
	return ""
}

const nonPublicMessage = "must not point to a loopback, private, link-local or otherwise non-public address"

// reservedHeaders are the custom header names refused, lower case: those
// the dispatcher sets itself, and the hop-by-hop and connection-level
// ones (RFC 9110 7.6.1, RFC 7230's Keep-Alive, Proxy-*), which govern the
// connection or a proxy rather than reach the receiver: Expect would make
// the client wait for a 100, Upgrade and TE change the protocol, and
// Proxy-Authorization would hand a credential to any proxy on the way.
var reservedHeaders = []string{"host", "content-type", "content-length", "user-agent", "transfer-encoding", "connection",
	"upgrade", "te", "trailer", "expect", "keep-alive", "proxy-authorization", "proxy-authenticate", "proxy-connection", "http2-settings"}

// reservedHeaderPrefixes are the refused prefixes of custom header names.
var reservedHeaderPrefixes = []string{"webhook-", "x-service-"}

// ReservedHeader reports whether a custom header name is refused: the
// dispatcher never sends one, even if an endpoint stored it earlier.
func ReservedHeader(name string) bool {
	l := strings.ToLower(name)
	if slices.Contains(reservedHeaders, l) {
		return true
	}
	for _, p := range reservedHeaderPrefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// reservedHeaderMessage names every refused name in the 422.
const reservedHeaderMessage = "header name is reserved (Host, Content-Type, Content-Length, User-Agent, Transfer-Encoding, Connection, " +
	"Upgrade, TE, Trailer, Expect, Keep-Alive, Proxy-Authorization, Proxy-Authenticate, Proxy-Connection, HTTP2-Settings, webhook-*, x-service-*)"

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// CheckHeaders validates custom delivery headers and returns one error per
// bad entry, with field "headers.<name>".
func CheckHeaders(h map[string]string) []FieldError {
	var errs []FieldError
	if len(h) > MaxHeaders {
		return []FieldError{{Field: "headers", Message: fmt.Sprintf("must have at most %d entries", MaxHeaders)}}
	}
	seen := map[string]bool{}
	// Sorted, so which of two names differing only in case is reported does
	// not depend on map order.
	for _, name := range slices.Sorted(maps.Keys(h)) {
		val := h[name]
		f := "headers." + name
		switch {
		case len(name) > MaxHeaderName:
			errs = append(errs, FieldError{"headers", fmt.Sprintf("header names must be at most %d characters", MaxHeaderName)})
		case !isToken(name):
			errs = append(errs, FieldError{f, "header name must be an HTTP token"})
		case ReservedHeader(name):
			errs = append(errs, FieldError{f, reservedHeaderMessage})
		case seen[strings.ToLower(name)]:
			errs = append(errs, FieldError{f, "header name is given twice (names are case-insensitive)"})
		case utf8.RuneCountInString(val) > MaxHeaderValue:
			errs = append(errs, FieldError{f, fmt.Sprintf("header value must be at most %d characters", MaxHeaderValue)})
		case strings.ContainsAny(val, "\r\n\x00"):
			errs = append(errs, FieldError{f, "header value must not contain CR, LF or NUL"})
		}
		seen[strings.ToLower(name)] = true
	}
	return errs
}

// CheckEventTypes validates a list of event types: at least one, known, no
// duplicates.
func CheckEventTypes(ts []string) ([]EventType, string) {
	if len(ts) == 0 {
		return nil, "must have at least 1 item"
	}
	out := make([]EventType, 0, len(ts))
	seen := map[string]bool{}
	for _, t := range ts {
		et, ok := ParseEnum(t, EventTypes)
		if !ok {
			return nil, "items " + OneOf(EventTypes)
		}
		if seen[t] {
			return nil, "must not contain duplicates"
		}
		seen[t] = true
		out = append(out, et)
	}
	return out, ""
}
