package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// An outbound call is one item of the calls table (tables.Calls), found by
// its SID alone:
//
//	call  pk=CALL#<sid>  sk=C  account_id project_id to_number metadata(JSON) status
//	                           created_at updated_at; with a terminal status also
//	                           expires (exact) and expires_at (TTL, unix seconds);
//	                           encryption, country_code, reason, conversation_id when set
//	pace  pk=PACE#<account> sk=P  next_at (unix ms of the next free slot)
//	                           interval_ms and rate (set by the operator: opsctl outbound rate)
//
// A status change is one conditional UpdateItem on the current status (the
// transition's only predecessor) and on the call not being expired.
const (
	pkCall = "CALL#"
	skCall = "C"

	attrEncryption  = "encryption"
	attrCountryCode = "country_code"
	attrReason      = "reason"
	// attrMove is the ID of the last status change, drawn by each MoveCall:
	// a retried move whose first attempt was applied (its answer lost: see
	// applied) finds its own ID and is not taken for a lost race.
	attrMove   = "move_id"
	attrConvID = "conversation_id"

	// The callback steps of an answered call (voiceops.Call.Steps).
	attrSteps       = "steps"
	attrStepAt      = "step_at"
	attrStepAtNanos = "step_at_ns" // step_at as a number, for the takeover's comparison
	attrStepToken   = "step_token"
	attrStepClaim   = "step_claim" // the claim's random ID (see attrMove)
	attrReplyStep   = "reply_step"
	// The claimed step's input and its asynchronous run's start
	// (voiceops.Call.StepInput, StepStarted).
	attrStepFrom     = "step_from"
	attrStepMessage  = "step_message"
	attrStepDTMF     = "step_dtmf"
	attrStepStarted  = "step_started"
	attrReplyText    = "reply_text"
	attrReplyEnd     = "reply_end"
	attrGreetingText = "greeting_text"
	attrGreetingEnd  = "greeting_end"
)

// Calls is the DynamoDB store of outbound calls.
type Calls struct{ store }

// NewCalls returns the call store on the calls table named table.
func NewCalls(db DB, table string) *Calls { return &Calls{newStore(db, table)} }

var _ voiceops.CallStore = (*Calls)(nil)

func callKey(sid string) item { return key(pkCall+sid, skCall) }

// CreateCall puts the call if its SID is new.
func (s *Calls) CreateCall(ctx context.Context, c voiceops.Call) error {
	it := callKey(c.SID)
	it[attrAccountID] = avS(c.AccountID)
	it[attrProjectID] = avS(c.ProjectID)
	it[attrToNumber] = avS(c.ToNumber)
	it[attrStatus] = avS(string(c.Status))
	it[attrCreatedAt] = avT(c.CreatedAt)
	it[attrUpdatedAt] = avT(c.UpdatedAt)
	for name, v := range map[string]string{attrEncryption: c.Encryption, attrCountryCode: c.CountryCode, attrReason: c.Reason, attrConvID: c.ConversationID} {
		if v != "" {
			it[name] = avS(v)
		}
	}
	if c.Metadata != nil {
		b, err := json.Marshal(c.Metadata)
		if err != nil {
			return wrap("CreateCall", err)
		}
		it[attrMetadata] = avS(string(b))
	}
	if c.ExpiresAt != nil {
		it[attrExpires] = avT(*c.ExpiresAt)
		it[attrTTL] = avN(ttlSeconds(*c.ExpiresAt))
	}
	putSteps(it, c)
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table, Item: it, ConditionExpression: aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK},
	})
	if _, ok := conditionFailed(err); ok {
		return voiceops.ErrAlreadyExists
	}
	if err != nil {
		return wrap("CreateCall", err)
	}
	return nil
}

