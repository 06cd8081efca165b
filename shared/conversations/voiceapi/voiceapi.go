// Package voiceapi serves the base host's voice groups (the base host), both run
// by functions/calls: Voice, the voice intake of the telephony bridge
// (start, turns, end of a call's conversation), and DNI, the reservation
// of dynamic numbers.
package voiceapi

import (
	"context"

	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Engine runs voice conversations (shared/conversations/conversation.Engine).
type Engine interface {
	Start(ctx context.Context, in conversation.StartInput) (conversation.Answer, error)
	Respond(ctx context.Context, accountID, projectID, conversationID string, in conversation.TurnInput) (conversation.Answer, error)
	Close(ctx context.Context, accountID, projectID, conversationID string, reason voiceops.EndReason) (voiceops.Conversation, error)
}

var _ Engine = (*conversation.Engine)(nil)
