// Package chatapi serves the base host's chat group (the base host): create,
// respond and close a chat conversation (functions/chat). Each base-host
// group has a package of its own (chatapi, voiceapi, eventsapi,
// conversationsapi, outboundapi), so that each function links only the
// group it serves (scripts/checklinks holds them to it).
package chatapi

import (
	"context"

	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Engine runs chat conversations (shared/conversations/conversation.Engine).
type Engine interface {
	Start(ctx context.Context, in conversation.StartInput) (conversation.Answer, error)
	Respond(ctx context.Context, accountID, projectID, conversationID string, in conversation.TurnInput) (conversation.Answer, error)
	Close(ctx context.Context, accountID, projectID, conversationID string, reason voiceops.EndReason) (voiceops.Conversation, error)
}

var _ Engine = (*conversation.Engine)(nil)
