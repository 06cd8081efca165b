package esm

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeStreams is a one-shard Streams API whose GetRecords returns one
// record on its second call and none otherwise, counting the calls.
type fakeStreams struct {
	mu       sync.Mutex
	getCalls int
}

func (f *fakeStreams) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	var out any
	switch strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDBStreams_20120810.") {
	case "DescribeStream":
		out = map[string]any{"StreamDescription": map[string]any{"Shards": []any{map[string]any{"ShardId": "s1"}}}}
	case "GetShardIterator":
		out = map[string]any{"ShardIterator": "it"}
	case "GetRecords":
		f.mu.Lock()
		f.getCalls++
		n := f.getCalls
		f.mu.Unlock()
		recs := []any{}
		if n == 2 {
			recs = append(recs, map[string]any{"eventName": "INSERT", "dynamodb": map[string]any{"SequenceNumber": "1", "ApproximateCreationDateTime": float64(time.Now().Unix())}})
		}
		out = map[string]any{"Records": recs, "NextShardIterator": "it"}
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (f *fakeStreams) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.getCalls
}

// Without a batching window the runner reads a shard no more often than
// Lambda (StreamPollInterval: four times a second), and hands a poll's
// records to the function before it polls again.
func TestRunStreamPollsNoFasterThanLambda(t *testing.T) {
	f := &fakeStreams{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	var mu sync.Mutex
	var callsAtInvoke []int
	invoke := func(ctx context.Context, fn string, payload []byte) ([]byte, bool, error) {
		mu.Lock()
		callsAtInvoke = append(callsAtInvoke, f.calls())
		mu.Unlock()
		return nil, false, nil
	}
	m := StreamMapping{Function: "evaluator", StreamARN: "arn:stream", StartingPosition: "LATEST", BatchSize: 100, MaxRetries: -1}
	ctx, cancel := context.WithTimeout(context.Background(), 1100*time.Millisecond)
	defer cancel()
	start := time.Now()
	RunStream(ctx, StreamsAPI{Endpoint: srv.URL, Region: "us-east-1"}, nil, m, invoke, slog.New(slog.DiscardHandler))
	elapsed := time.Since(start)
	// Polls start at least StreamPollInterval apart: over elapsed, at
	// most elapsed/interval + 1 of them (a slower machine makes fewer).
	if most := int(elapsed/StreamPollInterval) + 1; f.calls() > most {
		t.Errorf("%d GetRecords in %v, more than Lambda's %d", f.calls(), elapsed, most)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(callsAtInvoke) != 1 || callsAtInvoke[0] != 2 {
		t.Errorf("invoked after GetRecords calls %v, want once, right after the poll that found the record (2)", callsAtInvoke)
	}
}
