package conversationsapi

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// itemsDB counts the items DynamoDB reads for a store (ScannedCount of
// every Query, one per GetItem found): the read cost of a page.
type itemsDB struct {
	dynamo.DB
	items, calls atomic.Int64
}

func (c *itemsDB) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.DB.Query(ctx, in, o...)
	if err == nil {
		c.items.Add(int64(out.ScannedCount))
		c.calls.Add(1)
	}
	return out, err
}

func (c *itemsDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := c.DB.GetItem(ctx, in, o...)
	if err == nil && len(out.Item) > 0 {
		c.items.Add(1)
	}
	c.calls.Add(1)
	return out, err
}

// BenchmarkPageReadsDynamo measures the items DynamoDB reads for page 1
// and page 500 of a limit=2 walk over 1,002 conversations on moto (at
// TEST_AWS_ENDPOINT), by cursor and by offset. A cursor page starts at its
// key: it reads about the same at any depth; an offset page skips every
// conversation before it (over a narrow projection, but item by item).
//
//	go test ./shared/conversations/conversationsapi -run '^$' -bench PageReadsDynamo -benchtime 5x
func BenchmarkPageReadsDynamo(b *testing.B) {
	cdb, stores, h, key, now := dynamoBenchEnv(b)
	const n, limit, page = 1002, 2, 500
	first := now.Add(-10 * time.Hour)
	var ids []string
	for i := range n {
		f := conversationAt(first.Add(time.Duration(i) * 30 * time.Second))
		putConversation(b, stores.Conversations, f)
		ids = append(ids, f.c.ID)
	}
	// The cursor the walk's page 499 hands out: after the 998th.
	vals := map[string][]string{"limit": {fmt.Sprint(limit)}}
	q, err := parseConvQuery(vals, true, now, "acct_a", "proj_a1")
	if err != nil {
		b.Fatal(err)
	}
	deep := encodeCursor(ids[(page-1)*limit-1], q.binding)
	lc := listClient{tb: b, h: h, key: key}
	for _, c := range []struct{ name, query string }{
		{"cursor/page1", fmt.Sprintf("limit=%d", limit)},
		{"cursor/page500", fmt.Sprintf("limit=%d&cursor=%s", limit, deep)},
		{"offset/page1", fmt.Sprintf("limit=%d&offset=0", limit)},
		{"offset/page500", fmt.Sprintf("limit=%d&offset=%d", limit, (page-1)*limit)},
	} {
		b.Run(c.name, func(b *testing.B) {
			lc.tb = b
			cdb.items.Store(0)
			cdb.calls.Store(0)
			runs := 0
			for b.Loop() {
				p := lc.get("/v3/acct_a/proj_a1/conversations?" + c.query)
				if len(p.IDs) != limit {
					b.Fatalf("%d conversations", len(p.IDs))
				}
				runs++
			}
			b.ReportMetric(float64(cdb.items.Load())/float64(runs), "items/page")
			b.ReportMetric(float64(cdb.calls.Load())/float64(runs), "calls/page")
		})
	}
}

// BenchmarkTranscriptSearch10k: a transcript search over a range of
// 10,000 conversations (5 turns each; 1 in 100 mentions the term), walked
// by cursor to its end on the memory store: time of the whole search, and
// what it reads (conversation records and turn items), with the bound of
// SearchExamine conversations per call.
//
//	go test ./shared/conversations/conversationsapi -run '^$' -bench TranscriptSearch10k -benchtime 3x
func BenchmarkTranscriptSearch10k(b *testing.B) {
	var counter *countingConversations
	h := newHarnessWith(b, func(s voiceops.Stores) voiceops.Stores {
		counter = &countingConversations{ConversationStore: s.Conversations}
		s.Conversations = counter
		return s
	})
	h.check = false
	now := h.clock.Now()
	rng := rand.New(rand.NewPCG(9, 9))
	hits := 0
	for i := range 10_000 {
		f := conversationAt(now.Add(-time.Duration(10_000-i) * 10 * time.Second))
		for k := 1; k < 5; k++ {
			t := voiceops.Turn{Index: k, UserInputAt: f.c.StartedAt.Add(time.Duration(k) * time.Second), UserInput: "what is my balance today",
				AgentResponse: "Your balance is 12 dollars.", AgentResponseAt: f.c.StartedAt.Add(time.Duration(k)*time.Second + 300*time.Millisecond)}
			if k == 3 && rng.IntN(100) == 0 {
				t.UserInput = "I want a REFUND now"
				hits++
			}
			f.turns = append(f.turns, t)
		}
		f.c.NumTurns = 5
		putConversation(b, h.stores.Conversations, f)
	}
	base := "/v3/acct_a/proj_a1/conversations?query_type=transcript&query=refund&turn_type=user&start_time=" +
		now.Add(-30*time.Hour).Format(time.RFC3339)
	counter.reset()
	runs, calls := 0, 0
	for b.Loop() {
		cursor := ""
		found := 0
		for {
			path := base + "&limit=100"
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			p := listClient{tb: b, h: h.h, key: h.keyA}.get(path)
			calls++
			found += len(p.IDs)
			if p.Cursor == nil {
				break
			}
			cursor = *p.Cursor
		}
		if found != hits {
			b.Fatalf("found %d of %d", found, hits)
		}
		runs++
	}
	b.ReportMetric(float64(counter.full.Load())/float64(runs), "records/search")
	b.ReportMetric(float64(counter.turns.Load())/float64(runs), "turns-reads/search")
	b.ReportMetric(float64(counter.turns.Load())*5/float64(runs), "turn-items/search")
	b.ReportMetric(float64(calls)/float64(runs), "calls/search")
}

