package conversationsapi

import (
	"github.com/voiceops/opsapi/shared/platform/jsontext"

	"crypto/sha256"
	"encoding/base64"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/conversations/convlist"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Conversations is the conversations list, v3 and v1 (functions/conversations).
type Conversations struct {
	Store voiceops.ConversationStore
	Now   func() time.Time
	// Rand draws random samples (sample=random); nil: a generator seeded
	// from the system's randomness.
	Rand *rand.Rand
	// SearchExamine bounds the conversations one transcript search call
	// examines (0: SearchExamine).
	SearchExamine int
	// newPage starts a response's page (nil: newConvPage). The benchmarks
	// set it to build the same page with encoding/json, so that both are
	// measured on the same request and the same reads.
	newPage func(enc convEncoder, limit int) pageWriter
}

// pageWriter is a list response being written: records are added while
// they fit the byte budget, then the tail closes it.
type pageWriter interface {
	add(c voiceops.Conversation, turns []voiceops.Turn) bool
	count() int
	finish(t convTail) []byte
}

// Routes lists the conversations list routes (the base host).
func (g *Conversations) Routes() []httpapi.Route {
	return []httpapi.Route{
		httpapi.BaseRoute("GET", "/v3/{account_id}/{project_id}/conversations", httpapi.ProjectKey, g.listConversationsV3),
		httpapi.BaseRoute("GET", "/v1/{account_id}/{project_id}/conversations", httpapi.ProjectKey, g.listConversationsV1),
	}
}

func (g *Conversations) listConversationsV3(w http.ResponseWriter, r *http.Request, t httpapi.Caller) error {
	return g.listConversations(w, r, t, true)
}

func (g *Conversations) listConversationsV1(w http.ResponseWriter, r *http.Request, t httpapi.Caller) error {
	return g.listConversations(w, r, t, false)
}

// Limits of the conversations list.
const (
	defaultConvLimit = 5
	maxConvLimit     = 5000
	// maxConvOffset is the largest integer a JSON client reads exactly.
	maxConvOffset = 1<<53 - 1
	// convPageBudget bounds a page (docs/conversations.md: 5 MiB of JSON), measured
	// as carried in the Lambda response (wireCost), so that no response
	// reaches Lambda's 6 MB limit whatever the text it holds.
	convPageBudget = 5 << 20
	// maxCursorLength bounds the cursor parameter: a cursor of ours is
	// about 90 characters; anything longer is refused before decoding.
	maxCursorLength = 200
	// maxQueryLength bounds a transcript search's query, in bytes.
	maxQueryLength = 256
	// SearchExamine is how many conversations (matching the other
	// filters) one transcript search call examines at most: each costs a
	// read of its turns. The page then ends with a cursor to go on.
	SearchExamine = 2000
)

// convQuery is a conversations list request, validated.
type convQuery struct {
	v3       bool
	env      voiceops.Environment
	from, to time.Time // [from, to)
	limit    int
	offset   int64
	// variantID and variantName filter when set (at most one is).
	variantID, variantName *string
	inProgress             *bool
	// v3 only.
	includeLatency, includeMetadata bool
	// channels filters when not empty (any of them).
	channels []voiceops.Channel
	// after is the decoded cursor: start after this conversation ID.
	after       string
	cursorGiven bool
	sample      bool
	// queryType is "transcript" for a search (semantic is refused);
	// query and turnType ("", "user" or "agent") its terms.
	queryType, query, turnType string
	// binding identifies the project and filters a cursor belongs to.
	binding string
}

// match applies the filters; every field it reads is in the interval
// projection (ListConversationIntervals), so skipped and looked-ahead
// conversations are filtered without being read whole.
func (q convQuery) match(c voiceops.Conversation) bool {
	return c.Environment == q.env &&
		(q.variantID == nil || c.VariantID == *q.variantID) &&
		(q.variantName == nil || c.VariantName == *q.variantName) &&
		(q.inProgress == nil || c.InProgress == *q.inProgress) &&
		(len(q.channels) == 0 || slices.Contains(q.channels, c.Channel))
}

// parseConvQuery reads the query parameters of the base host's list: every bad
// parameter is reported, by name, in one 400. Unknown parameters are
// ignored; a known one given twice is an error.
func parseConvQuery(vals url.Values, v3 bool, now time.Time, accountID, projectID string) (convQuery, error) {
	q := convQuery{v3: v3, env: voiceops.EnvLive, limit: defaultConvLimit, to: now, from: time.UnixMilli(0).UTC()}
	var errs []voiceops.FieldError
	fail := func(field, msg string) { errs = append(errs, voiceops.FieldError{Field: field, Message: msg}) }
	// get returns a parameter's single value.
	get := func(name string) (string, bool) {
		vs, ok := vals[name]
		if !ok {
			return "", false
		}
		if len(vs) != 1 {
			fail(name, "must be given once")
			return "", false
		}
		return vs[0], true
	}
	if v, ok := get("client_env"); ok {
		env, ok := voiceops.ParseEnum(v, voiceops.Environments)
		if !ok {
			fail("client_env", voiceops.OneOf(voiceops.Environments))
		}
		q.env = env
	}
	times := map[string]*time.Time{"start_time": &q.from, "end_time": &q.to}
	timesOK := true
	for _, name := range []string{"start_time", "end_time"} {
		if v, ok := get(name); ok {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				fail(name, "must be an RFC 3339 date-time with a time zone, such as 2026-11-22T10:00:00Z (send + as %2B)")
				timesOK = false
				continue
			}
			*times[name] = t
		}
	}
	if timesOK && !q.from.Before(q.to) {
		if _, sent := vals["end_time"]; sent {
			fail("start_time", "must be before end_time")
		} else {
			fail("start_time", "must be before end_time, which defaults to now")
		}
	}
	if v, ok := get("limit"); ok {
		n, ok := parseDigits(v, maxConvLimit)
		if !ok || n < 1 {
			fail("limit", "must be an integer between 1 and 5000")
		}
		q.limit = int(n)
	}
	if v, ok := get("offset"); ok {
		n, ok := parseDigits(v, maxConvOffset)
		if !ok {
			fail("offset", "must be an integer between 0 and 9007199254740991")
		}
		q.offset = n
	}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"variant_id", &q.variantID}, {"variant_name", &q.variantName}} {
		if v, ok := get(f.name); ok {
			if v == "" {
				fail(f.name, "must not be empty")
			}
			*f.dst = &v
		}
	}
	if q.variantID != nil && q.variantName != nil {
		fail("variant_name", "cannot be given with variant_id: only one of them may be given")
	}
	if v, ok := get("in_progress"); ok {
		b, ok := httpapi.ParseBool(v)
		if !ok {
			fail("in_progress", "must be true or false")
		}
		q.inProgress = &b
	}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"include_latency", &q.includeLatency}, {"include_turn_metadata", &q.includeMetadata}} {
		v, ok := get(f.name)
		switch {
		case !ok:
		case !v3:
			fail(f.name, "is supported on /v3/ only")
		default:
			b, ok := httpapi.ParseBool(v)
			if !ok {
				fail(f.name, "must be true or false")
			}
			*f.dst = b
		}
	}
	v3only := func(name string) bool {
		if _, ok := vals[name]; ok && !v3 {
			fail(name, "is supported on /v3/ only")
			return false
		}
		return v3
	}
	if v3only("channel") {
		for _, v := range vals["channel"] {
			ch, ok := voiceops.ParseEnum(v, voiceops.Channels)
			if !ok {
				fail("channel", voiceops.OneOf(voiceops.Channels))
				break
			}
			if !slices.Contains(q.channels, ch) {
				q.channels = append(q.channels, ch)
			}
		}
		slices.Sort(q.channels)
	}
	if v, ok := get("sample"); ok && v3only("sample") {
		if v != "random" {
			fail("sample", "must be random")
		}
		q.sample = true
	}
	if v, ok := get("query_type"); ok && v3only("query_type") {
		switch v {
		case "transcript", "semantic":
			q.queryType = v
		default:
			fail("query_type", "must be transcript or semantic")
		}
	}
	if v, ok := get("query"); ok && v3only("query") {
		switch {
		case v == "":
			fail("query", "must not be empty")
		case len(v) > maxQueryLength:
			fail("query", "must be at most 256 bytes")
		case !utf8.ValidString(v):
			fail("query", "must be UTF-8 text")
		}
		q.query = v
	}
	if v, ok := get("turn_type"); ok && v3only("turn_type") {
		if v != "user" && v != "agent" {
			fail("turn_type", "must be user or agent")
		}
		q.turnType = v
	}
	_, hasQT := vals["query_type"]
	_, hasQ := vals["query"]
	_, hasTT := vals["turn_type"]
	switch {
	case hasQT && !hasQ:
		fail("query", "is required with query_type")
	case hasQ && !hasQT:
		fail("query_type", "is required with query (query_type=transcript)")
	case hasTT && !hasQT:
		fail("turn_type", "is only used with query_type")
	}
	_, hasOffset := vals["offset"]
	if hasQT && hasOffset {
		fail("offset", "cannot be used with query_type: page a search with cursor")
	}
	if _, ok := vals["sample"]; ok && v3 {
		for _, name := range []string{"query_type", "cursor", "offset"} {
			if _, ok := vals[name]; ok {
				fail(name, "cannot be used with sample=random")
			}
		}
	}
	q.binding = cursorBinding(accountID, projectID, vals, q)
	if v, ok := get("cursor"); ok && v3only("cursor") {
		q.cursorGiven = true
		switch {
		case hasOffset:
			fail("cursor", "cannot be used with offset")
		default:
			after, err := decodeCursor(v, q.binding)
			if err != "" {
				fail("cursor", err)
			}
			q.after = after
		}
	}
	if len(errs) > 0 {
		return q, &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "invalid query parameter", Fields: errs}
	}
	if q.queryType == "semantic" {
		return q, voiceops.Errorf(voiceops.KindUnimplemented, "query_type=semantic is not implemented; query_type=transcript is")
	}
	return q, nil
}

