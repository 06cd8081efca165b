package conversation

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Lister reads the pages of a project's conversations list: ascending by
// start, the ones Match accepts, after skipping Offset of them. The list's
// transport (shared/baseapi) parses the query and writes the records; this
// is which conversations a page holds and what it reads to find them.
type Lister struct {
	Store voiceops.ConversationStore
}

// ListQuery is one page of a list: the range of start times, the filter,
// the number of matching conversations to skip, and the most to return.
type ListQuery struct {
	From, To time.Time
	Match    func(voiceops.Conversation) bool
	Offset   int64
	Limit    int
}

// Store reads: conversations per ListConversations call while filling a
// page, interval records per ListConversationIntervals call while skipping
// or looking ahead, conversations whose turns are read together, and Turns
// reads in flight at once.
const (
	listReadBatch   = 500
	listSkipBatch   = 5000
	listTurnsWindow = 64
	// TurnsInFlight bounds the Turns reads a page makes at once.
	TurnsInFlight = 16
)

// Page hands the page's conversations, with their turns, to add until add
// refuses one (the page is full by its own measure, and nothing follows
// it) or Limit were added, and reports whether more matching
// conversations follow.
func (l Lister) Page(ctx context.Context, accountID, projectID string, q ListQuery, add func(voiceops.Conversation, []voiceops.Turn) bool) (more bool, err error) {
	w := walk{store: l.Store, accountID: accountID, projectID: projectID, q: q}
	return w.fill(ctx, add)
}

// walk is one Page call.
type walk struct {
	store                voiceops.ConversationStore
	accountID, projectID string
	q                    ListQuery
	added                int
}

func (l *walk) fill(ctx context.Context, add func(voiceops.Conversation, []voiceops.Turn) bool) (more bool, err error) {
	cursor, found, err := l.skip(ctx)
	if err != nil || !found {
		return false, err
	}
	var pending []voiceops.Conversation // matched, turns not read yet
	// flush reads the turns of the pending conversations and adds them to
	// the page; false when the page is full by its byte budget.
	flush := func() (bool, error) {
		if len(pending) == 0 {
			return true, nil
		}
		turns, err := l.turns(ctx, pending)
		if err != nil {
			return false, err
		}
		for i, c := range pending {
			if !add(c, turns[i]) {
				return false, nil
			}
			l.added++
		}
		pending = pending[:0]
		return true, nil
	}
	for {
		want := l.q.Limit - l.added - len(pending) + 1 // one more tells whether more exist
		size := min(want+want/4+1, listReadBatch)
		batch, err := l.store.ListConversations(ctx, l.accountID, l.projectID, l.q.From, l.q.To, cursor, size)
		if err != nil {
			return false, err
		}
		for _, c := range batch {
			if !l.q.Match(c) {
				continue
			}
			if l.added+len(pending) == l.q.Limit {
				// A matching conversation is left, whether or not the
				// pending ones all fit.
				_, err := flush()
				return err == nil, err
			}
			pending = append(pending, c)
			if len(pending) == listTurnsWindow {
				if ok, err := flush(); !ok || err != nil {
					return err == nil, err // cut by the budget: more follow
				}
			}
		}
		if ok, err := flush(); !ok || err != nil {
			return err == nil, err
		}
		if len(batch) < size {
			return false, nil // the range is exhausted
		}
		cursor = batch[len(batch)-1].ID
		if l.added == l.q.Limit {
			return l.anyMatch(ctx, cursor)
		}
	}
}

// skip walks past the first `offset` matching conversations over interval
// records and returns the ID of the last one skipped ("" for offset 0);
// found is false when fewer match.
func (l *walk) skip(ctx context.Context) (cursor string, found bool, err error) {
	left := l.q.Offset
	for left > 0 {
		size := int(min(max(left+left/4, 100), listSkipBatch))
		batch, err := l.store.ListConversationIntervals(ctx, l.accountID, l.projectID, l.q.From, l.q.To, cursor, size)
		if err != nil {
			return "", false, err
		}
		for _, c := range batch {
			if l.q.Match(c) {
				if left--; left == 0 {
					return c.ID, true, nil
				}
			}
		}
		if len(batch) < size {
			return "", false, nil
		}
		cursor = batch[len(batch)-1].ID
	}
	return cursor, true, nil
}

// anyMatch reports whether a matching conversation follows cursor, over
// interval records read in growing batches.
func (l *walk) anyMatch(ctx context.Context, cursor string) (bool, error) {
	for size := 16; ; size = min(4*size, listSkipBatch) {
		batch, err := l.store.ListConversationIntervals(ctx, l.accountID, l.projectID, l.q.From, l.q.To, cursor, size)
		if err != nil {
			return false, err
		}
		for _, c := range batch {
			if l.q.Match(c) {
				return true, nil
			}
		}
		if len(batch) < size {
			return false, nil
		}
		cursor = batch[len(batch)-1].ID
	}
}

// turns reads the turns of each conversation, TurnsInFlight at a
// time. A conversation gone since it was listed (its retention ended) has
// no turns.
func (l *walk) turns(ctx context.Context, convs []voiceops.Conversation) ([][]voiceops.Turn, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([][]voiceops.Turn, len(convs))
	errs := make([]error, len(convs))
	sem := make(chan struct{}, TurnsInFlight)
	var wg sync.WaitGroup
	for i, c := range convs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ts, err := l.store.Turns(ctx, l.accountID, l.projectID, c.ID)
			if errors.Is(err, voiceops.ErrNotFound) {
				ts, err = nil, nil
			}
			if err != nil {
				cancel()
			}
			out[i], errs[i] = ts, err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
