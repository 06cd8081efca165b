package conversationsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// day is the day the concurrency tests' conversations happen: the day
// before the harness's clock (2026-11-22T10:00:00Z).
var day = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

func hm(s string) time.Time {
	t, err := time.Parse("15:04:05", s)
	if err != nil {
		panic(err)
	}
	return day.Add(time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second)
}

// conv describes a stored conversation for the concurrency tests.
type conv struct {
	start, end time.Time // end zero: in progress
	project    string    // default proj_a1
	env        voiceops.Environment
	variant    string // "var_a" is named "Alpha", "var_b" "Beta"
	lang, to   string
}

func (h *harness) addConversations(tb testing.TB, cs ...conv) {
	tb.Helper()
	for _, c := range cs {
		project := c.project
		if project == "" {
			project = "proj_a1"
		}
		v := voiceops.Conversation{
			ID: voiceops.NewConversationID(c.start), AccountID: "acct_a", ProjectID: project, Environment: c.env,
			Channel: voiceops.ChannelVoice, VariantID: c.variant, VariantName: map[string]string{"var_a": "Alpha", "var_b": "Beta"}[c.variant],
			ASRLang: c.lang, FromNumber: "+441632960001", ToNumber: c.to, StartedAt: c.start, InProgress: c.end.IsZero(), Version: 1,
		}
		if v.Environment == "" {
			v.Environment = voiceops.EnvLive
		}
		if !c.end.IsZero() {
			end := c.end
			v.EndedAt, v.EndReason = &end, voiceops.EndCompleted
		}
		if err := h.stores.Conversations.CreateConversation(context.Background(), v, nil); err != nil {
			tb.Fatal(err)
		}
	}
}

type seriesItem struct {
	Time        string  `json:"time"`
	Max         int     `json:"max_concurrent_conversations"`
	VariantID   *string `json:"variant_id"`
	VariantName *string `json:"variant_name"`
}

type seriesBody struct {
	AccountID string       `json:"account_id"`
	ProjectID string       `json:"project_id"`
	Intervals []seriesItem `json:"intervals"`
}

func concurrencyPath(project string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Add(kv[i], kv[i+1])
	}
	return "/v1/acct_a/" + project + "/conversations/concurrency?" + q.Encode()
}

func (h *harness) series(tb testing.TB, path, key string) seriesBody {
	tb.Helper()
	res := h.do("GET", path, key, nil).Expect(tb, 200)
	var b seriesBody
	if err := json.Unmarshal(res.Body, &b); err != nil {
		tb.Fatal(err)
	}
	return b
}

// maxes returns the values of a series without slicing, checking its times
// are every 5 minutes from first.
func maxes(tb testing.TB, b seriesBody, first time.Time) []int {
	tb.Helper()
	out := make([]int, len(b.Intervals))
	for i, it := range b.Intervals {
		if want := httpapi.Time(first.Add(time.Duration(i) * 5 * time.Minute)); it.Time != want {
			tb.Fatalf("interval %d at %s, want %s", i, it.Time, want)
		}
		if it.VariantID != nil || it.VariantName != nil {
			tb.Errorf("interval %d carries a variant without slice_by: %+v", i, it)
		}
		out[i] = it.Max
	}
	return out
}

// The range of most tests: 10:03 to 10:22, rounded to 10:00 to 10:25.
var (
	from10 = hm("10:03:00").Format(time.RFC3339)
	to10   = hm("10:22:00").Format(time.RFC3339)
)

