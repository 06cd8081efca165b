package convlist

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Lister reads the pages of a project's conversations list: ascending by
// start, the ones Match accepts, after skipping Offset of them or after
// the conversation After. The list's transport (shared/conversations/conversationsapi) parses the
// query and writes the records; this is which conversations a page holds
// and what it reads to find them.
type Lister struct {
	Store voiceops.ConversationStore
}

// ListQuery is one page of a list: the range of start times, the filter,
// where the page starts, and the most to return.
type ListQuery struct {
	From, To time.Time
	// Match filters on the fields of the interval projection
	// (ListConversationIntervals), so that skipped conversations are
	// filtered without being read whole.
	Match func(voiceops.Conversation) bool
	// Turns, when set, also filters on the conversation's turns (the
	// transcript search): a conversation must pass both. Every
	// conversation Match accepts then costs a Turns read, so a page
	// examines at most Examine of them (and then ends, Result.More set).
	Turns   func([]voiceops.Turn) bool
	Examine int
	// Offset skips that many matching conversations (interval records
	// only); After starts after that conversation ID instead (keyset: the
	// read starts there, whatever the depth). At most one is set; Offset
	// is refused with Turns.
	Offset int64
	After  string
	Limit  int
	// AsOf, when set, shows each conversation as it stands then
	// (voiceops.Conversation.AsOf: one idle past its due has ended), to
	// Match and to the page alike.
	AsOf time.Time
}

// view is c as the query sees it.
func (q ListQuery) view(c voiceops.Conversation) voiceops.Conversation {
	if q.AsOf.IsZero() {
		return c
	}
	return c.AsOf(q.AsOf)
}

// matches applies the view and Match.
func (q ListQuery) matches(c voiceops.Conversation) bool { return q.Match(q.view(c)) }

