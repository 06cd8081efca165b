package conversationsapi

import (
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestConversationsCursorErrors: a malformed, huge or foreign cursor is
// 400 with error_message, as are the combinations the list refuses.
func TestConversationsCursorErrors(t *testing.T) {
	h := newHarness(t)
	now := h.clock.Now()
	for i := range 6 {
		putConversation(t, h.stores.Conversations, conversationAt(now.Add(-time.Duration(6-i)*time.Minute)))
	}
	lc := listClient{tb: t, h: h.h, key: h.keyA, check: true}
	list3, list1 := "/v3/acct_a/proj_a1/conversations", "/v1/acct_a/proj_a1/conversations"
	first := lc.get(list3 + "?limit=2&in_progress=false")
	if first.Cursor == nil || len(first.IDs) != 2 {
		t.Fatalf("first page: %s", first.Body)
	}
	cur := url.QueryEscape(*first.Cursor)
	raw, _ := base64.RawURLEncoding.DecodeString(*first.Cursor)
	forged := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), "c1.", "c2.", 1)))
	cases := []struct {
		name, path, mention string
	}{
		{"not base64", list3 + "?cursor=%21%21%21", "cursor is not a cursor of this list"},
		{"empty", list3 + "?cursor=", "cursor is not a cursor of this list"},
		{"huge", list3 + "?cursor=" + strings.Repeat("A", 100_000), "cursor is not a cursor of this list"},
		{"base64 of junk", list3 + "?cursor=" + base64.RawURLEncoding.EncodeToString([]byte("c1.conv_x.y")), "cursor is not a cursor"},
		{"another version", list3 + "?cursor=" + forged, "cursor is not a cursor"},
		{"other filters", list3 + "?limit=2&cursor=" + cur, "cursor belongs to another project or to other filters"},
		{"another environment", list3 + "?in_progress=false&client_env=sandbox&cursor=" + cur, "other filters"},
		{"another project", "/v3/acct_a/proj_a2/conversations?in_progress=false&cursor=" + cur, "another project"},
		{"cursor twice", list3 + "?in_progress=false&cursor=" + cur + "&cursor=" + cur, "cursor must be given once"},
		{"with offset", list3 + "?in_progress=false&offset=2&cursor=" + cur, "cursor cannot be used with offset"},
		{"on v1", list1 + "?in_progress=false&cursor=" + cur, "cursor is supported on /v3/ only"},
		{"channel unknown", list3 + "?channel=fax", "channel must be one of"},
		{"channel on v1", list1 + "?channel=voice", "channel is supported on /v3/ only"},
		{"sample other", list3 + "?sample=first", "sample must be random"},
		{"sample with offset", list3 + "?sample=random&offset=0", "offset cannot be used with sample=random"},
		{"sample with search", list3 + "?sample=random&query_type=transcript&query=x", "query_type cannot be used with sample=random"},
		{"sample with cursor", list3 + "?in_progress=false&sample=random&cursor=" + cur, "cursor cannot be used with sample=random"},
		{"query_type without query", list3 + "?query_type=transcript", "query is required with query_type"},
		{"query without query_type", list3 + "?query=refund", "query_type is required with query"},
		{"query empty", list3 + "?query_type=transcript&query=", "query must not be empty"},
		{"query huge", list3 + "?query_type=transcript&query=" + strings.Repeat("a", 257), "query must be at most 256 bytes"},
		{"query not UTF-8", list3 + "?query_type=transcript&query=%ff", "query must be UTF-8"},
		{"query_type unknown", list3 + "?query_type=regex&query=a", "query_type must be transcript or semantic"},
		{"turn_type unknown", list3 + "?query_type=transcript&query=a&turn_type=bot", "turn_type must be user or agent"},
		{"turn_type alone", list3 + "?turn_type=user", "turn_type is only used with query_type"},
		{"search with offset", list3 + "?query_type=transcript&query=a&offset=5", "offset cannot be used with query_type"},
		{"search on v1", list1 + "?query_type=transcript&query=a", "query_type is supported on /v3/ only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := h.do("GET", c.path, h.keyA, nil).Expect(t, 400)
			msg, _ := res.JSON(t)["error_message"].(string)
			if !strings.Contains(msg, c.mention) {
				t.Errorf("error_message %q does not mention %q", msg, c.mention)
			}
		})
	}
	res := h.do("GET", list3+"?query_type=semantic&query=refund", h.keyA, nil).Expect(t, 501)
	if msg, _ := res.JSON(t)["error_message"].(string); !strings.Contains(msg, "semantic is not implemented") {
		t.Errorf("501 error_message %q", msg)
	}
	// The cursor of one page works for the next with the same filters,
	// whatever the limit and the include_* switches.
	next := lc.get(list3 + "?in_progress=false&limit=3&include_latency=true&cursor=" + cur)
	if len(next.IDs) != 3 || next.IDs[0] <= first.IDs[1] || next.NextOffset != nil {
		t.Errorf("page after the cursor: %v (first %v), next_offset %v", next.IDs, first.IDs, next.NextOffset)
	}
}