// concurrencyFixture stores, around 10:00 to 10:25 on day:
//
//	a  09:58 - 10:07           live, var_a, en-GB, to +14155550100
//	b  10:05 - 10:10           live, var_b, en-US, to +14155550199 (on marks)
//	c  10:10 - 10:10           live, var_a, fr-FR (ended as it started)
//	d  08:00 - 10:12           live, var_a, en-GB
//	e  10:00 - 10:30           sandbox
//	f  yesterday 11:00 -       live, var_b, still in progress: counts 24 h, to 11:00
//	g  two days before -       live, still in progress: past 24 h, never counts
//	h  10:24:59 - 10:40        live, var_a, in the last window
//	i  10:25 - 10:30           live: after the range
//	j  10:01 - 10:02           proj_a2
func concurrencyFixture(t *testing.T, h *harness) {
	t.Helper()
	h.addConversations(t,
		conv{start: hm("09:58:00"), end: hm("10:07:00"), variant: "var_a", lang: "en-GB", to: "+14155550100"},
		conv{start: hm("10:05:00"), end: hm("10:10:00"), variant: "var_b", lang: "en-US", to: "+14155550199"},
		conv{start: hm("10:10:00"), end: hm("10:10:00"), variant: "var_a", lang: "fr-FR"},
		conv{start: hm("08:00:00"), end: hm("10:12:00"), variant: "var_a", lang: "en-GB"},
		conv{start: hm("10:00:00"), end: hm("10:30:00"), env: voiceops.EnvSandbox},
		conv{start: hm("11:00:00").Add(-24 * time.Hour), variant: "var_b"},
		conv{start: hm("10:00:00").Add(-48 * time.Hour)},
		conv{start: hm("10:24:59"), end: hm("10:40:00"), variant: "var_a"},
		conv{start: hm("10:25:00"), end: hm("10:30:00")},
		conv{start: hm("10:01:00"), end: hm("10:02:00"), project: "proj_a2"},
	)
}

func TestConcurrencySeries(t *testing.T) {
	h := newHarness(t)
	concurrencyFixture(t, h)
	first := hm("10:00:00")
	cases := []struct {
		name  string
		query []string
		want  []int
	}{
		// 10:00 a d f; 10:05 a b d f; 10:10 c d f (b ended at 10:10);
		// 10:15 f; 10:20 f h.
		{"live by default", nil, []int{3, 4, 3, 1, 2}},
		{"live", []string{"client_env", "live"}, []int{3, 4, 3, 1, 2}},
		{"sandbox", []string{"client_env", "sandbox"}, []int{1, 1, 1, 1, 1}},
		{"pre-release: zeros", []string{"client_env", "pre-release"}, []int{0, 0, 0, 0, 0}},
		{"variant_id", []string{"variant_id", "var_a"}, []int{2, 2, 2, 0, 1}},
		{"variant_name", []string{"variant_name", "Beta"}, []int{1, 2, 1, 1, 1}},
		{"unknown variant: zeros", []string{"variant_id", "var_zz"}, []int{0, 0, 0, 0, 0}},
		{"language with region", []string{"language", "en-GB"}, []int{2, 2, 1, 0, 0}},
		{"language without region", []string{"language", "EN"}, []int{2, 3, 1, 0, 0}},
		{"phone number", []string{"phone_number", "+14155550199"}, []int{0, 1, 0, 0, 0}},
		{"phone number, either end", []string{"phone_number", "+441632960001"}, []int{3, 4, 3, 1, 2}},
		{"phone number with separators", []string{"phone_number", "+1 (415) 555-0100"}, []int{1, 1, 0, 0, 0}},
		{"filters together", []string{"variant_id", "var_a", "language", "en", "phone_number", "+14155550100"}, []int{1, 1, 0, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := h.series(t, concurrencyPath("proj_a1", append([]string{"start_time", from10, "end_time", to10}, c.query...)...), h.keyA)
			if b.AccountID != "acct_a" || b.ProjectID != "proj_a1" {
				t.Errorf("account %q project %q", b.AccountID, b.ProjectID)
			}
			if got := maxes(t, b, first); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("series %v, want %v", got, c.want)
			}
		})
	}

	t.Run("a + sent unencoded reads as a space", func(t *testing.T) {
		path := "/v1/acct_a/proj_a1/conversations/concurrency?start_time=" + from10 + "&end_time=" + to10 + "&phone_number=+14155550199"
		if got := maxes(t, h.series(t, path, h.keyA), first); fmt.Sprint(got) != "[0 1 0 0 0]" {
			t.Errorf("series %v", got)
		}
	})
	t.Run("other zones and fractions", func(t *testing.T) {
		path := concurrencyPath("proj_a1", "start_time", "2026-11-21T12:03:00.5+02:00", "end_time", "2026-11-21T05:22:00-05:00")
		if got := maxes(t, h.series(t, path, h.keyA), first); fmt.Sprint(got) != "[3 4 3 1 2]" {
			t.Errorf("series %v", got)
		}
	})
	t.Run("one window", func(t *testing.T) {
		path := concurrencyPath("proj_a1", "start_time", hm("10:05:00").Format(time.RFC3339), "end_time", hm("10:05:00").Add(time.Nanosecond).Format(time.RFC3339Nano))
		if got := maxes(t, h.series(t, path, h.keyA), hm("10:05:00")); fmt.Sprint(got) != "[4]" {
			t.Errorf("series %v", got)
		}
	})
	t.Run("a project-scoped key", func(t *testing.T) {
		b := h.series(t, concurrencyPath("proj_a2", "start_time", from10, "end_time", to10), h.projKey2)
		if got := maxes(t, b, first); fmt.Sprint(got) != "[1 0 0 0 0]" || b.ProjectID != "proj_a2" {
			t.Errorf("series %v of %s", got, b.ProjectID)
		}
	})
	t.Run("one week: every interval, zeros included", func(t *testing.T) {
		start := hm("10:03:00").Add(-7*24*time.Hour + 25*time.Minute)
		b := h.series(t, concurrencyPath("proj_a1", "start_time", start.Format(time.RFC3339), "end_time", hm("10:28:00").Format(time.RFC3339)), h.keyA)
		got := maxes(t, b, start.Truncate(5*time.Minute))
		if len(got) != 2016+1 {
			t.Fatalf("%d intervals, want 2017", len(got))
		}
		if tail := got[len(got)-6:]; fmt.Sprint(tail) != "[3 4 3 1 2 3]" {
			t.Errorf("last intervals %v", tail)
		}
		if got[0] != 0 {
			t.Errorf("first interval %d", got[0])
		}
	})
}

