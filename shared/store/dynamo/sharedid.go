package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// A conversation's shared ID (handoff_state?shared_id=) is found through a
// small item of the conversations table:
//
//	shared ID  pk=S#<acct>#<proj>#<shared id>  sk=S  id=<conversation id>
//
// It is written in the same transaction as every write of a conversation
// that carries a shared ID: one more Put in CreateConversation's and
// AddTurn's transactions (the engine sets the shared ID in the turn that
// hands off), and UpdateConversation becomes a TransactWriteItems of two
// instead of a PutItem for such a conversation (still one call). It
// expires with the conversation. A shared ID that changes leaves the old
// item behind: ConversationBySharedID checks the conversation still
// carries the ID it was asked for. The alternative, a global secondary
// index on shared_id, would cost no write calls but a table change in every
// region and index writes on every conversation update.
const (
	pkSharedID = "S#"
	skSharedID = "S"
	// maxKeyBytes is DynamoDB's limit on a partition key value.
	maxKeyBytes = 2048
)

// sharedIDKey returns the key of the item of a shared ID; ok is false when
// there can be none (empty, or too long for a key).
func sharedIDKey(accountID, projectID, sharedID string) (item, bool) {
	pk := pkSharedID + accountID + "#" + projectID + "#" + sharedID
	if sharedID == "" || len(pk) > maxKeyBytes {
		return nil, false
	}
	return key(pk, skSharedID), true
}

// sharedIDPut returns the Put of c's shared ID item, if c has one.
func (s *Conversations) sharedIDPut(c voiceops.Conversation) (types.TransactWriteItem, bool) {
	it, ok := sharedIDKey(c.AccountID, c.ProjectID, c.SharedID)
	if !ok {
		return types.TransactWriteItem{}, false
	}
	it[attrID] = avS(c.ID)
	setExpiry(it, c.ExpiresAt, 0)
	return types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: it}}, true
}

// ConversationBySharedID is two GetItems: the shared ID's item, then the
// conversation it names (which must still carry that shared ID).
func (s *Conversations) ConversationBySharedID(ctx context.Context, accountID, projectID, sharedID string) (voiceops.Conversation, error) {
	k, ok := sharedIDKey(accountID, projectID, sharedID)
	if !ok {
		return voiceops.Conversation{}, voiceops.ErrNotFound
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return voiceops.Conversation{}, wrap("ConversationBySharedID", err)
	}
	if len(out.Item) == 0 || expiredAt(out.Item, s.now()) {
		return voiceops.Conversation{}, voiceops.ErrNotFound
	}
	c, err := s.GetConversation(ctx, accountID, projectID, idOf(out.Item))
	if err != nil {
		return voiceops.Conversation{}, err
	}
	if c.SharedID != sharedID {
		return voiceops.Conversation{}, voiceops.ErrNotFound
	}
	return c, nil
}