// TestConversationsCursorReadsAboutLimit: a deep page by cursor reads
// about limit conversations, where the same page by offset skips over
// every conversation before it.
func TestConversationsCursorReadsAboutLimit(t *testing.T) {
	var counter *countingConversations
	h := newHarnessWith(t, func(s voiceops.Stores) voiceops.Stores {
		counter = &countingConversations{ConversationStore: s.Conversations}
		s.Conversations = counter
		return s
	})
	h.check = false
	now := h.clock.Now()
	for i := range 2000 {
		putConversation(t, h.stores.Conversations, conversationAt(now.Add(-time.Duration(2000-i)*time.Minute)))
	}
	lc := listClient{tb: t, h: h.h, key: h.keyA}
	p := lc.get("/v3/acct_a/proj_a1/conversations?limit=5&offset=1900")
	cursor := *p.Cursor
	counter.reset()
	byCursor := lc.get("/v3/acct_a/proj_a1/conversations?limit=5&cursor=" + cursor)
	full, intervals := counter.full.Load(), counter.intervals.Load()
	t.Logf("page after 1905 by cursor: %d whole conversations, %d interval records read", full, intervals)
	if full+intervals > 30 {
		t.Errorf("%d records read for a page of 5 by cursor", full+intervals)
	}
	counter.reset()
	byOffset := lc.get("/v3/acct_a/proj_a1/conversations?limit=5&offset=1905")
	if !slices.Equal(byCursor.IDs, byOffset.IDs) || len(byCursor.IDs) != 5 {
		t.Errorf("by cursor %v, by offset %v", byCursor.IDs, byOffset.IDs)
	}
	if n := counter.full.Load() + counter.intervals.Load(); n < 1900 {
		t.Errorf("offset read %d records: the comparison is void", n)
	}
}