// putSteps writes the call's callback steps as ClaimCallStep and
// ReplyCallStep do (a new call has none; a copied one keeps them).
func putSteps(it item, c voiceops.Call) {
	if c.Steps > 0 {
		it[attrSteps] = avN(int64(c.Steps))
	}
	if c.StepAt != nil {
		it[attrStepAt], it[attrStepAtNanos] = avT(*c.StepAt), avN(c.StepAt.UnixNano())
	}
	setNonEmpty(it, attrStepToken, c.StepToken)
	setNonEmpty(it, attrStepFrom, c.StepInput.From)
	setNonEmpty(it, attrStepMessage, c.StepInput.Message)
	setNonEmpty(it, attrStepDTMF, c.StepInput.DTMF)
	if c.StepStarted != nil {
		it[attrStepStarted] = avT(*c.StepStarted)
	}
	if r := c.Reply; r != nil {
		it[attrReplyStep], it[attrReplyText], it[attrReplyEnd] = avN(int64(r.Step)), avS(r.Text), avB(r.End)
	}
	if g := c.Greeting; g != nil {
		it[attrGreetingText], it[attrGreetingEnd] = avS(g.Text), avB(g.End)
	}
}

// ttlSeconds rounds up, so DynamoDB never deletes a call before it expires.
func ttlSeconds(t time.Time) int64 {
	sec := t.Unix()
	if t.After(time.Unix(sec, 0)) {
		sec++
	}
	return sec
}

// GetCall reads the call: one consistent GetItem.
func (s *Calls) GetCall(ctx context.Context, sid string, now time.Time) (voiceops.Call, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: callKey(sid), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return voiceops.Call{}, wrap("GetCall", err)
	}
	if len(out.Item) == 0 {
		return voiceops.Call{}, voiceops.ErrNotFound
	}
	c, err := readCall(sid, out.Item)
	if err != nil {
		return voiceops.Call{}, wrap("GetCall", err)
	}
	if c.Expired(now) {
		return voiceops.Call{}, voiceops.ErrNotFound
	}
	return c, nil
}

// MoveCall is one conditional UpdateItem: the call exists, has the
// transition's predecessor status and is not expired (a call with a
// predecessor status has no expiry, so the status condition covers it).
func (s *Calls) MoveCall(ctx context.Context, sid string, to voiceops.CallStatus, reason string, at time.Time) (voiceops.Call, error) {
	from, ok := voiceops.CallPredecessor(to)
	if !ok {
		// No transition leads to `to`: refuse, after telling a missing call apart.
		if _, err := s.GetCall(ctx, sid, at); err != nil {
			return voiceops.Call{}, err
		}
		return voiceops.Call{}, voiceops.ErrCallTransition
	}
	move := voiceops.RandomBase62(16)
	names := map[string]string{"#pk": attrPK, "#status": attrStatus, "#updated": attrUpdatedAt, "#move": attrMove}
	values := item{":from": avS(string(from)), ":to": avS(string(to)), ":at": avT(at), ":move": avS(move)}
	update := "SET #status = :to, #updated = :at, #move = :move"
	if to.Terminal() {
		exp := at.Add(voiceops.CallRetention)
		names["#expires"], names["#ttl"] = attrExpires, attrTTL
		values[":expires"], values[":ttl"] = avT(exp), avN(ttlSeconds(exp))
		update += ", #expires = :expires, #ttl = :ttl"
	}
	if to == voiceops.CallFailure && reason != "" {
		names["#reason"], values[":reason"] = attrReason, avS(reason)
		update += ", #reason = :reason"
	}
	out, err := s.updateCall(ctx, sid, update, "attribute_exists(#pk) AND #status = :from", names, values)
	if old, ok := conditionFailed(err); ok {
		if len(old) == 0 {
			return voiceops.Call{}, voiceops.ErrNotFound
		}
		if id, _ := old[attrMove].(*types.AttributeValueMemberS); id != nil && id.Value == move {
			return readCall(sid, old) // this move, applied by an earlier attempt
		}
		if c, rerr := readCall(sid, old); rerr == nil && c.Expired(at) {
			return voiceops.Call{}, voiceops.ErrNotFound
		}
		return voiceops.Call{}, voiceops.ErrCallTransition
	}
	if err != nil {
		return voiceops.Call{}, wrap("MoveCall", err)
	}
	c, err := readCall(sid, out.Attributes)
	if err != nil {
		return voiceops.Call{}, wrap("MoveCall", err)
	}
	return c, nil
}

