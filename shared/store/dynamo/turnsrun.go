package dynamo

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The turns index (tables.TurnsGSI) keys every turn item and turns marker
// by its project and the hour its conversation started, then by
// conversation ID and index:
//
//	turns_pk=<acct>#<proj>#<yyyymmddhh>  turns_sk=<conversation id>#<index: 8 digits | C>
//
// so that the turns of adjacent conversations on a list page are one
// Query (TurnsBetween) instead of one Query each. A project's turns of one
// hour share an index partition: at 200 turns a second about 200 WCU/s,
// well under a partition's 1,000. Items written before the index existed
// carry no index keys; their conversations are missing from TurnsBetween
// and read with Turns. Nothing writes the index's keys any more
// (pageturns.go reads turns by key): it serves the conversations written
// while it was, until they expire.

var _ voiceops.TurnsRunReader = (*Conversations)(nil)

func turnsIndexPK(accountID, projectID, conversationID string) string {
	started, _, _ := voiceops.ParseConversationID(conversationID)
	return accountID + "#" + projectID + "#" + started.UTC().Format(hourKeyLayout)
}

// TurnsBetween is one Query of the turns index (more only past 1 MB):
// the turns and markers of the conversations with IDs in [first, last],
// eventually consistent like the list page that asks for them. A
// conversation whose marker is not in the index is left out.
func (s *Conversations) TurnsBetween(ctx context.Context, accountID, projectID, first, last string) (map[string][]voiceops.Turn, error) {
	if !voiceops.ValidConversationID(first) || !voiceops.ValidConversationID(last) || last < first {
		return nil, fmt.Errorf("dynamo: TurnsBetween: %q..%q is not a range of conversation IDs", first, last)
	}
	pk := turnsIndexPK(accountID, projectID, first)
	if turnsIndexPK(accountID, projectID, last) != pk {
		return nil, fmt.Errorf("dynamo: TurnsBetween: %s and %s started in different hours", first, last)
	}
	items, err := s.query(ctx, "TurnsBetween", &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(tables.TurnsGSI.Name),
		KeyConditionExpression:   aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: map[string]string{"#pk": tables.TurnsGSI.PartitionKey, "#sk": tables.TurnsGSI.SortKey},
		ExpressionAttributeValues: item{
			":pk": avS(pk),
			// "~" sorts after the digits and the marker's "C".
			":lo": avS(first + "#"), ":hi": avS(last + "#~"),
		},
	})
	if err != nil {
		return nil, err
	}
	now := s.now()
	turns := map[string][]voiceops.Turn{}
	found := map[string]bool{}
	for _, it := range items {
		if expiredAt(it, now) {
			continue
		}
		sk, _ := it[tables.TurnsGSI.SortKey].(*types.AttributeValueMemberS)
		if sk == nil {
			return nil, wrap("TurnsBetween", fmt.Errorf("turns index item without a sort key"))
		}
		id, suffix, _ := strings.Cut(sk.Value, "#")
		if suffix == skTurnsMarker {
			found[id] = true
			continue
		}
		t, err := decodeTurn(it)
		if err != nil {
			return nil, wrap("TurnsBetween", err)
		}
		turns[id] = append(turns[id], t)
	}
	out := make(map[string][]voiceops.Turn, len(found))
	for id := range found {
		out[id] = append([]voiceops.Turn{}, turns[id]...)
	}
	return out, nil
}
