package dynamo

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Attributes of a key; both items of a key hold all of them.
const (
	attrDigest    = "digest"
	attrPrefix    = "prefix"
	attrKind      = "kind"
	attrRegion    = "region"
	attrProjectID = "project_id"
	attrRevokedAt = "revoked_at"
	attrEnv       = "environment"
)

func encodeKey(it item, k voiceops.Key) item {
	it[attrID] = avS(k.ID)
	it[attrDigest] = avS(k.Digest)
	it[attrPrefix] = avS(k.Prefix)
	it[attrKind] = avS(string(k.Kind))
	it[attrRegion] = avS(string(k.Region))
	it[attrAccountID] = avS(k.AccountID)
	setNonEmpty(it, attrProjectID, k.ProjectID)
	setNonEmpty(it, attrEnv, k.Environment)
	it[attrCreatedAt] = avT(k.CreatedAt)
	setOpt(it, attrRevokedAt, k.RevokedAt, avT)
	return it
}

func decodeKey(it item) (voiceops.Key, error) {
	r := reader{it: it}
	k := voiceops.Key{
		ID: r.str(attrID), Digest: r.str(attrDigest), Prefix: r.str(attrPrefix),
		Kind: voiceops.KeyKind(r.str(attrKind)), Region: voiceops.Region(r.str(attrRegion)),
		AccountID: r.str(attrAccountID), ProjectID: r.str(attrProjectID), Environment: r.str(attrEnv),
		CreatedAt: r.time(attrCreatedAt), RevokedAt: r.optTime(attrRevokedAt),
	}
	return k, r.err
}

// CreateKey writes both items of a key in one transaction, checking that
// the account (and project) exist: ErrNotFound otherwise, ErrAlreadyExists
// when the digest or key ID is already stored.
func (s *Config) CreateKey(ctx context.Context, k voiceops.Key) error {
	writes := []types.TransactWriteItem{
		s.txExists(accountKey(k.AccountID)),
		s.txPutNew(encodeKey(digestKey(k.Digest), k)),
		s.txPutNew(encodeKey(accountKeyKey(k.AccountID, k.ID), k)),
	}
	if k.ProjectID != "" {
		writes = append(writes, s.txExists(projectKey(k.AccountID, k.ProjectID)))
	}
	o, err := s.transact(ctx, "CreateKey", writes)
	switch {
	case err != nil:
		return err
	case o.failed[0] || len(o.failed) > 3 && o.failed[3]:
		return voiceops.ErrNotFound
	case !o.ok():
		return voiceops.ErrAlreadyExists
	}
	return nil
}

// KeyByDigest reads the digest item: one GetItem.
func (s *Config) KeyByDigest(ctx context.Context, digest string) (voiceops.Key, error) {
	it, found, err := s.get(ctx, "KeyByDigest", digestKey(digest))
	if err != nil || !found {
		return voiceops.Key{}, notFound(err)
	}
	k, err := decodeKey(it)
	if err != nil {
		return voiceops.Key{}, wrap("KeyByDigest", err)
	}
	return k, nil
}

// ListKeys returns the account's keys ordered by creation time, then ID.
func (s *Config) ListKeys(ctx context.Context, accountID string) ([]voiceops.Key, error) {
	items, err := s.queryPrefix(ctx, "ListKeys", pkAccount+accountID, skKey)
	if err != nil {
		return nil, err
	}
	out := make([]voiceops.Key, 0, len(items))
	for _, it := range items {
		k, err := decodeKey(it)
		if err != nil {
			return nil, wrap("ListKeys", err)
		}
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b voiceops.Key) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// revokeAttempts bounds the retries of RevokeKey when another revocation
// of the same key wins the race.
const revokeAttempts = 3

// RevokeKey marks both items of a key revoked in one transaction. The
// account item's condition (not yet revoked) detects a concurrent
// revocation, whose time is then kept and returned.
func (s *Config) RevokeKey(ctx context.Context, accountID, keyID string, at time.Time) (voiceops.Key, error) {
	for range revokeAttempts {
		it, found, err := s.get(ctx, "RevokeKey", accountKeyKey(accountID, keyID))
		if err != nil || !found {
			return voiceops.Key{}, notFound(err)
		}
		k, err := decodeKey(it)
		if err != nil {
			return voiceops.Key{}, wrap("RevokeKey", err)
		}
		if k.RevokedAt != nil {
			return k, nil
		}
		names := map[string]string{"#pk": attrPK, "#rev": attrRevokedAt}
		values := item{":at": avT(at)}
		o, err := s.transact(ctx, "RevokeKey", []types.TransactWriteItem{
			{Update: &types.Update{
				TableName: &s.table, Key: accountKeyKey(accountID, keyID),
				UpdateExpression:          aws.String("SET #rev = :at"),
				ConditionExpression:       aws.String("attribute_exists(#pk) AND attribute_not_exists(#rev)"),
				ExpressionAttributeNames:  names,
				ExpressionAttributeValues: values,
			}},
			{Update: &types.Update{
				TableName: &s.table, Key: digestKey(k.Digest),
				UpdateExpression:          aws.String("SET #rev = if_not_exists(#rev, :at)"),
				ConditionExpression:       aws.String(condExists),
				ExpressionAttributeNames:  names,
				ExpressionAttributeValues: values,
			}},
		})
		switch {
		case err != nil:
			return voiceops.Key{}, err
		case o.failed[1]:
			return voiceops.Key{}, wrap("RevokeKey", errors.New("the digest item of key "+keyID+" is missing"))
		case o.ok():
			k.RevokedAt = &at
			return k, nil
		}
		// Revoked (or removed) since we read it: read it again.
	}
	return voiceops.Key{}, voiceops.ErrConflictingWrite
}
