package concurrency_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/concurrency"
	"github.com/voiceops/opsapi/shared/voiceops"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func at(d string) time.Time {
	dur, err := time.ParseDuration(d)
	if err != nil {
		panic(err)
	}
	return t0.Add(dur)
}

func TestRound(t *testing.T) {
	plus2 := time.FixedZone("UTC+2", 2*3600)
	nepal := time.FixedZone("UTC+5:45", 5*3600+45*60)
	cases := []struct {
		name       string
		start, end time.Time
		from       time.Time
		n          int
	}{
		{"on marks", at("0"), at("15m"), at("0"), 3},
		{"one window", at("0"), at("5m"), at("0"), 1},
		{"inside one window", at("1m"), at("2m"), at("0"), 1},
		{"start down, end up", at("4m59s"), at("10m1s"), at("0"), 3},
		{"a nanosecond past a mark", at("1ns"), at("5m1ns"), at("0"), 2},
		{"a nanosecond before a mark", at("-1ns"), at("4m59.999999999s"), at("-5m"), 2},
		{"one week on marks", at("0"), at("168h"), at("0"), 2016},
		{"one week off marks", at("1m"), at("168h1m"), at("0"), 2017},
		{"other zone", at("7m").In(plus2), at("12m").In(plus2), at("5m"), 2},
		{"quarter-hour zone", at("7m").In(nepal), at("8m").In(nepal), at("5m"), 1},
		{"before 1970", time.Date(1969, 12, 31, 23, 58, 0, 0, time.UTC), time.Date(1970, 1, 1, 0, 1, 0, 0, time.UTC),
			time.Date(1969, 12, 31, 23, 55, 0, 0, time.UTC), 2},
		{"empty", at("5m"), at("5m"), at("5m"), 0},
		{"reversed", at("10m"), at("0"), at("10m"), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := concurrency.Round(c.start, c.end)
			if !w.From.Equal(c.from) || w.N != c.n {
				t.Errorf("Round(%s, %s) = %s x %d, want %s x %d", c.start, c.end, w.From, w.N, c.from, c.n)
			}
			if w.From.Location() != time.UTC {
				t.Errorf("From %s is not in UTC", w.From)
			}
			if c.n > 0 && (w.From.After(c.start) || w.End().Before(c.end) || !w.Start(c.n).Equal(w.End())) {
				t.Errorf("windows %s to %s do not cover %s to %s", w.From, w.End(), c.start, c.end)
			}
		})
	}
	if got := concurrency.ReadFrom(concurrency.Round(at("0"), at("5m"))); !got.Equal(at("-24h")) {
		t.Errorf("ReadFrom = %s, want a day before", got)
	}
}

func TestSpan(t *testing.T) {
	now := at("2h")
	end := func(d string) *time.Time { e := at(d); return &e }
	cases := []struct {
		name string
		c    voiceops.Conversation
		want concurrency.Interval
	}{
		{"ended", voiceops.Conversation{StartedAt: at("0"), EndedAt: end("3m")}, concurrency.Interval{Start: at("0"), End: at("3m")}},
		{"in progress counts until now", voiceops.Conversation{StartedAt: at("1h"), InProgress: true}, concurrency.Interval{Start: at("1h"), End: now}},
		{"in progress at most a day", voiceops.Conversation{StartedAt: at("-30h"), InProgress: true}, concurrency.Interval{Start: at("-30h"), End: at("-6h")}},
		{"ended after more than a day", voiceops.Conversation{StartedAt: at("0"), EndedAt: end("25h")}, concurrency.Interval{Start: at("0"), End: at("24h")}},
		{"ended as it started", voiceops.Conversation{StartedAt: at("0"), EndedAt: end("0")}, concurrency.Interval{Start: at("0"), End: at("1ns")}},
		{"ended before it started", voiceops.Conversation{StartedAt: at("0"), EndedAt: end("-1s")}, concurrency.Interval{Start: at("0"), End: at("1ns")}},
		{"no end, not in progress", voiceops.Conversation{StartedAt: at("0")}, concurrency.Interval{Start: at("0"), End: at("1ns")}},
		{"in progress, started after now", voiceops.Conversation{StartedAt: at("3h"), InProgress: true}, concurrency.Interval{Start: at("3h"), End: at("3h1ns")}},
		{"end wins over in progress", voiceops.Conversation{StartedAt: at("0"), EndedAt: end("1m"), InProgress: true}, concurrency.Interval{Start: at("0"), End: at("1m")}},
	}
	for _, c := range cases {
		if got := concurrency.Span(c.c, now); !got.Start.Equal(c.want.Start) || !got.End.Equal(c.want.End) {
			t.Errorf("%s: Span = %s to %s, want %s to %s", c.name, got.Start, got.End, c.want.Start, c.want.End)
		}
	}
}

