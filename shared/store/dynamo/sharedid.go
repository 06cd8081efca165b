package dynamo

import (
	"context"
	"strings"

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
// It is written in CreateConversation's transaction when the conversation
// starts with a shared ID; else before the write that gives the
// conversation its shared ID (the turn that hands off: the engine sets it
// there), one PutItem first: an item whose conversation write then fails
// names a conversation without that shared ID, which the lookup ignores.
// So a committed conversation carrying a shared ID has its item, and a
// later write of that conversation with the same shared ID and expiry
// need not write it again: it is skipped when this store read or wrote
// that very state (the version the write is conditional on) with the
// same item content (sharedIDContent; convCache in pageturns.go), and
// written first otherwise. It expires with the conversation. A shared ID
// that changes leaves the old item behind: ConversationBySharedID checks
// the conversation still carries the ID it was asked for. The
// alternative, a global secondary index on shared_id, would cost no write
// calls but a table change in every region and index writes on every
// conversation update.
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

// sharedIDContent is what the shared ID item of the conversation item
// conv holds (its key, the conversation and the expiry), as one string;
// "" when conv has no shared ID.
func sharedIDContent(conv item) string {
	if strOf(conv, attrSharedID) == "" {
		return ""
	}
	return strings.Join([]string{strOf(conv, attrAccountID), strOf(conv, attrProjectID), strOf(conv, attrSharedID),
		strOf(conv, attrID), strOf(conv, attrExpires)}, "\x00")
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
