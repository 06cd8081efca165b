// Package baseapi serves the routes of the base host (doc 2, {base_url})
// that run conversations: chat, the voice intake, DNI and external events
// (outbound calling is shared/outboundapi, and the conversations lists,
// the concurrency series and the handoff state shared/conversationsapi, so
// that their functions link no conversation engine). Each
// group is a type holding only the interfaces it uses; its Routes method
// lists every route with its authentication scheme (shared/httpapi).
package baseapi

import (
	"context"

	"github.com/voiceops/opsapi/shared/conversation"
	"github.com/voiceops/opsapi/shared/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// doc2 is a route of doc 2: errors are {"error_message": ...}.
func doc2(method, path string, auth httpapi.Scheme, h httpapi.Handler) httpapi.Route {
	return httpapi.Route{Method: method, Path: path, Family: httpapi.Doc2, Auth: auth, Handle: h}
}

// Engine runs chat and voice conversations (shared/conversation.Engine).
type Engine interface {
	Start(ctx context.Context, in conversation.StartInput) (conversation.Answer, error)
	Respond(ctx context.Context, accountID, projectID, conversationID string, in conversation.TurnInput) (conversation.Answer, error)
	Close(ctx context.Context, accountID, projectID, conversationID string, reason voiceops.EndReason) (voiceops.Conversation, error)
}

// EventEngine delivers external events and bridge-ended notifications into
// conversations (shared/conversation.Engine).
type EventEngine interface {
	ExternalEvent(ctx context.Context, accountID, projectID string, ev conversation.ExternalEvent) (voiceops.Conversation, error)
	BridgeEnded(ctx context.Context, accountID, projectID, conversationID string, b conversation.Bridge) (voiceops.Conversation, error)
}

var (
	_ Engine      = (*conversation.Engine)(nil)
	_ EventEngine = (*conversation.Engine)(nil)
)