// ClaimCallStep is one conditional UpdateItem: the call exists, is not
// terminal (so not expired), and either its last step is answered and is
// n-1, or step n has no reply and was claimed before stale.
func (s *Calls) ClaimCallStep(ctx context.Context, sid string, n int, token string, in voiceops.CallStepInput, at, stale time.Time) (voiceops.Call, error) {
	if n < 1 {
		return voiceops.Call{}, voiceops.ErrCallTransition
	}
	claim := voiceops.RandomBase62(16)
	names := map[string]string{"#pk": attrPK, "#status": attrStatus, "#steps": attrSteps, "#stepat": attrStepAt,
		"#stepns": attrStepAtNanos, "#claim": attrStepClaim, "#rstep": attrReplyStep}
	values := item{":queued": avS(string(voiceops.CallQueued)), ":calling": avS(string(voiceops.CallCalling)),
		":n": avN(int64(n)), ":at": avT(at), ":ns": avN(at.UnixNano()), ":stale": avN(stale.UnixNano()), ":claim": avS(claim)}
	set := []string{"#steps = :n", "#stepat = :at", "#stepns = :ns", "#claim = :claim"}
	remove := []string{"#started"}
	names["#started"] = attrStepStarted
	for i, f := range []struct{ attr, v string }{{attrStepToken, token}, {attrStepFrom, in.From}, {attrStepMessage, in.Message}, {attrStepDTMF, in.DTMF}} {
		name := fmt.Sprintf("#in%d", i)
		names[name] = f.attr
		if f.v == "" {
			remove = append(remove, name)
			continue
		}
		values[":in"+name[3:]] = avS(f.v)
		set = append(set, name+" = :in"+name[3:])
	}
	update := "SET " + strings.Join(set, ", ") + " REMOVE " + strings.Join(remove, ", ")
	next := "attribute_not_exists(#steps)"
	if n > 1 {
		values[":prev"] = avN(int64(n - 1))
		next = "#steps = :prev AND #rstep = :prev"
	}
	takeover := "#steps = :n AND (attribute_not_exists(#rstep) OR #rstep < :n) AND #stepns < :stale"
	out, err := s.updateCall(ctx, sid, update, "attribute_exists(#pk) AND #status IN (:queued, :calling) AND (("+next+") OR ("+takeover+"))", names, values)
	if old, ok := conditionFailed(err); ok {
		if len(old) == 0 {
			return voiceops.Call{}, voiceops.ErrNotFound
		}
		if id, _ := old[attrStepClaim].(*types.AttributeValueMemberS); id != nil && id.Value == claim {
			return readCall(sid, old) // this claim, applied by an earlier attempt
		}
		if c, rerr := readCall(sid, old); rerr == nil && c.Expired(at) {
			return voiceops.Call{}, voiceops.ErrNotFound
		}
		return voiceops.Call{}, voiceops.ErrCallTransition
	}
	if err != nil {
		return voiceops.Call{}, wrap("ClaimCallStep", err)
	}
	return readCall(sid, out.Attributes)
}

// StartCallStep is one conditional UpdateItem: the claim made at
// claimedAt is the call's last, has no reply and no start.
func (s *Calls) StartCallStep(ctx context.Context, sid string, n int, claimedAt, at time.Time) (voiceops.Call, error) {
	names := map[string]string{"#pk": attrPK, "#steps": attrSteps, "#stepns": attrStepAtNanos, "#rstep": attrReplyStep, "#started": attrStepStarted}
	values := item{":n": avN(int64(n)), ":ns": avN(claimedAt.UnixNano()), ":at": avT(at)}
	out, err := s.updateCall(ctx, sid, "SET #started = :at",
		"attribute_exists(#pk) AND #steps = :n AND #stepns = :ns AND (attribute_not_exists(#rstep) OR #rstep < :n) AND attribute_not_exists(#started)", names, values)
	if old, ok := conditionFailed(err); ok {
		if len(old) == 0 {
			return voiceops.Call{}, voiceops.ErrNotFound
		}
		if c, rerr := readCall(sid, old); rerr == nil && c.Expired(at) {
			return voiceops.Call{}, voiceops.ErrNotFound
		}
		return voiceops.Call{}, voiceops.ErrCallTransition
	}
	if err != nil {
		return voiceops.Call{}, wrap("StartCallStep", err)
	}
	return readCall(sid, out.Attributes)
}