// bruteMax is the reference: the count of intervals in progress at every
// instant where the count can rise (the window's first instant and every
// start inside it), the largest per window.
func bruteMax(w concurrency.Windows, ivs []concurrency.Interval) []int {
	countAt := func(t time.Time) int {
		n := 0
		for _, iv := range ivs {
			if !iv.Start.After(t) && iv.End.After(t) {
				n++
			}
		}
		return n
	}
	out := make([]int, w.N)
	for k := range out {
		lo, hi := w.Start(k), w.Start(k+1)
		m := countAt(lo)
		for _, iv := range ivs {
			if iv.Start.After(lo) && iv.Start.Before(hi) {
				m = max(m, countAt(iv.Start))
			}
		}
		out[k] = m
	}
	return out
}

// randomIntervals draws intervals around the windows w, with the edges
// that matter: starts and ends exactly on 5-minute marks, intervals
// starting before the range, ending exactly at its start, starting
// exactly at its end, spanning it all, empty and one nanosecond long, and
// many sharing instants.
func randomIntervals(r *rand.Rand, w concurrency.Windows, n int) []concurrency.Interval {
	span := time.Duration(w.N) * concurrency.Step
	mark := func() time.Time { return w.From.Add(time.Duration(r.IntN(w.N+3)-1) * concurrency.Step) }
	anywhere := func() time.Time {
		return w.From.Add(time.Duration(r.Int64N(int64(span+2*time.Hour))) - time.Hour)
	}
	shared := []time.Time{mark(), anywhere(), anywhere()}
	out := make([]concurrency.Interval, 0, n)
	for range n {
		var iv concurrency.Interval
		switch r.IntN(10) {
		case 0: // on marks
			iv.Start = mark()
			iv.End = iv.Start.Add(time.Duration(r.IntN(4)) * concurrency.Step)
		case 1: // from a mark, for any length
			iv.Start = mark()
			iv.End = iv.Start.Add(time.Duration(r.Int64N(int64(20 * time.Minute))))
		case 2: // before the range, into it or not
			iv.Start = w.From.Add(-time.Duration(r.Int64N(int64(2*time.Hour))) - 1)
			iv.End = w.From.Add(time.Duration(r.Int64N(int64(30*time.Minute))) - 15*time.Minute)
		case 3: // the whole range and more
			iv.Start = w.From.Add(-time.Duration(r.IntN(3)) * time.Minute)
			iv.End = w.End().Add(time.Duration(r.IntN(3)) * time.Minute)
		case 4: // ends at the range's start, or starts at its end
			if r.IntN(2) == 0 {
				iv.Start, iv.End = w.From.Add(-time.Minute), w.From
			} else {
				iv.Start, iv.End = w.End(), w.End().Add(time.Minute)
			}
		case 5: // empty, one nanosecond, or backwards
			iv.Start = anywhere()
			iv.End = iv.Start.Add(time.Duration(r.IntN(3) - 1))
		case 6: // instants shared with other intervals
			iv.Start = shared[r.IntN(len(shared))]
			iv.End = shared[r.IntN(len(shared))]
			if !iv.End.After(iv.Start) {
				iv.End = iv.Start.Add(time.Duration(r.IntN(3)) * concurrency.Step)
			}
		default: // anywhere, short
			iv.Start = anywhere()
			iv.End = iv.Start.Add(time.Duration(r.Int64N(int64(12 * time.Minute))))
		}
		out = append(out, iv)
	}
	return out
}

func TestMaxAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 2026))
	for trial := range 500 {
		w := concurrency.Windows{From: t0.Add(time.Duration(r.IntN(1000)-500) * concurrency.Step), N: 1 + r.IntN(30)}
		ivs := randomIntervals(r, w, r.IntN(60))
		got, want := concurrency.Max(w, ivs), bruteMax(w, ivs)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d, windows %s x %d, intervals %v:\ngot  %v\nwant %v", trial, w.From, w.N, ivs, got, want)
		}
	}
}

