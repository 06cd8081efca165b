package conversation

import (
	"context"
	"errors"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// The voice conversation of an answered outbound call, as the calls
// service (shared/calls.Engine) runs it: started, answered and ended by
// the call, whichever provider reports it.

// StartCall starts the answered call's voice conversation: from the
// caller ID `from` to the called number, the trigger's metadata as its
// integration attributes.
func (e *Engine) StartCall(ctx context.Context, c voiceops.Call, from string) (string, voiceops.CallReply, error) {
	ans, err := e.Start(ctx, StartInput{
		AccountID: c.AccountID, ProjectID: c.ProjectID, Channel: voiceops.ChannelVoice,
		FromNumber: from, ToNumber: c.ToNumber, IntegrationAttributes: c.Metadata,
	})
	if err != nil {
		return "", voiceops.CallReply{}, err
	}
	return ans.Conversation.ID, voiceops.CallReply{Text: ans.Response, End: ans.End}, nil
}

// RespondCall answers the callee's speech or digits; a conversation that
// has ended (or is gone) answers End with no words: the call hangs up.
func (e *Engine) RespondCall(ctx context.Context, c voiceops.Call, message, dtmf string) (voiceops.CallReply, error) {
	ans, err := e.Respond(ctx, c.AccountID, c.ProjectID, c.ConversationID, TurnInput{Message: message, DTMF: dtmf})
	if errors.Is(err, ErrEnded) || errors.Is(err, ErrNoSuchConv) {
		return voiceops.CallReply{End: true}, nil
	}
	if err != nil {
		return voiceops.CallReply{}, err
	}
	return voiceops.CallReply{Text: ans.Response, End: ans.End}, nil
}

// EndCall ends the call's conversation as completed; one that has ended
// or is gone is no error.
func (e *Engine) EndCall(ctx context.Context, c voiceops.Call) error {
	_, err := e.Close(ctx, c.AccountID, c.ProjectID, c.ConversationID, voiceops.EndCompleted)
	if errors.Is(err, ErrEnded) || errors.Is(err, ErrNoSuchConv) {
		return nil
	}
	return err
}