// ReplyCallStep is one conditional UpdateItem: the step is the call's last
// claimed one and has no reply.
func (s *Calls) ReplyCallStep(ctx context.Context, sid, conversationID string, reply voiceops.CallReply, at time.Time) (voiceops.Call, error) {
	names := map[string]string{"#pk": attrPK, "#steps": attrSteps, "#rstep": attrReplyStep, "#rtext": attrReplyText, "#rend": attrReplyEnd}
	values := item{":n": avN(int64(reply.Step)), ":text": avS(reply.Text), ":end": avB(reply.End)}
	names["#from"], names["#msg"], names["#dtmf"] = attrStepFrom, attrStepMessage, attrStepDTMF
	update := "SET #rstep = :n, #rtext = :text, #rend = :end"
	if reply.Step == 1 {
		names["#gtext"], names["#gend"], names["#conv"] = attrGreetingText, attrGreetingEnd, attrConvID
		values[":conv"] = avS(conversationID)
		update += ", #gtext = :text, #gend = :end, #conv = :conv"
	}
	update += " REMOVE #from, #msg, #dtmf" // the callee's words live on in the conversation only
	out, err := s.updateCall(ctx, sid, update, "attribute_exists(#pk) AND #steps = :n AND (attribute_not_exists(#rstep) OR #rstep < :n)", names, values)
	if old, ok := conditionFailed(err); ok {
		if len(old) == 0 {
			return voiceops.Call{}, voiceops.ErrNotFound
		}
		c, rerr := readCall(sid, old)
		if rerr == nil && c.Expired(at) {
			return voiceops.Call{}, voiceops.ErrNotFound
		}
		if rerr == nil && c.Reply != nil && *c.Reply == reply && (reply.Step != 1 || c.ConversationID == conversationID) {
			return c, nil // this reply, stored by an earlier attempt
		}
		return voiceops.Call{}, voiceops.ErrCallTransition
	}
	if err != nil {
		return voiceops.Call{}, wrap("ReplyCallStep", err)
	}
	return readCall(sid, out.Attributes)
}

func readCall(sid string, it item) (voiceops.Call, error) {
	r := reader{it: it}
	c := voiceops.Call{
		SID:       sid,
		AccountID: r.str(attrAccountID),
		ProjectID: r.str(attrProjectID),
		ToNumber:  r.str(attrToNumber),
		Status:    voiceops.CallStatus(r.str(attrStatus)),
		CreatedAt: r.time(attrCreatedAt),
		UpdatedAt: r.time(attrUpdatedAt),
		ExpiresAt: r.optTime(attrExpires),
	}
	for name, dst := range map[string]*string{attrEncryption: &c.Encryption, attrCountryCode: &c.CountryCode, attrReason: &c.Reason, attrConvID: &c.ConversationID} {
		if v := r.optStr(name); v != nil {
			*dst = *v
		}
	}
	if n := r.optNum(attrSteps); n != nil {
		c.Steps = int(*n)
		c.StepAt = r.optTime(attrStepAt)
		if v := r.optStr(attrStepToken); v != nil {
			c.StepToken = *v
		}
		for name, dst := range map[string]*string{attrStepFrom: &c.StepInput.From, attrStepMessage: &c.StepInput.Message, attrStepDTMF: &c.StepInput.DTMF} {
			if v := r.optStr(name); v != nil {
				*dst = *v
			}
		}
		c.StepStarted = r.optTime(attrStepStarted)
	}
	if n := r.optNum(attrReplyStep); n != nil {
		c.Reply = &voiceops.CallReply{Step: int(*n), Text: r.str(attrReplyText), End: r.boolean(attrReplyEnd)}
	}
	if r.present(attrGreetingText) {
		c.Greeting = &voiceops.CallReply{Step: 1, Text: r.str(attrGreetingText), End: r.boolean(attrGreetingEnd)}
	}
	if m := r.optStr(attrMetadata); m != nil && r.err == nil {
		if err := json.Unmarshal([]byte(*m), &c.Metadata); err != nil {
			return voiceops.Call{}, fmt.Errorf("attribute %s of call %s: %w", attrMetadata, sid, err)
		}
	}
	if r.err != nil {
		return voiceops.Call{}, r.err
	}
	return c, nil
}

// updateCall applies update to the call sid under cond, returning the new
// item, or on a failed condition the item as it was (so a retried write
// can recognise its own landed attempt).
func (s *Calls) updateCall(ctx context.Context, sid, update, cond string, names map[string]string, values item) (*dynamodb.UpdateItemOutput, error) {
	return s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: callKey(sid),
		UpdateExpression:                    aws.String(update),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
}