func TestConcurrencySliceByVariant(t *testing.T) {
	h := newHarness(t)
	concurrencyFixture(t, h)
	b := h.series(t, concurrencyPath("proj_a1", "start_time", from10, "end_time", to10, "slice_by", "variant"), h.keyA)
	type key struct{ time, variant, name string }
	got := map[key]int{}
	var order []string
	for _, it := range b.Intervals {
		if it.VariantID == nil || it.VariantName == nil {
			t.Fatalf("item without a variant: %+v", it)
		}
		got[key{it.Time, *it.VariantID, *it.VariantName}] = it.Max
		order = append(order, it.Time+" "+*it.VariantID)
	}
	// a, c, d, h are var_a; b, f var_b; i is after the range.
	want := map[string][]int{"var_a\x00Alpha": {2, 2, 2, 0, 1}, "var_b\x00Beta": {1, 2, 1, 1, 1}}
	var wantOrder []string
	for i := range 5 {
		at := httpapi.Time(hm("10:00:00").Add(time.Duration(i) * 5 * time.Minute))
		wantOrder = append(wantOrder, at+" var_a", at+" var_b")
		for v, series := range want {
			id, name, _ := strings.Cut(v, "\x00")
			if n, ok := got[key{at, id, name}]; !ok || n != series[i] {
				t.Errorf("%s %s: %d (present %v), want %d", at, id, n, ok, series[i])
			}
		}
	}
	if strings.Join(order, ",") != strings.Join(wantOrder, ",") {
		t.Errorf("order %v, want %v", order, wantOrder)
	}

	t.Run("filtered", func(t *testing.T) {
		b := h.series(t, concurrencyPath("proj_a1", "start_time", from10, "end_time", to10, "slice_by", "variant", "language", "en-US"), h.keyA)
		if len(b.Intervals) != 5 || *b.Intervals[1].VariantID != "var_b" || b.Intervals[1].Max != 1 || b.Intervals[0].Max != 0 {
			t.Errorf("series %s", mustMarshal(t, b))
		}
	})
	t.Run("no conversation, no series", func(t *testing.T) {
		b := h.series(t, concurrencyPath("proj_a1", "start_time", from10, "end_time", to10, "slice_by", "variant", "client_env", "pre-release"), h.keyA)
		if b.Intervals == nil || len(b.Intervals) != 0 {
			t.Errorf("intervals %s, want []", mustMarshal(t, b))
		}
	})
	t.Run("conversations without a variant", func(t *testing.T) {
		b := h.series(t, concurrencyPath("proj_a1", "start_time", from10, "end_time", to10, "slice_by", "variant", "client_env", "sandbox"), h.keyA)
		if len(b.Intervals) != 5 || *b.Intervals[0].VariantID != "" || *b.Intervals[0].VariantName != "" || b.Intervals[0].Max != 1 {
			t.Errorf("series %s", mustMarshal(t, b))
		}
	})
}

