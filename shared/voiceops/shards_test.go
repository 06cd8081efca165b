package voiceops

import (
	"testing"
	"time"
)

// TestProjectConversationShards checks that a process keeps a quiet
// project's hour in shard 0 and spreads a busy one's over every shard,
// counting each project and each hour apart.
func TestProjectConversationShards(t *testing.T) {
	hour := time.Date(2031, 5, 6, 7, 0, 0, 0, time.UTC)
	counts := func(project string, at time.Time, n int) map[int]int {
		got := map[int]int{}
		for range n {
			id := NewProjectConversationID("acct_shards", project, at)
			started, shard, ok := ParseConversationID(id)
			if !ok || !started.Equal(at) {
				t.Fatalf("NewProjectConversationID = %q: %v %v", id, started, ok)
			}
			got[shard]++
		}
		return got
	}
	if got := counts("proj_quiet", hour.Add(time.Minute), QuietShardConversations); got[0] != QuietShardConversations {
		t.Errorf("a quiet project's first %d conversations: shards %v, want all in 0", QuietShardConversations, got)
	}
	if got := counts("proj_other", hour.Add(2*time.Minute), 1); got[0] != 1 {
		t.Errorf("another project's first conversation: shards %v, want 0", got)
	}
	// Past the quiet count, the busy project's spread over every shard.
	if got := counts("proj_quiet", hour.Add(3*time.Minute), 400); len(got) != WriteShards {
		t.Errorf("a busy project's next 400 conversations: shards %v, want all %d", got, WriteShards)
	}
	// The next hour starts again in shard 0.
	if got := counts("proj_quiet", hour.Add(time.Hour), 5); got[0] != 5 {
		t.Errorf("the next hour's first conversations: shards %v, want all in 0", got)
	}
}