// A cursor is the base64url (unpadded) form of
//
//	c1.<conversation ID>.<binding>
//
// where the ID is the last conversation the previous page dealt with and
// the binding is the first 12 bytes of the SHA-256 of the account, the
// project and every filter of the list (not limit, and not the
// include_* switches), base64url. A cursor given with another project or
// other filters is refused (400), as is one that does not decode. The
// binding is not a secret: a cursor made by hand can only start a list
// of the caller's own project after an ID of its choosing, which keyset
// pagination allows anyway.
const cursorVersion = "c1"

// cursorBinding hashes what a cursor is bound to. end_time is bound as
// sent: a walk that leaves it to default to now keeps its cursors valid
// and picks up conversations started since.
func cursorBinding(accountID, projectID string, vals url.Values, q convQuery) string {
	h := sha256.New()
	put := func(s string) { h.Write([]byte(s)); h.Write([]byte{0}) }
	put(accountID)
	put(projectID)
	put(string(q.env))
	put(q.from.UTC().Format(time.RFC3339Nano))
	if _, ok := vals["end_time"]; ok {
		put(q.to.UTC().Format(time.RFC3339Nano))
	} else {
		put("now")
	}
	for _, p := range []*string{q.variantID, q.variantName} {
		if p == nil {
			put("-")
		} else {
			put("=" + *p)
		}
	}
	switch {
	case q.inProgress == nil:
		put("-")
	default:
		put(strconv.FormatBool(*q.inProgress))
	}
	for _, ch := range q.channels {
		put(string(ch))
	}
	put("|")
	put(q.queryType)
	put(q.query)
	put(q.turnType)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

func encodeCursor(lastID, binding string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + "." + lastID + "." + binding))
}

