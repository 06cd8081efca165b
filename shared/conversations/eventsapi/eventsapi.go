// Package eventsapi serves the base host's events group (the base host,
// functions/events): external events pushed into live conversations and
// the bridge-ended report of handed-off calls.
package eventsapi

import (
	"context"

	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Engine delivers external events and bridge-ended notifications into
// conversations (shared/conversations/conversation.Engine).
type Engine interface {
	ExternalEvent(ctx context.Context, accountID, projectID string, ev conversation.ExternalEvent) (voiceops.Conversation, error)
	BridgeEnded(ctx context.Context, accountID, projectID, conversationID string, b conversation.Bridge) (voiceops.Conversation, error)
}

var _ Engine = (*conversation.Engine)(nil)