// TestConversationsSearch: transcript search, case-insensitive, by side,
// over the range, paged by cursor within its examine bound.
func TestConversationsSearch(t *testing.T) {
	h := newHarness(t)
	now := h.clock.Now()
	var userHits, agentHits, sandboxHits []string
	for i := range 40 {
		f := conversationAt(now.Add(-time.Duration(40-i) * time.Minute))
		turn := voiceops.Turn{Index: 1, UserInputAt: f.c.StartedAt.Add(time.Second), UserInput: "hello", AgentResponse: "hi there",
			AgentResponseAt: f.c.StartedAt.Add(2 * time.Second)}
		switch i % 5 {
		case 0:
			turn.UserInput = "I want a REFUND please"
			userHits = append(userHits, f.c.ID)
		case 1:
			turn.AgentResponse = "Your Refund is on its way"
			agentHits = append(agentHits, f.c.ID)
		case 2:
			turn.UserInput = "refunds"
			f.c.Environment = voiceops.EnvSandbox
			sandboxHits = append(sandboxHits, f.c.ID)
		}
		f.c.NumTurns = 2
		f.turns = append(f.turns, turn)
		putConversation(t, h.stores.Conversations, f)
	}
	both := append(slices.Clone(userHits), agentHits...)
	slices.Sort(both)
	lc := listClient{tb: t, h: h.h, key: h.keyA, check: true}
	for _, c := range []struct {
		params string
		want   []string
	}{
		{"query_type=transcript&query=refund", both},
		{"query_type=transcript&query=rEfUnD&turn_type=user", userHits},
		{"query_type=transcript&query=REFUND&turn_type=agent", agentHits},
		{"query_type=transcript&query=refund&client_env=sandbox", sandboxHits},
		{"query_type=transcript&query=nobody+says+this", nil},
	} {
		t.Run(c.params, func(t *testing.T) {
			got := lc.walkCursor("/v3/acct_a/proj_a1/conversations?"+c.params, 3, nil)
			if !slices.Equal(got, c.want) {
				t.Errorf("found %v, want %v", got, c.want)
			}
		})
	}
	// Through the handler with a small examine bound: a call examines at
	// most 7 conversations, and the walk still finds every hit.
	g := &Conversations{Store: h.stores.Conversations, Now: h.clock.Now, SearchExamine: 7}
	hh := httpapi.New(httpapi.Config{Keys: authFor(h.stores, h.clock.Now), Projects: h.stores.Accounts, Now: h.clock.Now,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, g.Routes())
	lc2 := listClient{tb: t, h: hh, key: h.keyA, check: true}
	p := lc2.get("/v3/acct_a/proj_a1/conversations?query_type=transcript&query=refund&limit=100")
	if len(p.IDs) != 4 || p.Cursor == nil {
		t.Errorf("first call of a bounded search: %d found (7 examined: 4 hits), cursor %v", len(p.IDs), p.Cursor)
	}
	if got := lc2.walkCursor("/v3/acct_a/proj_a1/conversations?query_type=transcript&query=refund", 100, nil); !slices.Equal(got, both) {
		t.Errorf("bounded walk found %v, want %v", got, both)
	}
}

// TestConversationsSample: sample=random returns limit distinct matching
// conversations, ascending, and different samples over several calls.
func TestConversationsSample(t *testing.T) {
	h := newHarness(t)
	now := h.clock.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	pop := &population{}
	for i := range 300 {
		f := randomConversation(rng, now.Add(-time.Duration(300-i)*time.Minute))
		putConversation(t, h.stores.Conversations, f)
		pop.add(f.c)
	}
	lc := listClient{tb: t, h: h.h, key: h.keyA, check: true}
	params := "channel=voice&channel=webchat&in_progress=false"
	vals, _ := url.ParseQuery(params)
	q, err := parseConvQuery(vals, true, now, "acct_a", "proj_a1")
	if err != nil {
		t.Fatal(err)
	}
	want := pop.want(q)
	seen := map[string]bool{}
	for range 20 {
		p := lc.get("/v3/acct_a/proj_a1/conversations?sample=random&limit=10&" + params)
		if len(p.IDs) != 10 || p.Cursor != nil || p.NextOffset != nil {
			t.Fatalf("sample: %d conversations, cursor %v, next_offset %v", len(p.IDs), p.Cursor, p.NextOffset)
		}
		if !slices.IsSorted(p.IDs) || len(slices.Compact(slices.Clone(p.IDs))) != 10 {
			t.Fatalf("sample not ascending or with repeats: %v", p.IDs)
		}
		for _, id := range p.IDs {
			if !slices.Contains(want, id) {
				t.Fatalf("%s is not in the filtered range", id)
			}
			seen[id] = true
		}
	}
	// 200 draws of 10 from about 80: a fixed or biased sample would
	// cover far fewer.
	if len(seen) < len(want)*3/4 {
		t.Errorf("20 samples covered %d of %d conversations", len(seen), len(want))
	}
	// A range smaller than limit: all of it.
	params = "start_time=" + url.QueryEscape(now.Add(-10*time.Minute).Format(time.RFC3339))
	vals, _ = url.ParseQuery(params)
	q, _ = parseConvQuery(vals, true, now, "acct_a", "proj_a1")
	p := lc.get("/v3/acct_a/proj_a1/conversations?sample=random&limit=50&" + params)
	if want := pop.want(q); !slices.Equal(p.IDs, want) {
		t.Errorf("sample of a small range with limit 50: %v, want all of %v", p.IDs, want)
	}
}

// TestConversationCustomMetrics: every metrics value is a string or an
// array of strings; a custom metric logged twice is an array, in order.
func TestConversationCustomMetrics(t *testing.T) {
	h := newHarness(t)
	f := conversationAt(h.clock.Now().Add(-time.Hour))
	f.c.Metrics = []voiceops.CustomMetric{{Name: "ORDER", Value: "A-1"}, {Name: "tier", Value: "gold"}, {Name: "ORDER", Value: "A-2"}, {Name: "ORDER", Value: ""}}
	putConversation(t, h.stores.Conversations, f)
	for _, path := range []string{"/v3/acct_a/proj_a1/conversations", "/v1/acct_a/proj_a1/conversations"} {
		body := h.do("GET", path, h.keyA, nil).Expect(t, 200).JSON(t)
		m := body["conversations"].([]any)[0].(map[string]any)["metrics"].(map[string]any)
		for k, v := range m {
			switch v := v.(type) {
			case string, nil: // nil: v1's null for an empty text
			case []any:
				for _, e := range v {
					if _, ok := e.(string); !ok {
						t.Errorf("%s: metrics.%s holds %T", path, k, e)
					}
				}
			default:
				t.Errorf("%s: metrics.%s is %T", path, k, v)
			}
		}
		if got := fmt.Sprint(m["ORDER"]); got != "[A-1 A-2 ]" {
			t.Errorf("%s: ORDER = %s", path, got)
		}
		if m["tier"] != "gold" || m["FUNCTION_ERRORS"] != "0" {
			t.Errorf("%s: tier %v, FUNCTION_ERRORS %v", path, m["tier"], m["FUNCTION_ERRORS"])
		}
	}
}

// FuzzDecodeCursor feeds arbitrary cursors to the decoder: it never
// panics, and what it accepts is a conversation ID bound as given.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor("conv_17952534000002VoiceCallGolden00000", "abc"), "abc")
	f.Add("YzEu", "abc")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, s, binding string) {
		id, msg := decodeCursor(s, binding)
		if msg == "" && (!voiceops.ValidConversationID(id) || len(s) > maxCursorLength || encodeCursor(id, binding) != s) {
			t.Errorf("accepted %q as %q", s, id)
		}
		if msg != "" && id != "" {
			t.Errorf("refused %q but returned %q", s, id)
		}
	})
}

