package voiceops

import "context"

// TurnsRunReader is implemented by conversation stores that read the turns
// of a run of conversations at once (a list page's), rather than one read
// per conversation (Turns).
type TurnsRunReader interface {
	// TurnsBetween returns the turns, by conversation ID, of every live
	// conversation of a project whose ID is in [first, last]; both must
	// carry the same UTC start hour. A conversation missing from the map
	// may still exist (written before the store kept turns readable this
	// way, or too recently: the read may be eventually consistent): read
	// it with Turns.
	TurnsBetween(ctx context.Context, accountID, projectID, first, last string) (map[string][]Turn, error)
}

// PageTurnsReader is implemented by conversation stores that read the
// turns of the conversations they just listed by their keys, in a few
// batched reads for a whole page.
type PageTurnsReader interface {
	// PageTurns returns the turns, by conversation ID, of convs (as the
	// store listed them). A conversation missing from the map may still
	// have turns: read it with TurnsBetween or Turns.
	PageTurns(ctx context.Context, accountID, projectID string, convs []Conversation) (map[string][]Turn, error)
}