func mustMarshal(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// TestConcurrencyReadsPageByPage checks that a series reads every page of
// conversations (and only the range that can count).
func TestConcurrencyReadsPageByPage(t *testing.T) {
	var calls []time.Time
	h := newHarnessWith(t, func(s voiceops.Stores) voiceops.Stores {
		s.Conversations = recordingIntervals{ConversationStore: s.Conversations, from: &calls}
		return s
	})
	old := concurrencyPage
	concurrencyPage = 3
	t.Cleanup(func() { concurrencyPage = old })
	var cs []conv
	for i := range 10 {
		cs = append(cs, conv{start: hm("10:00:00").Add(time.Duration(i) * time.Second), end: hm("10:20:00")})
	}
	h.addConversations(t, cs...)
	got := maxes(t, h.series(t, concurrencyPath("proj_a1", "start_time", from10, "end_time", to10), h.keyA), hm("10:00:00"))
	if fmt.Sprint(got) != "[10 10 10 10 0]" {
		t.Errorf("series %v", got)
	}
	if len(calls) != 4 {
		t.Errorf("%d reads of 3, want 4", len(calls))
	}
	for _, from := range calls {
		if !from.Equal(hm("10:00:00").Add(-24 * time.Hour)) {
			t.Errorf("read from %s, want 24 hours before the range", from)
		}
	}
}

type recordingIntervals struct {
	voiceops.ConversationStore
	from *[]time.Time
}

func (r recordingIntervals) ListConversationIntervals(ctx context.Context, accountID, projectID string, from, to time.Time, after string, limit int) ([]voiceops.Conversation, error) {
	*r.from = append(*r.from, from)
	return r.ConversationStore.ListConversationIntervals(ctx, accountID, projectID, from, to, after, limit)
}

func TestConcurrencyErrors(t *testing.T) {
	h := newHarness(t)
	agentKey := h.agent
	otherRegion := keys.New(voiceops.KeyAPI, voiceops.RegionEU)
	base := []string{"start_time", from10, "end_time", to10}
	q := func(kv ...string) string {
		return concurrencyPath("proj_a1", append(append([]string{}, base...), kv...)...)
	}
	week := hm("10:00:00").Add(7 * 24 * time.Hour)
	cases := []struct {
		name, path, key string
		status          int
		field           string // named in the message of a 400
	}{
		{"no key", q(), "", 401, ""},
		{"malformed key", q(), "nope", 401, ""},
		{"agent token as key", q(), agentKey, 401, ""},
		{"key of another region", q(), otherRegion, 401, ""},
		{"key of another account", q(), h.keyB, 403, ""},
		{"project key of another project", q(), h.projKey2, 403, ""},
		{"unknown account", "/v1/acct_zz/proj_a1/conversations/concurrency?start_time=" + from10 + "&end_time=" + to10, h.keyA, 403, ""},
		{"unknown project", concurrencyPath("proj_zz", base...), h.keyA, 404, ""},
		{"auth before validation", concurrencyPath("proj_zz"), h.keyA, 404, ""},
		{"no start_time", concurrencyPath("proj_a1", "end_time", to10), h.keyA, 400, "start_time is required"},
		{"no end_time", concurrencyPath("proj_a1", "start_time", from10), h.keyA, 400, "end_time is required"},
		{"no range", concurrencyPath("proj_a1"), h.keyA, 400, "start_time is required; end_time is required"},
		{"start_time not a date-time", concurrencyPath("proj_a1", "start_time", "yesterday", "end_time", to10), h.keyA, 400, "start_time must be an RFC 3339"},
		{"date without time", concurrencyPath("proj_a1", "start_time", "2026-11-21", "end_time", to10), h.keyA, 400, "start_time"},
		{"no time zone", concurrencyPath("proj_a1", "start_time", "2026-11-21T10:00:00", "end_time", to10), h.keyA, 400, "start_time"},
		{"year 1", concurrencyPath("proj_a1", "start_time", "0001-01-01T00:00:00Z", "end_time", "0001-01-02T00:00:00Z"), h.keyA, 400, "start_time must be from 1970 to 2199"},
		{"year 9999", concurrencyPath("proj_a1", "start_time", "9999-01-01T00:00:00Z", "end_time", "9999-01-02T00:00:00Z"), h.keyA, 400, "end_time must be from 1970 to 2199"},
		{"empty end_time", concurrencyPath("proj_a1", "start_time", from10, "end_time", ""), h.keyA, 400, "end_time must be an RFC 3339"},
		{"start equals end", concurrencyPath("proj_a1", "start_time", from10, "end_time", from10), h.keyA, 400, "end_time must be after start_time"},
		{"start after end", concurrencyPath("proj_a1", "start_time", to10, "end_time", from10), h.keyA, 400, "end_time must be after start_time"},
		{"more than a week", concurrencyPath("proj_a1", "start_time", hm("10:00:00").Format(time.RFC3339), "end_time", week.Add(time.Second).Format(time.RFC3339)), h.keyA, 400, "one week"},
		{"start_time twice", q("start_time", from10), h.keyA, 400, "start_time must be given once"},
		{"unknown client_env", q("client_env", "production"), h.keyA, 400, "client_env"},
		{"variant_id and variant_name", q("variant_id", "var_a", "variant_name", "Alpha"), h.keyA, 400, "variant_name only one of"},
		{"empty variant_id", q("variant_id", ""), h.keyA, 400, "variant_id must not be empty"},
		{"malformed language", q("language", "english"), h.keyA, 400, "language"},
		{"malformed phone number", q("phone_number", "call me"), h.keyA, 400, "phone_number"},
		{"phone number too long", q("phone_number", "+1234567890123456"), h.keyA, 400, "phone_number"},
		{"unknown slice_by", q("slice_by", "channel"), h.keyA, 400, "slice_by"},
		{"slice_by language", q("slice_by", "language"), h.keyA, 501, "slice_by=language"},
		{"slice_by phone_number", q("slice_by", "phone_number"), h.keyA, 501, "slice_by=phone_number"},
		{"400 before 501", concurrencyPath("proj_a1", "slice_by", "language"), h.keyA, 400, "start_time is required"},
		{"POST", q(), h.keyA, 405, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method := "GET"
			if c.name == "POST" {
				method = "POST"
			}
			res := h.do(method, c.path, c.key, nil).Expect(t, c.status)
			msg, _ := res.JSON(t)["error_message"].(string)
			if msg == "" || !strings.Contains(msg, c.field) {
				t.Errorf("error_message %q does not mention %q", msg, c.field)
			}
		})
	}
	// Exactly one week is allowed.
	h.series(t, concurrencyPath("proj_a1", "start_time", hm("10:00:00").Format(time.RFC3339), "end_time", week.Format(time.RFC3339)), h.keyA)
}