// TestOverdueConversationsListAsEnded: a conversation idle past its due,
// not swept yet, is listed as ended then (as respond answers 410), in
// the records and in the in_progress filter.
func TestOverdueConversationsListAsEnded(t *testing.T) {
	h := newHarness(t)
	now := h.clock.Now()
	open := func(start, due time.Time, ch voiceops.Channel) voiceops.Conversation {
		f := conversationAt(start)
		f.c.InProgress, f.c.EndedAt, f.c.EndReason, f.c.IdleDue, f.c.Channel = true, nil, "", due, ch
		putConversation(t, h.stores.Conversations, f)
		return f.c
	}
	overdue := open(now.Add(-time.Hour), now.Add(-20*time.Minute), voiceops.ChannelWebchat)
	call := open(now.Add(-50*time.Minute), now.Add(-35*time.Minute), voiceops.ChannelVoice)
	live := open(now.Add(-10*time.Minute), now.Add(20*time.Minute), voiceops.ChannelWebchat)
	body := h.do("GET", "/v3/acct_a/proj_a1/conversations?limit=10", h.keyA, nil).Expect(t, 200).JSON(t)
	byID := map[string]map[string]any{}
	for _, c := range body["conversations"].([]any) {
		byID[c.(map[string]any)["id"].(string)] = c.(map[string]any)
	}
	for _, c := range []struct {
		conv       voiceops.Conversation
		inProgress bool
		reason     string
		total      float64
	}{{overdue, false, "timeout", 40 * 60}, {call, false, "crashed", 15 * 60}, {live, true, "", 10 * 60}} {
		got := byID[c.conv.ID]
		m, _ := got["metrics"].(map[string]any)
		if got["in_progress"] != c.inProgress || m["END_REASON"] != c.reason || got["total_duration"] != c.total {
			t.Errorf("%s: in_progress %v, END_REASON %v, total_duration %v; want %v %q %v", c.conv.Channel, got["in_progress"], m["END_REASON"], got["total_duration"], c.inProgress, c.reason, c.total)
		}
	}
	p := listClient{tb: t, h: h.h, key: h.keyA, check: true}.get("/v3/acct_a/proj_a1/conversations?in_progress=true")
	if !slices.Equal(p.IDs, []string{live.ID}) {
		t.Errorf("in progress: %v, want only %s", p.IDs, live.ID)
	}
}