// Result is what a page found beyond its records.
type Result struct {
	// More is set when matching conversations may follow: certainly
	// without Turns; with Turns, the scan stopped at Limit or at Examine
	// and the rest of the range is unread.
	More bool
	// Last is the ID of the last conversation the page dealt with (added,
	// or examined and refused by Turns): the next page starts after it.
	Last string
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

// errOffsetWithTurns is a programming error of the transport: an offset
// counts matching conversations, which a turn filter would have to read
// whole to count.
var errOffsetWithTurns = errors.New("conversation: Offset cannot be used with a Turns filter")

// Page hands the page's conversations, with their turns, to add until add
// refuses one (the page is full by its own measure, and nothing follows
// it) or Limit were added.
func (l Lister) Page(ctx context.Context, accountID, projectID string, q ListQuery, add func(voiceops.Conversation, []voiceops.Turn) bool) (Result, error) {
	if q.Turns != nil && q.Offset > 0 {
		return Result{}, errOffsetWithTurns
	}
	w := walk{store: l.Store, accountID: accountID, projectID: projectID, q: q, add: add}
	return w.fill(ctx)
}

// walk is one Page call.
type walk struct {
	store                voiceops.ConversationStore
	accountID, projectID string
	q                    ListQuery
	add                  func(voiceops.Conversation, []voiceops.Turn) bool
	added                int
	examined             int
	last                 string
	pending              []voiceops.Conversation // matched, turns not read yet
	// gapBefore[i] is set when a conversation Match refused was listed
	// between pending[i-1] and pending[i] (their turns are not one run).
	gapBefore []bool
	gap       bool
}

// queue adds c to the pending conversations.
func (w *walk) queue(c voiceops.Conversation) {
	w.pending = append(w.pending, c)
	w.gapBefore = append(w.gapBefore, w.gap)
	w.gap = false
}

// stop says whether the walk ends after a flush.
type stop int

const (
	goOn stop = iota
	full      // add refused a record, or Limit reached with the pending ones unexamined
)

// flush reads the turns of the pending conversations and adds those that
// pass Turns; full when add refused one or Limit was reached before every
// pending conversation was dealt with.
func (w *walk) flush(ctx context.Context) (stop, error) {
	if len(w.pending) == 0 {
		return goOn, nil
	}
	turns, err := readRuns(ctx, w.store, w.accountID, w.projectID, w.pending, w.gapBefore)
	w.gapBefore, w.gap = w.gapBefore[:0], true // the next pending ones start a new run
	if err != nil {
		return goOn, err
	}
	for i, c := range w.pending {
		if w.added == w.q.Limit {
			w.pending = w.pending[:0]
			return full, nil
		}
		if w.q.Turns != nil {
			w.examined++
			if !w.q.Turns(turns[i]) {
				w.last = c.ID
				continue
			}
		}
		if !w.add(c, turns[i]) {
			w.pending = w.pending[:0]
			return full, nil
		}
		w.added++
		w.last = c.ID
	}
	w.pending = w.pending[:0]
	return goOn, nil
}

func (w *walk) fill(ctx context.Context) (Result, error) {
	cursor, found, err := w.skip(ctx)
	if err != nil || !found {
		return Result{}, err
	}
	if w.q.After != "" {
		cursor = w.q.After
	}
	w.last = cursor
	search := w.q.Turns != nil
	more := func() Result { return Result{More: true, Last: w.last} }
	for {
		var size int
		if search {
			size = min(max(w.q.Examine-w.examined, 1), listReadBatch)
		} else {
			want := w.q.Limit - w.added - len(w.pending) + 1 // one more tells whether more exist
			size = min(want+want/4+1, listReadBatch)
		}
		batch, err := w.store.ListConversations(ctx, w.accountID, w.projectID, w.q.From, w.q.To, cursor, size)
		if err != nil {
			return Result{}, err
		}
		for _, c := range batch {
			c = w.q.view(c)
			if !w.q.Match(c) {
				w.gap = true
				continue
			}
			switch {
			case !search && w.added+len(w.pending) == w.q.Limit:
				// A matching conversation is left, whether or not the
				// pending ones all fit.
				if _, err := w.flush(ctx); err != nil {
					return Result{}, err
				}
				return more(), nil
			case search && w.examined+len(w.pending) == w.q.Examine:
				if _, err := w.flush(ctx); err != nil {
					return Result{}, err
				}
				return more(), nil
			}
			w.queue(c)
			if len(w.pending) == listTurnsWindow {
				if s, err := w.flush(ctx); s == full || err != nil {
					return more(), err // cut by the budget or the limit: more follow
				}
			}
		}
		if s, err := w.flush(ctx); s == full || err != nil {
			return more(), err
		}
		if len(batch) < size {
			return Result{Last: w.last}, nil // the range is exhausted
		}
		cursor = batch[len(batch)-1].ID
		if w.added == w.q.Limit {
			if search {
				return more(), nil
			}
			any, err := w.anyMatch(ctx, cursor)
			return Result{More: any, Last: w.last}, err
		}
		if search {
			// The rest of the batch was refused by Match: the next page
			// need not read it again.
			w.last = cursor
			if w.examined >= w.q.Examine {
				return more(), nil
			}
		}
	}
}

// skip walks past the first `offset` matching conversations over interval
// records and returns the ID of the last one skipped ("" for offset 0);
// found is false when fewer match.
func (w *walk) skip(ctx context.Context) (cursor string, found bool, err error) {
	left := w.q.Offset
	for left > 0 {
		size := int(min(max(left+left/4, 100), listSkipBatch))
		batch, err := w.store.ListConversationIntervals(ctx, w.accountID, w.projectID, w.q.From, w.q.To, cursor, size)
		if err != nil {
			return "", false, err
		}
		for _, c := range batch {
			if w.q.matches(c) {
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
func (w *walk) anyMatch(ctx context.Context, cursor string) (bool, error) {
	for size := 16; ; size = min(4*size, listSkipBatch) {
		batch, err := w.store.ListConversationIntervals(ctx, w.accountID, w.projectID, w.q.From, w.q.To, cursor, size)
		if err != nil {
			return false, err
		}
		for _, c := range batch {
			if w.q.matches(c) {
				return true, nil
			}
		}
		if len(batch) < size {
			return false, nil
		}
		cursor = batch[len(batch)-1].ID
	}
}

// readRuns reads the turns of the page's conversations: where the store
// reads runs of conversations at once (voiceops.TurnsRunReader), one read
// per run of adjacent conversations (none refused by Match between them)
// that started in the same hour, TurnsInFlight at a time; then one Turns
// read for each conversation a run read did not find (alone in its run,
// written before the store kept turns that way, or too recent for an
// eventually consistent read).
func readRuns(ctx context.Context, store voiceops.ConversationStore, accountID, projectID string, convs []voiceops.Conversation, gapBefore []bool) ([][]voiceops.Turn, error) {
	out := make([][]voiceops.Turn, len(convs))
	found := make([]bool, len(convs))
	if pr, ok := store.(voiceops.PageTurnsReader); ok && len(convs) > 0 {
		// The whole page by its turns' keys: a few batched reads.
		m, err := pr.PageTurns(ctx, accountID, projectID, convs)
		if err != nil {
			return nil, err
		}
		for i, c := range convs {
			out[i], found[i] = m[c.ID]
		}
	}
	if rr, ok := store.(voiceops.TurnsRunReader); ok {
		var runs [][2]int // [start, end)
		for i := range convs {
			if found[i] {
				continue // read by PageTurns; a run is cut there
			}
			if len(runs) == 0 || gapBefore[i] || found[i-1] || startHour(convs[i].ID) != startHour(convs[i-1].ID) {
				runs = append(runs, [2]int{i, i})
			}
			runs[len(runs)-1][1] = i + 1
		}
		runs = slices.DeleteFunc(runs, func(r [2]int) bool { return r[1]-r[0] < 2 })
		maps, err := readEach(ctx, runs, func(ctx context.Context, r [2]int) (map[string][]voiceops.Turn, error) {
			return rr.TurnsBetween(ctx, accountID, projectID, convs[r[0]].ID, convs[r[1]-1].ID)
		})
		if err != nil {
			return nil, err
		}
		for k, r := range runs {
			for i := r[0]; i < r[1]; i++ {
				out[i], found[i] = maps[k][convs[i].ID]
			}
		}
	}
	var rest []voiceops.Conversation
	var at []int
	for i, c := range convs {
		if !found[i] {
			rest, at = append(rest, c), append(at, i)
		}
	}
	turns, err := readTurns(ctx, store, accountID, projectID, rest)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		out[i] = turns[j]
	}
	return out, nil
}

// startHour is the UTC hour a conversation ID carries.
func startHour(id string) int64 {
	t, _, _ := voiceops.ParseConversationID(id)
	return t.Unix() / 3600
}

// readTurns reads the turns of each conversation, TurnsInFlight at a
// time. A conversation gone since it was listed (its retention ended) has
// no turns.
func readTurns(ctx context.Context, store voiceops.ConversationStore, accountID, projectID string, convs []voiceops.Conversation) ([][]voiceops.Turn, error) {
	return readEach(ctx, convs, func(ctx context.Context, c voiceops.Conversation) ([]voiceops.Turn, error) {
		return store.Turns(ctx, accountID, projectID, c.ID)
	})
}

// readEach reads one thing per conversation (or run) with read,
// TurnsInFlight at a time, in their order. A conversation gone since it
// was listed (ErrNotFound) reads as the zero value; the first other error
// cancels the reads still running and is returned.
func readEach[C, T any](ctx context.Context, convs []C, read func(ctx context.Context, c C) (T, error)) ([]T, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]T, len(convs))
	errs := make([]error, len(convs))
	sem := make(chan struct{}, TurnsInFlight)
	var wg sync.WaitGroup
	for i, c := range convs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			v, err := read(ctx, c)
			switch {
			case errors.Is(err, voiceops.ErrNotFound):
				return
			case err != nil:
				cancel()
			}
			out[i], errs[i] = v, err
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

// SampleScan bounds the interval records a random sample reads.
const SampleScan = 10_000

// Sample hands add a random sample of up to q.Limit of the conversations
// Match accepts in [q.From, q.To), in ascending order of start, with their
// turns. It reads interval records only while choosing: from a random
// instant of the range to its end, then from its start, at most SampleScan
// of them, keeping a uniform reservoir of the matching ones. A range with
// at most SampleScan conversations is sampled uniformly; a larger one is
// sampled uniformly within a run of SampleScan conversations that begins
// at a random instant (wrapping round the range). Then the chosen
// conversations are read whole.
func (l Lister) Sample(ctx context.Context, accountID, projectID string, q ListQuery, rnd *rand.Rand, add func(voiceops.Conversation, []voiceops.Turn) bool) error {
	span := q.To.Sub(q.From)
	if span <= 0 || q.Limit <= 0 {
		return nil
	}
	pivot := q.From.Add(time.Duration(rnd.Int64N(int64(span))))
	var reservoir []voiceops.Conversation
	seen, read := 0, 0
	for _, part := range [][2]time.Time{{pivot, q.To}, {q.From, pivot}} {
		cursor := ""
		for read < SampleScan {
			size := min(listSkipBatch, SampleScan-read)
			batch, err := l.Store.ListConversationIntervals(ctx, accountID, projectID, part[0], part[1], cursor, size)
			if err != nil {
				return err
			}
			read += len(batch)
			for _, c := range batch {
				if !q.matches(c) {
					continue
				}
				seen++
				if len(reservoir) < q.Limit {
					reservoir = append(reservoir, c)
				} else if j := rnd.IntN(seen); j < q.Limit {
					reservoir[j] = c
				}
			}
			if len(batch) < size {
				break
			}
			cursor = batch[len(batch)-1].ID
		}
	}
	slices.SortFunc(reservoir, func(a, b voiceops.Conversation) int { return strings.Compare(a.ID, b.ID) })
	for start := 0; start < len(reservoir); start += listTurnsWindow {
		part := reservoir[start:min(start+listTurnsWindow, len(reservoir))]
		convs, err := l.whole(ctx, accountID, projectID, part)
		if err != nil {
			return err
		}
		turns, err := readTurns(ctx, l.Store, accountID, projectID, convs)
		if err != nil {
			return err
		}
		for i, c := range convs {
			if c.ID == "" {
				continue // gone since it was listed
			}
			if !add(q.view(c), turns[i]) {
				return nil
			}
		}
	}
	return nil
}

// whole reads the full records of conversations listed by their
// intervals, TurnsInFlight at a time; one gone since is left zero.
func (l Lister) whole(ctx context.Context, accountID, projectID string, convs []voiceops.Conversation) ([]voiceops.Conversation, error) {
	return readEach(ctx, convs, func(ctx context.Context, c voiceops.Conversation) (voiceops.Conversation, error) {
		return l.Store.GetConversation(ctx, accountID, projectID, c.ID)
	})
}

// TranscriptMatch returns the turn filter of a transcript search: some
// turn's user input (turnType "user"), agent response ("agent") or either
// ("") contains query, compared case-insensitively (Unicode simple
// folding, via lower case).
func TranscriptMatch(query, turnType string) func([]voiceops.Turn) bool {
	q := strings.ToLower(query)
	return func(turns []voiceops.Turn) bool {
		for _, t := range turns {
			if turnType != "agent" && containsFold(t.UserInput, q) {
				return true
			}
			if turnType != "user" && containsFold(t.AgentResponse, q) {
				return true
			}
		}
		return false
	}
}

func containsFold(s, lowerQuery string) bool {
	return s != "" && strings.Contains(strings.ToLower(s), lowerQuery)
}
