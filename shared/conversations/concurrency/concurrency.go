// Package concurrency computes the base host's concurrency series: for each
// 5-minute window of a range, the largest number of conversations in
// progress at one instant within it. It is pure: the caller reads the
// conversations (with the store's narrow projection, from ReadFrom on)
// and hands them to a Counter.
//
// The sweep: every conversation becomes an interval [start, end); its
// start is a +1 event, its end a -1 event. Sorted by time (an end before a
// start at the same instant, so that a conversation ending exactly when
// another starts does not overlap it), the running sum of the events is
// the number in progress, and the maximum of the running sum within a
// window is the window's value. O(n log n) for n conversations, plus the
// number of windows.
package concurrency

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

const (
	// Step is the width of a window (the base host).
	Step = 5 * time.Minute
	// MaxRange is the longest range a series covers, between the start and
	// end asked for (before rounding; the vendor's interface: "at most one week apart").
	MaxRange = 7 * 24 * time.Hour
	// MaxConversationLength is how long a conversation counts at most: one
	// still in progress (or one that was never closed) counts from its start
	// until now, but no longer than this. It bounds the read: conversations
	// that started up to this long before the range may still be running
	// in it, and older ones never count.
	MaxConversationLength = 24 * time.Hour
)

// Windows is a series of N consecutive windows of width Step, the first
// starting at From (a multiple of Step since the Unix epoch).
type Windows struct {
	From time.Time
	N    int
}

// Round returns the windows covering [start, end): start rounded down and
// end rounded up to the nearest 5-minute mark (UTC). An end on a mark stays
// there: [10:00, 10:05) is one window.
func Round(start, end time.Time) Windows {
	from := floorStep(start)
	to := floorStep(end)
	if to.Before(end) {
		to = to.Add(Step)
	}
	n := 0
	if to.After(from) {
		n = int(to.Sub(from) / Step)
	}
	return Windows{From: from, N: n}
}

// floorStep rounds t down to a multiple of Step since the Unix epoch.
func floorStep(t time.Time) time.Time {
	ns := t.UnixNano()
	rem := ns % int64(Step)
	if rem < 0 {
		rem += int64(Step)
	}
	return time.Unix(0, ns-rem).UTC()
}

// End is the end (excluded) of the last window.
func (w Windows) End() time.Time { return w.From.Add(time.Duration(w.N) * Step) }

// Start returns the start of window i.
func (w Windows) Start(i int) time.Time { return w.From.Add(time.Duration(i) * Step) }

// ReadFrom is the earliest start of a conversation that can count in w:
// the read of a series covers conversations that started in
// [ReadFrom(w), w.End()).
func ReadFrom(w Windows) time.Time { return w.From.Add(-MaxConversationLength) }

// Interval is the time [Start, End) during which one conversation was in
// progress. An interval with End not after Start is empty.
type Interval struct {
	Start, End time.Time
}

// Span returns the interval during which c counts, at now: from its start
// to its end; while in progress (no end yet), until now. At most
// MaxConversationLength. A conversation that ended the instant it started,
// or that has no end and is not in progress, counts at its start instant
// alone.
func Span(c voiceops.Conversation, now time.Time) Interval {
	s := spanOf(&c, now.UnixNano())
	return Interval{Start: time.Unix(0, s.start).UTC(), End: time.Unix(0, s.end).UTC()}
}

// span is an interval in Unix nanoseconds: what the sweep works on (no
// pointers for the garbage collector to follow, cheap to compare).
type span struct{ start, end int64 }

func spanOf(c *voiceops.Conversation, now int64) span {
	start := c.StartedAt.UnixNano()
	end := start
	switch {
	case c.EndedAt != nil:
		end = c.EndedAt.UnixNano()
	case c.InProgress:
		end = now
	}
	end = min(end, start+int64(MaxConversationLength))
	if end <= start {
		end = start + 1
	}
	return span{start, end}
}

// Max returns, for each window of w, the largest number of intervals in
// progress at one instant of the window: an interval [s, e) is in progress
// at t when s <= t < e.
func Max(w Windows, intervals []Interval) []int {
	spans := make([]span, len(intervals))
	for i, iv := range intervals {
		spans[i] = span{iv.Start.UnixNano(), iv.End.UnixNano()}
	}
	return sweep(w, spans)
}

// sweep is Max over spans.
func sweep(w Windows, spans []span) []int {
	out := make([]int, max(w.N, 0))
	if w.N <= 0 {
		return out
	}
	// Events as offsets from w.From in nanoseconds, shifted left by one:
	// the low bit is 0 for an end and 1 for a start, so that sorting the
	// integers puts the ends of an instant before its starts. Ends at or
	// after the last window do not matter and are left out.
	length := int64(w.N) * int64(Step)
	from := w.From.UnixNano()
	events := make([]int64, 0, 2*len(spans))
	for _, sp := range spans {
		s, e := sp.start-from, sp.end-from
		if e <= s || e <= 0 || s >= length {
			continue
		}
		events = append(events, max(s, 0)<<1|1)
		if e < length {
			events = append(events, e<<1)
		}
	}
	slices.Sort(events)

	cur, i := 0, 0
	for k := range out {
		lo, hi := int64(k)*int64(Step), int64(k+1)*int64(Step)
		// The events at the window's first instant make its first count;
		// the count just before it belongs to the previous window.
		for ; i < len(events) && events[i]>>1 == lo; i++ {
			cur += delta(events[i])
		}
		m := cur
		for ; i < len(events) && events[i]>>1 < hi; i++ {
			cur += delta(events[i])
			m = max(m, cur)
		}
		out[k] = m
	}
	return out
}

