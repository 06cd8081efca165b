package dynamo

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// A rule's state history lives in the deliveries table, next to the events
// its changes sent, and expires with them (DeliveryLogTTL):
//
//	change  pk=HIST#<acct>#<rule>  sk=<at, sortableTime>#<version, 19 digits>
//	        attributes: from_state, to_state, current_value (absent: null), event_id (absent: none)
//
// Config.UpdateRule puts the entry in the transaction that writes the
// rule's new state, so a change and its entry exist together. The key is
// made of the change itself (its instant and the rule's new version), so
// a retried write stores it once. A page is one Query, newest first.

var _ voiceops.HistoryStore = (*Deliveries)(nil)

const (
	pkHistory     = "HIST#"
	attrFromState = "from_state"
	attrToState   = "to_state"
	attrAt        = "at"
	// historyReads bounds the GetItem calls GetDeliveries makes at once.
	historyReads = 8
)

func historyPK(accountID, ruleID string) string { return pkHistory + accountID + "#" + ruleID }

// attrSilenced marks an entry made under a silence (absent: not).
const attrSilenced = "silenced"

func historySK(c voiceops.StateChange) string {
	return sortKeyTime(c.At) + "#" + fmt.Sprintf("%019d", c.Version)
}

// historyPut is the Put of a rule write's history entry (r.Change, with
// r's account, ID and new version).
func historyPut(table string, r voiceops.AlertRule) *types.Put {
	c := *r.Change
	c.AccountID, c.RuleID, c.Version = r.AccountID, r.ID, r.Version
	it := key(historyPK(c.AccountID, c.RuleID), historySK(c))
	it[attrAccountID] = avS(c.AccountID)
	it[attrRuleID] = avS(c.RuleID)
	it[attrAt] = avT(c.At)
	it[attrFromState] = avS(string(c.From))
	it[attrToState] = avS(string(c.To))
	it[attrVersion] = avN(c.Version)
	setOpt(it, attrCurrentValue, c.Value, avN)
	setNonEmpty(it, attrEventID, c.EventID)
	if c.Silenced {
		it[attrSilenced] = avB(true)
	}
	it[attrTTL] = expiresAt(c.At)
	return &types.Put{TableName: aws.String(table), Item: it}
}

func decodeChange(it item) (voiceops.StateChange, error) {
	r := reader{it: it}
	c := voiceops.StateChange{
		AccountID: r.str(attrAccountID), RuleID: r.str(attrRuleID), At: r.time(attrAt),
		From: voiceops.State(r.str(attrFromState)), To: voiceops.State(r.str(attrToState)),
		Value: r.optNum(attrCurrentValue), Version: r.num(attrVersion),
	}
	if r.present(attrEventID) {
		c.EventID = r.str(attrEventID)
	}
	if r.present(attrSilenced) {
		c.Silenced = r.boolean(attrSilenced)
	}
	return c, r.err
}

// RuleHistory is one Query of the rule's history partition, newest first,
// bounded below by the TTL and above by the cursor.
func (s *Deliveries) RuleHistory(ctx context.Context, accountID, ruleID, cursor string, limit int) ([]voiceops.StateChange, string, error) {
	cond := "#pk = :pk AND #sk >= :lo"
	values := item{":pk": avS(historyPK(accountID, ruleID)), ":lo": avS(sortKeyTime(s.now().Add(-voiceops.DeliveryLogTTL)))}
	if cursor != "" {
		at, v, ok := voiceops.ParseHistoryCursor(cursor)
		if !ok {
			return nil, "", voiceops.ErrInvalidCursor
		}
		// Below the cursor's own key: sort keys of entries are unique, so
		// BETWEEN's inclusive top is the cursor's entry, dropped below.
		cond = "#pk = :pk AND #sk BETWEEN :lo AND :hi"
		values[":hi"] = avS(historySK(voiceops.StateChange{At: at, Version: v}))
	}
	if limit <= 0 {
		return []voiceops.StateChange{}, "", nil
	}
	items, err := s.queryLimit(ctx, "RuleHistory", &dynamodb.QueryInput{
		TableName:                 &s.table,
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(false),
	}, limit+2) // one more to tell whether a next page exists, one for the cursor's own entry
	if err != nil {
		return nil, "", err
	}
	out := make([]voiceops.StateChange, 0, min(len(items), limit))
	hi := ""
	if v, ok := values[":hi"].(*types.AttributeValueMemberS); ok {
		hi = v.Value
	}
	for _, it := range items {
		if sk, _ := it[attrSK].(*types.AttributeValueMemberS); sk != nil && sk.Value == hi {
			continue
		}
		c, err := decodeChange(it)
		if err != nil {
			return nil, "", wrap("RuleHistory", err)
		}
		if len(out) == limit {
			return out, voiceops.HistoryCursor(out[len(out)-1]), nil
		}
		out = append(out, c)
	}
	return out, "", nil
}

// GetDeliveries reads each delivery with GetItem, a few at a time (a page
// of history names at most a few hundred).
func (s *Deliveries) GetDeliveries(ctx context.Context, accountID string, refs []voiceops.DeliveryRef) ([]voiceops.Delivery, error) {
	var (
		mu    sync.Mutex
		out   []voiceops.Delivery
		first error
		wg    sync.WaitGroup
		sem   = make(chan struct{}, historyReads)
	)
	for _, ref := range refs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			d, err := s.GetDelivery(ctx, accountID, ref.EndpointID, voiceops.DeliveryID(ref.EventID, ref.EndpointID))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				out = append(out, d)
			case !errors.Is(err, voiceops.ErrNotFound) && first == nil:
				first = err
			}
		}()
	}
	wg.Wait()
	return out, first
}
