package voiceops

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// QuietShardConversations is how many conversations one process starts in a
// project's hour before it spreads them over the WriteShards: a
// quiet project's hour then sits in shard 0 alone, so a list page reads one
// partition for it (and the hour index names one), while a busy project's
// writes still spread once each process has started that many. Every
// process starts an hour in shard 0, so an hour with conversations always
// has some there.
const QuietShardConversations = 32

// shardCountsMax bounds the projects counted per hour in one process; past
// it new projects' conversations are spread at once.
const shardCountsMax = 10_000

// shards counts, per project, the conversations this process has started in
// the current hour (UTC).
var shards struct {
	mu     sync.Mutex
	hour   int64
	counts map[[2]string]int
}

// NewProjectConversationID returns a new ID for a conversation of a project
// that starts at startedAt, its shard chosen as QuietShardConversations
// says. NewConversationID draws the shard at random.
func NewProjectConversationID(accountID, projectID string, startedAt time.Time) string {
	return fmt.Sprintf("%s%013d%d%s", PrefixConversation, startedAt.UnixMilli(), chooseShard(accountID, projectID, startedAt), RandomBase62(20))
}

func chooseShard(accountID, projectID string, startedAt time.Time) int {
	hour := startedAt.UTC().Truncate(time.Hour).Unix()
	k := [2]string{accountID, projectID}
	shards.mu.Lock()
	defer shards.mu.Unlock()
	if shards.hour != hour || shards.counts == nil {
		shards.hour, shards.counts = hour, map[[2]string]int{}
	}
	n, seen := shards.counts[k]
	if !seen && len(shards.counts) >= shardCountsMax {
		return rand.IntN(WriteShards)
	}
	shards.counts[k] = n + 1
	if n < QuietShardConversations {
		return 0
	}
	return rand.IntN(WriteShards)
}