func delta(event int64) int {
	if event&1 == 1 {
		return 1
	}
	return -1
}

// Filter selects the conversations a series counts. Empty fields select
// everything.
type Filter struct {
	// Environment: a conversation without one is live (as the
	// conversation engine starts it).
	Environment voiceops.Environment
	VariantID   string
	VariantName string
	// Language matches the conversation's ASR language code, ignoring
	// case; a code without a region matches every region of the language
	// ("en" matches "en-GB" and "en-US", "en-GB" matches "en-GB" only).
	Language string
	// PhoneNumber matches a conversation whose to_number or from_number is
	// that number: the number called or calling, so that one line's
	// inbound and outbound conversations both count. Numbers compare by
	// their digits ("+1 (415) 555-0100" is "+14155550100").
	PhoneNumber string
}

// Match reports whether the filter selects c.
func (f Filter) Match(c voiceops.Conversation) bool { return f.match(&c) }

func (f *Filter) match(c *voiceops.Conversation) bool {
	if f.Environment != "" {
		env := c.Environment
		if env == "" {
			env = voiceops.EnvLive
		}
		if env != f.Environment {
			return false
		}
	}
	if f.VariantID != "" && c.VariantID != f.VariantID {
		return false
	}
	if f.VariantName != "" && c.VariantName != f.VariantName {
		return false
	}
	if f.Language != "" {
		lang, want := c.ASRLang, f.Language
		if len(lang) < len(want) || !strings.EqualFold(lang[:len(want)], want) ||
			(len(lang) > len(want) && lang[len(want)] != '-') {
			return false
		}
	}
	if f.PhoneNumber != "" {
		want := NormalizeNumber(f.PhoneNumber)
		if !sameNumber(c.ToNumber, want) && !sameNumber(c.FromNumber, want) {
			return false
		}
	}
	return true
}

// sameNumber reports whether NormalizeNumber(s) is want, without
// allocating when s is already normalized.
func sameNumber(s, want string) bool {
	return s == want || NormalizeNumber(s) == want
}

// NormalizeNumber returns a phone number as "+" and its digits when it is
// written with digits and the usual separators (spaces, "-", ".", "(",
// ")", a leading "+"); any other string (a SIP URI, a name) as it is.
func NormalizeNumber(s string) string {
	digits := make([]byte, 0, len(s)+1)
	digits = append(digits, '+')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || (c == '+' && len(digits) == 1):
		default:
			return s
		}
	}
	if len(digits) == 1 || string(digits) == s {
		return s // no copy when s is already normalized
	}
	return string(digits)
}

// Series is the maximum concurrency of each window, for one variant (or
// for every conversation when the counter does not slice).
type Series struct {
	VariantID   string
	VariantName string
	Max         []int
}

// Counter collects conversations, page by page, keeping only the intervals
// of those that the filter selects and that overlap the windows, then
// computes the series.
type Counter struct {
	w         Windows
	f         Filter
	byVariant bool
	now       time.Time
	groups    map[string]*group
}

type group struct {
	name   string
	nameAt time.Time // the start of the conversation name comes from
	spans  []span
}

// NewCounter returns a counter of the windows w, counting the conversations
// f selects, one series per variant when byVariant, with conversations in
// progress counting until now.
func NewCounter(w Windows, f Filter, byVariant bool, now time.Time) *Counter {
	return &Counter{w: w, f: f, byVariant: byVariant, now: now, groups: map[string]*group{}}
}

// Add counts conversations.
func (c *Counter) Add(convs ...voiceops.Conversation) {
	from, end, now := c.w.From.UnixNano(), c.w.End().UnixNano(), c.now.UnixNano()
	for i := range convs {
		conv := &convs[i]
		if !c.f.match(conv) {
			continue
		}
		sp := spanOf(conv, now)
		if sp.end <= from || sp.start >= end {
			continue
		}
		k := ""
		if c.byVariant {
			k = conv.VariantID
		}
		g := c.groups[k]
		if g == nil {
			g = &group{name: conv.VariantName, nameAt: conv.StartedAt}
			c.groups[k] = g
		}
		g.spans = append(g.spans, sp)
		// A variant is named after its latest conversation: a renamed
		// variant shows its current name.
		if c.byVariant && conv.StartedAt.After(g.nameAt) {
			g.name, g.nameAt = conv.VariantName, conv.StartedAt
		}
	}
}

// Series returns the series: without slicing, one series (zeros when
// nothing counted); by variant, one series per variant with a counted
// conversation, ordered by variant ID (none when nothing counted).
func (c *Counter) Series() []Series {
	if !c.byVariant {
		var spans []span
		if g := c.groups[""]; g != nil {
			spans = g.spans
		}
		return []Series{{Max: sweep(c.w, spans)}}
	}
	out := make([]Series, 0, len(c.groups))
	for id, g := range c.groups {
		out = append(out, Series{VariantID: id, VariantName: g.name, Max: sweep(c.w, g.spans)})
	}
	slices.SortFunc(out, func(a, b Series) int { return cmp.Compare(a.VariantID, b.VariantID) })
	return out
}