func TestMaxEdges(t *testing.T) {
	w := concurrency.Windows{From: at("0"), N: 3}
	iv := func(s, e string) concurrency.Interval { return concurrency.Interval{Start: at(s), End: at(e)} }
	cases := []struct {
		name string
		ivs  []concurrency.Interval
		want []int
	}{
		{"none", nil, []int{0, 0, 0}},
		{"ends on a mark: not in the next window", []concurrency.Interval{iv("0", "5m")}, []int{1, 0, 0}},
		{"starts on a mark: not in the previous window", []concurrency.Interval{iv("5m", "6m")}, []int{0, 1, 0}},
		{"one ends as another starts: never two", []concurrency.Interval{iv("1m", "2m"), iv("2m", "3m")}, []int{1, 0, 0}},
		{"handover on a mark", []concurrency.Interval{iv("1m", "5m"), iv("5m", "12m")}, []int{1, 1, 1}},
		{"before the range, still running", []concurrency.Interval{iv("-1h", "7m")}, []int{1, 1, 0}},
		{"before the range, ended at its start", []concurrency.Interval{iv("-1h", "0")}, []int{0, 0, 0}},
		{"after the range", []concurrency.Interval{iv("15m", "20m")}, []int{0, 0, 0}},
		{"whole range", []concurrency.Interval{iv("-1m", "16m"), iv("0", "15m")}, []int{2, 2, 2}},
		{"one nanosecond", []concurrency.Interval{iv("7m", "7m1ns"), iv("7m", "7m1ns")}, []int{0, 2, 0}},
		{"empty", []concurrency.Interval{iv("7m", "7m"), iv("8m", "7m")}, []int{0, 0, 0}},
		{"peak inside a window", []concurrency.Interval{iv("1m", "4m"), iv("2m", "3m"), iv("3m", "6m")}, []int{2, 1, 0}},
	}
	for _, c := range cases {
		if got := concurrency.Max(w, c.ivs); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if got := concurrency.Max(concurrency.Windows{From: at("0")}, []concurrency.Interval{iv("0", "1m")}); len(got) != 0 {
		t.Errorf("no windows: %v", got)
	}
}

func TestFilter(t *testing.T) {
	c := voiceops.Conversation{Environment: voiceops.EnvLive, VariantID: "var_1", VariantName: "Main line",
		ASRLang: "en-GB", FromNumber: "+441632960001", ToNumber: "+1 (415) 555-0100"}
	cases := []struct {
		f    concurrency.Filter
		conv voiceops.Conversation
		want bool
	}{
		{concurrency.Filter{}, c, true},
		{concurrency.Filter{Environment: voiceops.EnvLive}, c, true},
		{concurrency.Filter{Environment: voiceops.EnvSandbox}, c, false},
		{concurrency.Filter{Environment: voiceops.EnvLive}, voiceops.Conversation{}, true},
		{concurrency.Filter{Environment: voiceops.EnvPreRelease}, voiceops.Conversation{}, false},
		{concurrency.Filter{VariantID: "var_1"}, c, true},
		{concurrency.Filter{VariantID: "var_2"}, c, false},
		{concurrency.Filter{VariantName: "Main line"}, c, true},
		{concurrency.Filter{VariantName: "main line"}, c, false},
		{concurrency.Filter{Language: "en-GB"}, c, true},
		{concurrency.Filter{Language: "en-gb"}, c, true},
		{concurrency.Filter{Language: "en"}, c, true},
		{concurrency.Filter{Language: "EN"}, c, true},
		{concurrency.Filter{Language: "en-US"}, c, false},
		{concurrency.Filter{Language: "e"}, c, false},
		{concurrency.Filter{Language: "en-GB-x"}, c, false},
		{concurrency.Filter{Language: "en"}, voiceops.Conversation{}, false},
		{concurrency.Filter{Language: "en"}, voiceops.Conversation{ASRLang: "eng"}, false},
		{concurrency.Filter{PhoneNumber: "+14155550100"}, c, true},
		{concurrency.Filter{PhoneNumber: "14155550100"}, c, true},
		{concurrency.Filter{PhoneNumber: "+441632960001"}, c, true},
		{concurrency.Filter{PhoneNumber: "+44 1632 960001"}, c, true},
		{concurrency.Filter{PhoneNumber: "+441632960002"}, c, false},
		{concurrency.Filter{PhoneNumber: "+1415555010"}, c, false},
		{concurrency.Filter{PhoneNumber: "+14155550100"}, voiceops.Conversation{}, false},
		{concurrency.Filter{PhoneNumber: "sip:desk@example.com"}, voiceops.Conversation{ToNumber: "sip:desk@example.com"}, true},
		{concurrency.Filter{Environment: voiceops.EnvLive, VariantID: "var_1", Language: "en", PhoneNumber: "+14155550100"}, c, true},
		{concurrency.Filter{Environment: voiceops.EnvLive, VariantID: "var_1", Language: "fr", PhoneNumber: "+14155550100"}, c, false},
	}
	for _, tc := range cases {
		if got := tc.f.Match(tc.conv); got != tc.want {
			t.Errorf("%+v matches %+v: %v, want %v", tc.f, tc.conv, got, tc.want)
		}
	}
	for in, want := range map[string]string{
		"+14155550100": "+14155550100", "1-415-555-0100": "+14155550100", "(415) 555.0100": "+4155550100",
		"": "", "+": "+", "sip:a@b": "sip:a@b", "1+2": "1+2", "anonymous": "anonymous",
	} {
		if got := concurrency.NormalizeNumber(in); got != want {
			t.Errorf("NormalizeNumber(%q) = %q, want %q", in, got, want)
		}
	}
}

// randomConversations draws conversations over the windows: three
// variants (one renamed), two environments, two languages, two numbers;
// some in progress, some started a day before.
func randomConversations(r *rand.Rand, w concurrency.Windows, n int, now time.Time) []voiceops.Conversation {
	span := int64(w.End().Sub(w.From))
	out := make([]voiceops.Conversation, 0, n)
	for range n {
		var start time.Time
		if r.IntN(10) == 0 {
			start = w.From.Add(-time.Duration(r.Int64N(int64(26 * time.Hour))))
		} else {
			start = w.From.Add(time.Duration(r.Int64N(span)))
		}
		if r.IntN(5) == 0 {
			start = start.Truncate(concurrency.Step)
		}
		c := voiceops.Conversation{
			StartedAt: start, Environment: []voiceops.Environment{voiceops.EnvLive, voiceops.EnvSandbox, ""}[r.IntN(3)],
			VariantID: []string{"var_a", "var_b", ""}[r.IntN(3)], ASRLang: []string{"en-GB", "en-US", "fr-FR"}[r.IntN(3)],
			FromNumber: "+441632960001", ToNumber: []string{"+14155550100", "+14155550199"}[r.IntN(2)],
		}
		c.VariantName = map[string]string{"var_a": "Alpha", "var_b": "Beta", "": ""}[c.VariantID]
		if c.VariantID == "var_a" && start.After(w.From.Add(time.Duration(span/2))) {
			c.VariantName = "Alpha (renamed)"
		}
		switch r.IntN(8) {
		case 0:
			c.InProgress = true
		case 1:
			end := start.Add(time.Duration(r.Int64N(int64(30 * time.Hour))))
			c.EndedAt = &end
		default:
			end := start.Add(time.Duration(r.Int64N(int64(15 * time.Minute))))
			if r.IntN(4) == 0 {
				end = end.Truncate(concurrency.Step)
			}
			c.EndedAt = &end
		}
		if c.EndedAt != nil && c.EndedAt.After(now) {
			c.EndedAt, c.InProgress = nil, true
		}
		out = append(out, c)
	}
	return out
}

// TestCounterAgainstBruteForce checks the counter (filter, spans, slicing
// by variant) against the reference applied to the conversations the
// filter selects, as the handler feeds it: page by page.
func TestCounterAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 6))
	filters := []concurrency.Filter{
		{},
		{Environment: voiceops.EnvLive},
		{Environment: voiceops.EnvLive, Language: "en"},
		{Environment: voiceops.EnvSandbox, VariantID: "var_a"},
		{VariantName: "Beta", PhoneNumber: "+1 415 555 0100"},
	}
	for trial := range 200 {
		w := concurrency.Windows{From: t0.Add(time.Duration(r.IntN(100)) * concurrency.Step), N: 1 + r.IntN(40)}
		now := w.From.Add(time.Duration(r.Int64N(int64(w.End().Sub(w.From) + time.Hour))))
		convs := randomConversations(r, w, r.IntN(120), now)
		f := filters[trial%len(filters)]
		byVariant := trial%2 == 1

		c := concurrency.NewCounter(w, f, byVariant, now)
		for page := range slices.Chunk(convs, 7) {
			c.Add(page...)
		}
		got := c.Series()

		groups := map[string][]concurrency.Interval{}
		names := map[string]string{}
		latest := map[string]time.Time{}
		for _, conv := range convs {
			iv := concurrency.Span(conv, now)
			if !f.Match(conv) || !iv.End.After(w.From) || !iv.Start.Before(w.End()) {
				continue
			}
			k := ""
			if byVariant {
				k = conv.VariantID
				if _, seen := latest[k]; !seen || conv.StartedAt.After(latest[k]) {
					names[k], latest[k] = conv.VariantName, conv.StartedAt
				}
			}
			groups[k] = append(groups[k], iv)
		}
		var want []concurrency.Series
		if !byVariant {
			want = append(want, concurrency.Series{Max: bruteMax(w, groups[""])})
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range groups {
				if byVariant && !yield(k) {
					return
				}
			}
		}) {
			want = append(want, concurrency.Series{VariantID: k, VariantName: names[k], Max: bruteMax(w, groups[k])})
		}
		if !slices.EqualFunc(got, want, func(a, b concurrency.Series) bool {
			return a.VariantID == b.VariantID && a.VariantName == b.VariantName && slices.Equal(a.Max, b.Max)
		}) {
			t.Fatalf("trial %d (filter %+v, by variant %v):\ngot  %+v\nwant %+v", trial, f, byVariant, got, want)
		}
	}
}

