package conversationsapi

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/concurrency"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/testsupport/abbench"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// BenchmarkConcurrencyAB is a one-week series of 100,000 conversations
// (plus 100,000/7 the day before, which the read returns too) as a whole
// request through the handler, the read costing nothing (weekStore), the
// sweep against two baselines on the same request, interleaved round by
// round (shared/testsupport/abbench):
//
//   - per-minute: the naive count a first version would write: +1 in
//     every minute a conversation touches, a window's value the largest
//     of its five minutes. O(conversations x their minutes), no sort; it
//     is not exact (two conversations in the same minute that never meet
//     count 2): the windows it gets wrong are reported (minute-wrong-windows,
//     minute-max-over).
//
//   - floor: the same request counting nothing (the filter, the variants'
//     names, a series of zeros of the same shape): what the request costs
//     without any count, so the sweep's own share is the difference.
//
//     go test ./shared/conversations/conversationsapi -run '^$' -bench ConcurrencyAB
func BenchmarkConcurrencyAB(b *testing.B) {
	start := time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC)
	convs := weekConversations(start, 100_000)
	store := weekStore{convs: convs}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	sweep := &Concurrency{Store: store, Now: func() time.Time { return now }}
	baselines := []struct {
		name string
		new  func(w concurrency.Windows, f concurrency.Filter, byVariant bool, now time.Time) seriesCounter
	}{
		{"per-minute", newMinuteCounter},
		{"floor", newFloorCounter},
	}
	for _, slice := range []string{"", "variant"} {
		kv := []string{"start_time", start.Format(time.RFC3339), "end_time", start.Add(7 * 24 * time.Hour).Format(time.RFC3339)}
		if slice != "" {
			kv = append(kv, "slice_by", slice)
		}
		path := concurrencyPath("proj_a1", kv...)
		for _, base := range baselines {
			b.Run(fmt.Sprintf("slice_by=%s/vs=%s", slice, base.name), func(b *testing.B) {
				h := newHarness(b)
				h.check = false
				ours := groupHandler(h, sweep)
				theirs := groupHandler(h, &Concurrency{Store: store, Now: sweep.Now, newCounter: base.new})
				call := func(g *harness) []byte {
					res := g.do("GET", path, g.keyA, nil)
					if res.Status != 200 {
						b.Fatalf("status %d: %s", res.Status, res.Body)
					}
					return res.Body
				}
				size := len(call(ours))
				abbench.Run(b, func() { call(ours) }, func() { call(theirs) })
				b.ReportMetric(float64(size), "body-bytes")
				if base.name == "per-minute" {
					wrong, over := compareCounts(convs, start, slice != "", now)
					if over < 0 {
						b.Fatalf("the per-minute count is below the sweep's by %d: it can only count more", -over)
					}
					b.ReportMetric(float64(wrong), "minute-wrong-windows")
					b.ReportMetric(float64(over), "minute-max-over")
				}
			})
		}
	}
}

// groupHandler is h serving only g (on h's stores and keys).
func groupHandler(h *harness, g *Concurrency) *harness {
	c := *h
	c.h = serveGroups(h, g.Routes())
	return &c
}

// weekConversations is BenchmarkConcurrencyWeek's week: n conversations
// starting at random in the week from start, plus n/7 the day before, of
// 1 to 10 minutes, over five variants, in ID order.
func weekConversations(start time.Time, n int) []voiceops.Conversation {
	r := rand.New(rand.NewPCG(100, 1))
	convs := make([]voiceops.Conversation, 0, n+n/7)
	for i := range n + n/7 {
		from, span := start, 7*24*time.Hour
		if i >= n {
			from, span = start.Add(-24*time.Hour), 24*time.Hour
		}
		started := from.Add(time.Duration(r.Int64N(int64(span)))).Truncate(time.Millisecond)
		ended := started.Add(time.Minute + time.Duration(r.Int64N(int64(9*time.Minute))))
		v := r.IntN(5)
		convs = append(convs, voiceops.Conversation{ID: voiceops.NewConversationID(started), AccountID: "acct_a", ProjectID: "proj_a1",
			Environment: voiceops.EnvLive, Channel: voiceops.ChannelVoice, VariantID: fmt.Sprintf("var_%d", v), VariantName: fmt.Sprintf("Variant %d", v),
			ASRLang: "en-GB", FromNumber: "+441632960001", ToNumber: "+14155550100", StartedAt: started, EndedAt: &ended})
	}
	slices.SortFunc(convs, func(a, b voiceops.Conversation) int { return strings.Compare(a.ID, b.ID) })
	return convs
}