// TestConcurrencyTooLarge: a week sliced by many variants with long names
// would exceed the response budget: 400 instead of a failing Lambda
// response.
func TestConcurrencyTooLarge(t *testing.T) {
	h := newHarness(t)
	start := hm("00:00:00").Add(-6 * 24 * time.Hour)
	for i := range 20 {
		c := voiceops.Conversation{
			ID: voiceops.NewConversationID(start), AccountID: "acct_a", ProjectID: "proj_a1", Environment: voiceops.EnvLive,
			VariantID: fmt.Sprintf("var_%02d", i), VariantName: strings.Repeat("long name ", 25), StartedAt: start, InProgress: true, Version: 1,
		}
		if err := h.stores.Conversations.CreateConversation(context.Background(), c, nil); err != nil {
			t.Fatal(err)
		}
	}
	path := concurrencyPath("proj_a1", "start_time", start.Format(time.RFC3339), "end_time", start.Add(7*24*time.Hour).Format(time.RFC3339), "slice_by", "variant")
	res := h.do("GET", path, h.keyA, nil).Expect(t, 400)
	if msg := res.JSON(t)["error_message"].(string); !strings.Contains(msg, "larger than 5 MiB") {
		t.Errorf("error_message %q", msg)
	}
	// Without slicing, the same range is small.
	h.series(t, concurrencyPath("proj_a1", "start_time", start.Format(time.RFC3339), "end_time", start.Add(7*24*time.Hour).Format(time.RFC3339)), h.keyA)
}