// BenchmarkWeek is the computation of a one-week series after the read:
// 100,000 conversations (a few minutes each, some still in progress,
// some started the day before), through the counter as the handler feeds
// it, without and with slicing by variant.
func BenchmarkWeek(b *testing.B) {
	w := concurrency.Round(t0, t0.Add(concurrency.MaxRange))
	now := w.End().Add(-time.Hour)
	convs := weekOfConversations(w, 100_000, now)
	for _, byVariant := range []bool{false, true} {
		b.Run(fmt.Sprintf("by_variant=%v", byVariant), func(b *testing.B) {
			f := concurrency.Filter{Environment: voiceops.EnvLive}
			for b.Loop() {
				c := concurrency.NewCounter(w, f, byVariant, now)
				for page := range slices.Chunk(convs, 1000) {
					c.Add(page...)
				}
				if s := c.Series(); len(s) == 0 || len(s[0].Max) != w.N {
					b.Fatal("no series")
				}
			}
		})
	}
	b.Run("sweep_only", func(b *testing.B) {
		ivs := make([]concurrency.Interval, len(convs))
		for i, c := range convs {
			ivs[i] = concurrency.Span(c, now)
		}
		for b.Loop() {
			concurrency.Max(w, ivs)
		}
	})
}

// weekOfConversations returns n live conversations starting at random in
// w, plus n/7 in the day before (which the read returns too), of 1 to 10
// minutes (1 in 50 still in progress), over five variants, in the order
// of their start as the store lists them.
func weekOfConversations(w concurrency.Windows, n int, now time.Time) []voiceops.Conversation {
	r := rand.New(rand.NewPCG(100, 1))
	out := make([]voiceops.Conversation, 0, n+n/7)
	for i := range n + n/7 {
		from, span := w.From, w.End().Sub(w.From)
		if i >= n {
			from, span = concurrency.ReadFrom(w), concurrency.MaxConversationLength
		}
		start := from.Add(time.Duration(r.Int64N(int64(span)))).Truncate(time.Millisecond)
		v := r.IntN(5)
		c := voiceops.Conversation{StartedAt: start, Environment: voiceops.EnvLive, Channel: voiceops.ChannelVoice,
			VariantID: fmt.Sprintf("var_%d", v), VariantName: fmt.Sprintf("Variant %d", v), ASRLang: "en-GB",
			FromNumber: "+441632960001", ToNumber: "+14155550100"}
		if r.IntN(50) == 0 && start.Before(now) {
			c.InProgress = true
		} else {
			end := start.Add(time.Minute + time.Duration(r.Int64N(int64(9*time.Minute))))
			c.EndedAt = &end
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b voiceops.Conversation) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}

// TestFilterDoesNotAllocate: a phone number filter over normalized numbers
// (as stored by the voice intake) costs no allocation per conversation.
func TestFilterDoesNotAllocate(t *testing.T) {
	f := concurrency.Filter{Environment: voiceops.EnvLive, Language: "en", PhoneNumber: "+14155550100"}
	c := voiceops.Conversation{Environment: voiceops.EnvLive, ASRLang: "en-GB", FromNumber: "+441632960001", ToNumber: "+14155550100"}
	if n := testing.AllocsPerRun(100, func() { f.Match(c) }); n != 0 {
		t.Errorf("%v allocations per match", n)
	}
}
