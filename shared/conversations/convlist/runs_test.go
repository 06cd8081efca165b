package convlist_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/convlist"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// runsStore records the run reads of a store that has them.
type runsStore struct {
	*memory.Store
	mu    sync.Mutex
	runs  [][2]string
	turns []string
}

func (s *runsStore) TurnsBetween(ctx context.Context, accountID, projectID, first, last string) (map[string][]voiceops.Turn, error) {
	s.mu.Lock()
	s.runs = append(s.runs, [2]string{first, last})
	s.mu.Unlock()
	return s.Store.TurnsBetween(ctx, accountID, projectID, first, last)
}

// PageTurns answers for no conversation, as the DynamoDB store does for
// those written before it kept turns_to: the runs and Turns are the
// fallback under test.
func (s *runsStore) PageTurns(context.Context, string, string, []voiceops.Conversation) (map[string][]voiceops.Turn, error) {
	return map[string][]voiceops.Turn{}, nil
}

func (s *runsStore) Turns(ctx context.Context, accountID, projectID, id string) ([]voiceops.Turn, error) {
	s.mu.Lock()
	s.turns = append(s.turns, id)
	s.mu.Unlock()
	return s.Store.Turns(ctx, accountID, projectID, id)
}

// TestPageReadsTurnsByRuns: a page reads its turns one run of adjacent
// matching conversations of one hour at a time, never across a
// conversation the filter refused or an hour boundary; a conversation
// alone in its run is read with Turns; every conversation gets its own
// turns.
func TestPageReadsTurnsByRuns(t *testing.T) {
	ctx := t.Context()
	s := &runsStore{Store: memory.New()}
	hour := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	// Minutes 50..59 of one hour, then 0..4 of the next; the one at minute
	// 53 is refused by the filter.
	var ids []string
	for i := range 15 {
		started := hour.Add(time.Duration(50+i) * time.Minute)
		c := voiceops.Conversation{
			ID: voiceops.NewConversationID(started), AccountID: "acct_a", ProjectID: "proj_a", Environment: voiceops.EnvLive,
			Channel: voiceops.ChannelWebchat, StartedAt: started, InProgress: true, NumTurns: 1, Version: 1,
			VariantID: map[bool]string{true: "other", false: "main"}[i == 3],
		}
		first := voiceops.Turn{Index: 0, AgentResponse: fmt.Sprintf("hello %d", i), AgentResponseAt: started}
		if err := s.CreateConversation(ctx, c, &first); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	var got []string
	_, err := convlist.Lister{Store: s}.Page(ctx, "acct_a", "proj_a", convlist.ListQuery{
		From: hour, To: hour.Add(2 * time.Hour), Limit: 100,
		Match: func(c voiceops.Conversation) bool { return c.VariantID == "main" },
	}, func(c voiceops.Conversation, turns []voiceops.Turn) bool {
		i := slices.Index(ids, c.ID)
		if len(turns) != 1 || turns[0].AgentResponse != fmt.Sprintf("hello %d", i) {
			t.Errorf("%s: turns %+v", c.ID, turns)
		}
		got = append(got, c.ID)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := slices.Delete(slices.Clone(ids), 3, 4); !slices.Equal(got, want) {
		t.Fatalf("page %v, want %v", got, want)
	}
	slices.SortFunc(s.runs, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	wantRuns := [][2]string{{ids[0], ids[2]}, {ids[4], ids[9]}, {ids[10], ids[14]}}
	if !slices.Equal(s.runs, wantRuns) {
		t.Errorf("runs read %v, want %v", s.runs, wantRuns)
	}
	if len(s.turns) != 0 {
		t.Errorf("Turns read for %v, want none (every conversation is in a run)", s.turns)
	}
}