// BenchmarkTranscriptSearchDynamo is the search on moto (at
// TEST_AWS_ENDPOINT) over 200 conversations of 5 turns (moto slows as a
// table grows): DynamoDB items read and calls for the whole search, by
// cursor with the default bound (one call examines them all).
//
//	go test ./shared/conversations/conversationsapi -run '^$' -bench TranscriptSearchDynamo -benchtime 3x
func BenchmarkTranscriptSearchDynamo(b *testing.B) {
	cdb, stores, h, key, now := dynamoBenchEnv(b)
	const n = 200
	hits := 0
	for i := range n {
		f := conversationAt(now.Add(-time.Duration(n-i) * 10 * time.Second))
		for k := 1; k < 5; k++ {
			t := voiceops.Turn{Index: k, UserInputAt: f.c.StartedAt.Add(time.Duration(k) * time.Second), UserInput: "what is my balance today",
				AgentResponse: "Your balance is 12 dollars.", AgentResponseAt: f.c.StartedAt.Add(time.Duration(k)*time.Second + 300*time.Millisecond)}
			if k == 3 && i%100 == 7 {
				t.UserInput = "I want a REFUND now"
				hits++
			}
			f.turns = append(f.turns, t)
		}
		f.c.NumTurns = 5
		putConversation(b, stores.Conversations, f)
	}
	base := "/v3/acct_a/proj_a1/conversations?query_type=transcript&query=refund&turn_type=user&limit=100&start_time=" +
		now.Add(-30*time.Hour).Format(time.RFC3339)
	lc := listClient{tb: b, h: h, key: key}
	cdb.items.Store(0)
	cdb.calls.Store(0)
	runs, calls := 0, 0
	for b.Loop() {
		cursor, found := "", 0
		for {
			path := base
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			p := lc.get(path)
			calls++
			found += len(p.IDs)
			if p.Cursor == nil {
				break
			}
			cursor = *p.Cursor
		}
		if found != hits {
			b.Fatalf("found %d of %d", found, hits)
		}
		runs++
	}
	b.ReportMetric(float64(cdb.items.Load())/float64(runs), "items/search")
	b.ReportMetric(float64(cdb.calls.Load())/float64(runs), "dynamodb-calls/search")
	b.ReportMetric(float64(calls)/float64(runs), "calls/search")
}

// dynamoBenchEnv is the DynamoDB (moto) setup of the benchmarks above:
// fresh tables behind a client that counts the items read, an account with
// project proj_a1 and an API key, the conversations handler, and the
// benchmarks' fixed now. It skips without moto (never in CI).
func dynamoBenchEnv(b *testing.B) (*itemsDB, voiceops.Stores, http.Handler, string, time.Time) {
	b.Helper()
	if !awstest.Available(b) {
		b.Skip("needs moto at " + awstest.EndpointEnv)
	}
	ctx := context.Background()
	db := awstest.DynamoDB(b)
	cdb := &itemsDB{DB: db}
	stores := dynamo.NewStores(cdb, awstest.Tables(b, db))
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clk := func() time.Time { return now }
	prov := provision.Provisioner{Accounts: stores.Accounts, Region: voiceops.RegionUS, Now: clk}
	if _, err := prov.CreateAccount(ctx, "acct_a", "a"); err != nil {
		b.Fatal(err)
	}
	if _, err := prov.CreateProject(ctx, "acct_a", "proj_a1", "p"); err != nil {
		b.Fatal(err)
	}
	key, _, err := prov.CreateKey(ctx, voiceops.KeyAPI, "acct_a", "")
	if err != nil {
		b.Fatal(err)
	}
	return cdb, stores, conversationsHandler(stores, auth.New(stores.Accounts, voiceops.RegionUS, clk), clk), key, now
}