// compareCounts runs the sweep and the per-minute count over the week and
// returns how many windows the per-minute count gets wrong and by how much
// at most (negative: it counted fewer somewhere, which it cannot).
func compareCounts(convs []voiceops.Conversation, start time.Time, byVariant bool, now time.Time) (wrong, over int) {
	w := concurrency.Round(start, start.Add(7*24*time.Hour))
	f := concurrency.Filter{Environment: voiceops.EnvLive}
	exact, naive := concurrency.NewCounter(w, f, byVariant, now), newMinuteCounter(w, f, byVariant, now)
	exact.Add(convs...)
	naive.Add(convs...)
	es, ns := exact.Series(), naive.Series()
	for i := range es {
		for k := range es[i].Max {
			switch d := ns[i].Max[k] - es[i].Max[k]; {
			case d < 0:
				return wrong, d // a bug in the baseline: it counts at least the instant's
			case d > 0:
				wrong++
				over = max(over, d)
			}
		}
	}
	return wrong, over
}

// minuteCounter is the per-minute baseline.
type minuteCounter struct {
	w         concurrency.Windows
	f         concurrency.Filter
	byVariant bool
	now       time.Time
	groups    map[string]*minuteGroup
}

type minuteGroup struct {
	name   string
	nameAt time.Time
	counts []int // per minute of the windows
}

func newMinuteCounter(w concurrency.Windows, f concurrency.Filter, byVariant bool, now time.Time) seriesCounter {
	return &minuteCounter{w: w, f: f, byVariant: byVariant, now: now, groups: map[string]*minuteGroup{}}
}

const minutesPerWindow = int(concurrency.Step / time.Minute)

func (m *minuteCounter) group(c *voiceops.Conversation) *minuteGroup {
	k := ""
	if m.byVariant {
		k = c.VariantID
	}
	g := m.groups[k]
	if g == nil {
		g = &minuteGroup{name: c.VariantName, nameAt: c.StartedAt, counts: make([]int, m.w.N*minutesPerWindow)}
		m.groups[k] = g
	}
	if m.byVariant && c.StartedAt.After(g.nameAt) {
		g.name, g.nameAt = c.VariantName, c.StartedAt
	}
	return g
}

func (m *minuteCounter) Add(convs ...voiceops.Conversation) {
	from, minutes := m.w.From, m.w.N*minutesPerWindow
	for i := range convs {
		c := &convs[i]
		if !m.f.Match(*c) {
			continue
		}
		sp := concurrency.Span(*c, m.now)
		first, last := minuteOf(sp.Start.Sub(from)), minuteOf(sp.End.Sub(from)-1)
		if last < 0 || first >= minutes {
			continue
		}
		g := m.group(c)
		for k := max(first, 0); k <= min(last, minutes-1); k++ {
			g.counts[k]++
		}
	}
}

// minuteOf is the minute holding d (rounded down, also before 0).
func minuteOf(d time.Duration) int {
	k := int(d / time.Minute)
	if d < 0 && d%time.Minute != 0 {
		k--
	}
	return k
}

func (m *minuteCounter) Series() []concurrency.Series {
	return seriesOf(m.groups, m.byVariant, m.w.N, func(g *minuteGroup, k int) int {
		return slices.Max(g.counts[k*minutesPerWindow : (k+1)*minutesPerWindow])
	})
}

// floorCounter counts nothing: the series' shape (the variants counted and
// their names) with zeros.
type floorCounter struct{ minuteCounter }

func newFloorCounter(w concurrency.Windows, f concurrency.Filter, byVariant bool, now time.Time) seriesCounter {
	return &floorCounter{minuteCounter{w: w, f: f, byVariant: byVariant, now: now, groups: map[string]*minuteGroup{}}}
}

func (m *floorCounter) Add(convs ...voiceops.Conversation) {
	for i := range convs {
		c := &convs[i]
		if !m.f.Match(*c) {
			continue
		}
		k := ""
		if m.byVariant {
			k = c.VariantID
		}
		g := m.groups[k]
		if g == nil {
			g = &minuteGroup{name: c.VariantName, nameAt: c.StartedAt}
			m.groups[k] = g
		}
		if m.byVariant && c.StartedAt.After(g.nameAt) {
			g.name, g.nameAt = c.VariantName, c.StartedAt
		}
	}
}

func (m *floorCounter) Series() []concurrency.Series {
	return seriesOf(m.groups, m.byVariant, m.w.N, func(*minuteGroup, int) int { return 0 })
}

// seriesOf orders the groups as the Counter does (one series of zeros when
// nothing counted without slicing; by variant ID when slicing).
func seriesOf(groups map[string]*minuteGroup, byVariant bool, n int, value func(*minuteGroup, int) int) []concurrency.Series {
	if !byVariant && groups[""] == nil {
		return []concurrency.Series{{Max: make([]int, n)}}
	}
	out := make([]concurrency.Series, 0, len(groups))
	for id, g := range groups {
		s := concurrency.Series{VariantID: id, VariantName: g.name, Max: make([]int, n)}
		for k := range n {
			s.Max[k] = value(g, k)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b concurrency.Series) int { return strings.Compare(a.VariantID, b.VariantID) })
	return out
}

// serveGroups serves routes as conversationsHandler does, on h's stores
// and keys.
func serveGroups(h *harness, routes ...[]httpapi.Route) http.Handler {
	return httpapi.New(httpapi.Config{Keys: authFor(h.stores, h.clock.Now), Projects: h.stores.Accounts, Now: h.clock.Now,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, routes...)
}