// failingIntervals fails the interval read with internal text.
type failingIntervals struct{ voiceops.ConversationStore }

func (failingIntervals) ListConversationIntervals(context.Context, string, string, time.Time, time.Time, string, int) ([]voiceops.Conversation, error) {
	return nil, errDynamo
}

func (failingIntervals) ConversationBySharedID(context.Context, string, string, string) (voiceops.Conversation, error) {
	return voiceops.Conversation{}, errDynamo
}

func (failingIntervals) GetConversation(context.Context, string, string, string) (voiceops.Conversation, error) {
	return voiceops.Conversation{}, errDynamo
}

func TestConversationsStoreErrorsAre500(t *testing.T) {
	h := newHarnessWith(t, func(s voiceops.Stores) voiceops.Stores {
		s.Conversations = failingIntervals{s.Conversations}
		return s
	})
	for _, path := range []string{
		concurrencyPath("proj_a1", "start_time", from10, "end_time", to10),
		"/v1/acct_a/proj_a1/handoff_state?id=conv_17953416000000SampleConversation01",
		"/v1/acct_a/proj_a1/handoff_state?shared_id=shr_1",
	} {
		res := h.do("GET", path, h.keyA, nil).Expect(t, 500)
		m := res.JSON(t)
		if m["error_message"] != "internal error" || strings.Contains(string(res.Body), "Provisioned") {
			t.Errorf("%s: body %s", path, res.Body)
		}
	}
}

// weekStore serves a week of conversations from memory, already decoded,
// so that a benchmark of the handler measures what follows the read.
type weekStore struct {
	voiceops.ConversationStore
	convs []voiceops.Conversation // in ID order
}

func (s weekStore) ListConversationIntervals(_ context.Context, _, _ string, from, to time.Time, after string, limit int) ([]voiceops.Conversation, error) {
	i, _ := slices.BinarySearchFunc(s.convs, after, func(c voiceops.Conversation, id string) int { return strings.Compare(c.ID, id) })
	for i < len(s.convs) && (s.convs[i].ID <= after || s.convs[i].StartedAt.Before(from)) {
		i++
	}
	j := i
	for j < len(s.convs) && j-i < limit && s.convs[j].StartedAt.Before(to) {
		j++
	}
	return s.convs[i:j], nil
}

// BenchmarkConcurrencyWeek is a one-week series of 100,000 conversations
// (plus 100,000/7 the day before, which the read returns too) through the
// handler, the read costing nothing: query, counting, sweep and JSON.
func BenchmarkConcurrencyWeek(b *testing.B) {
	start := time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC)
	convs := weekConversations(start, 100_000)
	h := newHarnessWith(b, func(s voiceops.Stores) voiceops.Stores {
		s.Conversations = weekStore{ConversationStore: s.Conversations, convs: convs}
		return s
	})
	h.check = false
	for _, slice := range []string{"", "variant"} {
		b.Run("slice_by="+slice, func(b *testing.B) {
			kv := []string{"start_time", start.Format(time.RFC3339), "end_time", start.Add(7 * 24 * time.Hour).Format(time.RFC3339)}
			if slice != "" {
				kv = append(kv, "slice_by", slice)
			}
			path := concurrencyPath("proj_a1", kv...)
			var size int
			for b.Loop() {
				res := h.do("GET", path, h.keyA, nil)
				if res.Status != 200 {
					b.Fatalf("status %d: %s", res.Status, res.Body)
				}
				size = len(res.Body)
			}
			b.ReportMetric(float64(size), "body-bytes")
		})
	}
}