// decodeCursor returns the conversation ID a cursor carries, or why it is
// refused.
func decodeCursor(s, binding string) (string, string) {
	if s == "" || len(s) > maxCursorLength {
		return "", "is not a cursor of this list (pass the cursor of the previous page as is)"
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", "is not a cursor of this list (pass the cursor of the previous page as is)"
	}
	version, rest, ok1 := strings.Cut(string(raw), ".")
	id, bound, ok2 := strings.Cut(rest, ".")
	// Only the form encodeCursor writes: three parts, canonical base64.
	if !ok1 || !ok2 || version != cursorVersion || !voiceops.ValidConversationID(id) || encodeCursor(id, bound) != s {
		return "", "is not a cursor of this list (pass the cursor of the previous page as is)"
	}
	if bound != binding {
		return "", "belongs to another project or to other filters: a cursor is valid only with the parameters of the list it came from"
	}
	return id, ""
}

// parseDigits reads a non-negative decimal integer of at most maxVal:
// digits only (no sign, space or exponent).
func parseDigits(s string, maxVal int64) (int64, bool) {
	if s == "" || len(s) > 16 {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n <= maxVal
}

// listConversations answers the base host's conversations list.
//
// The listing is the store's order, ascending by start time (then ID),
// over [start_time, end_time), keeping the conversations that pass the
// filters. `offset` counts matching conversations: they are skipped by
// reading interval records only (a narrow projection, no state, no
// turns), then the page is read whole from there, with the turns of each
// conversation (Turns, several at once). The page ends at `limit`
// conversations or when the next one would take the JSON past the byte
// budget; `next_offset` (offset + the conversations returned) is present
// when at least one more matching conversation exists.
//
// Consistency: an offset is a position among the conversations matching
// at the time of each call. A walk over a fixed range (or one ending at
// the default end_time, now) misses and repeats nothing as long as the
// conversations before its position stay as they are: conversations that
// start later (after the cursor) are picked up by the following pages.
// What shifts positions: a conversation before the position leaving the
// filter (in_progress=true and it ends, or the reverse) or being deleted
// by the project's retention, and, on DynamoDB, a conversation created in
// the very last moment before a call and read only by the next one
// (listing reads are eventually consistent).
func (g *Conversations) listConversations(w http.ResponseWriter, r *http.Request, t httpapi.Caller, v3 bool) error {
	now := g.Now()
	q, err := parseConvQuery(r.URL.Query(), v3, now, t.AccountID, t.ProjectID)
	if err != nil {
		return err
	}
	newPage := g.newPage
	if newPage == nil {
		newPage = func(enc convEncoder, limit int) pageWriter { return newConvPage(enc, limit) }
	}
	page := newPage(convEncoder{v3: q.v3, latency: q.includeLatency, metadata: q.includeMetadata, now: now}, q.limit)
	lister := convlist.Lister{Store: g.Store}
	lq := convlist.ListQuery{From: q.from, To: q.to, Offset: q.offset, After: q.after, Limit: q.limit, Match: q.match, AsOf: now}
	var res convlist.Result
	switch {
	case q.sample:
		rnd := g.Rand
		if rnd == nil {
			rnd = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
		}
		err = lister.Sample(r.Context(), t.AccountID, t.ProjectID, lq, rnd, page.add)
	default:
		if q.queryType == "transcript" {
			lq.Turns, lq.Examine = convlist.TranscriptMatch(q.query, q.turnType), SearchExamine
			if g.SearchExamine > 0 {
				lq.Examine = g.SearchExamine
			}
		}
		res, err = lister.Page(r.Context(), t.AccountID, t.ProjectID, lq, page.add)
	}
	if err != nil {
		return err
	}
	tail := convTail{more: res.More, nextOffset: q.offset + int64(page.count())}
	// next_offset continues an offset walk (or a first page); a cursor or
	// a search continues by cursor only, a sample not at all.
	tail.offset = res.More && !q.cursorGiven && q.queryType == "" && !q.sample
	if v3 && res.More {
		tail.cursor = encodeCursor(res.Last, q.binding)
	}
	body := page.finish(tail)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

// convPage is the body of a list response being written: records are
// added while they fit in the byte budget.
type convPage struct {
	enc  convEncoder
	buf  []byte
	cost int // wireCost of buf
	n    int // records in buf
	// full is set once a record had to be cut: nothing follows it.
	full bool
	// budget is what records may take: convPageBudget less the opening
	// and the longest possible tail.
	budget int
}

const (
	convPageHead = `{"conversations":[`
	// convRecordGuess sizes a page's buffer: about a record of ten turns.
	convRecordGuess = 4 << 10
)

// newConvPage starts a page of at most limit records, its buffer sized
// for them (a record is a few KB) up to the budget.
func newConvPage(enc convEncoder, limit int) *convPage {
	size := min(limit*convRecordGuess, convPageBudget+convPageBudget/8)
	p := &convPage{enc: enc, buf: append(make([]byte, 0, size), convPageHead...)}
	p.cost = wireCost(p.buf)
	tail := p.appendTail(nil, convTail{offset: true, nextOffset: maxConvOffset + maxConvLimit, cursor: strings.Repeat("x", maxCursorLength)})
	p.budget = convPageBudget - wireCost(tail)
	return p
}

// add writes a record if it fits. The first record of a page always fits:
// when it alone is over the budget, its turns are cut to the longest
// prefix that fits (num_turns keeps the full count), and it stays alone. DynamoDB's 400 KB
// item limit keeps a record without its turns far below the budget.
func (p *convPage) add(c voiceops.Conversation, turns []voiceops.Turn) bool {
	if p.full {
		return false
	}
	mark, markCost := len(p.buf), p.cost
	if p.n > 0 {
		p.buf = append(p.buf, ',')
	}
	p.buf = p.enc.appendHead(p.buf, c, turns)
	cost := markCost + wireCost(p.buf[mark:]) + len(recordTail)
	for i, t := range turns {
		at := len(p.buf)
		if i > 0 {
			p.buf = append(p.buf, ',')
		}
		p.buf = p.enc.appendTurn(p.buf, t)
		cost += wireCost(p.buf[at:])
		if cost > p.budget {
			if p.n > 0 {
				p.buf, p.cost = p.buf[:mark], markCost
				return false
			}
			p.buf = p.buf[:at] // the first record: keep the turns that fit
			cost = markCost + wireCost(p.buf[mark:]) + len(recordTail)
			p.full = true
			break
		}
	}
	if cost > p.budget && p.n > 0 {
		p.buf, p.cost = p.buf[:mark], markCost
		return false
	}
	p.buf = append(p.buf, recordTail...)
	p.cost = cost
	p.n++
	return true
}

// convTail is what follows a page's records.
type convTail struct {
	more       bool
	offset     bool // write next_offset
	nextOffset int64
	cursor     string // v3: "" writes null
}

// appendTail closes the list: next_offset when more follow, v3's cursor
// (null at the end), and v1's descriptions.
func (p *convPage) appendTail(b []byte, t convTail) []byte {
	b = append(b, ']')
	if t.offset {
		b = append(b, `,"next_offset":`...)
		b = strconv.AppendInt(b, t.nextOffset, 10)
	}
	if p.enc.v3 {
		b = append(b, `,"cursor":`...)
		if t.cursor == "" {
			b = append(b, "null"...)
		} else {
			b = jsontext.AppendString(b, t.cursor)
		}
	}
	if !p.enc.v3 {
		b = append(b, ',')
		b = append(b, descriptionsJSON...)
	}
	return append(b, "}\n"...)
}

// count is the number of records added.
func (p *convPage) count() int { return p.n }

// finish closes the page and returns the body.
func (p *convPage) finish(t convTail) []byte {
	p.buf = p.appendTail(p.buf, t)
	return p.buf
}
