package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Attributes of a webhook endpoint.
const (
	attrURL               = "url"
	attrRoutingKey        = "routing_key"
	attrEventTypes        = "event_types"
	attrHeaders           = "headers"
	attrTimeoutMS         = "timeout_ms"
	attrSecret            = "secret"
	attrPreviousSecret    = "previous_secret"
	attrPreviousExpiresAt = "previous_expires_at"
)

func encodeEndpoint(e voiceops.WebhookEndpoint) item {
	it := endpointKey(e.AccountID, e.ID)
	it[attrID] = avS(e.ID)
	it[attrAccountID] = avS(e.AccountID)
	it[attrName] = avS(e.Name)
	it[attrURL] = avS(e.URL)
	it[attrKind] = avS(string(e.Kind))
	setNonEmpty(it, attrRoutingKey, e.RoutingKey)
	it[attrEventTypes] = avStrings(e.EventTypes)
	it[attrHeaders] = avStringMap(e.Headers)
	it[attrTimeoutMS] = avN(e.TimeoutMS)
	it[attrEnabled] = avB(e.Enabled)
	it[attrCreatedAt] = avT(e.CreatedAt)
	it[attrUpdatedAt] = avT(e.UpdatedAt)
	it[attrSecret] = avS(e.Secret)
	setNonEmpty(it, attrPreviousSecret, e.PreviousSecret)
	setOpt(it, attrPreviousExpiresAt, e.PreviousExpiresAt, avT)
	it[attrVersion] = avN(e.Version)
	return it
}

func decodeEndpoint(it item) (voiceops.WebhookEndpoint, error) {
	r := reader{it: it}
	e := voiceops.WebhookEndpoint{
		ID: r.str(attrID), AccountID: r.str(attrAccountID), Name: r.str(attrName), URL: r.str(attrURL),
		EventTypes: readStrings[voiceops.EventType](&r, attrEventTypes), Headers: r.stringMap(attrHeaders),
		TimeoutMS: r.num(attrTimeoutMS), Enabled: r.boolean(attrEnabled),
		CreatedAt: r.time(attrCreatedAt), UpdatedAt: r.time(attrUpdatedAt),
		Secret: r.str(attrSecret), PreviousSecret: r.str(attrPreviousSecret), PreviousExpiresAt: r.optTime(attrPreviousExpiresAt),
		Version: r.num(attrVersion),
		Kind:    voiceops.EndpointKind(r.str(attrKind)), RoutingKey: r.str(attrRoutingKey),
	}
	if e.Kind == "" {
		e.Kind = voiceops.EndpointWebhook // written before kinds existed
	}
	return e, r.err
}

// CreateEndpoint is one transaction: take a place under the account's
// endpoint limit and put the endpoint.
func (s *Config) CreateEndpoint(ctx context.Context, e voiceops.WebhookEndpoint) error {
	const place, put = 0, 1
	o, err := s.transact(ctx, "CreateEndpoint", []types.TransactWriteItem{
		place: s.txTakePlace(e.AccountID, attrEndpointCount, voiceops.MaxEndpointsPerAccount),
		put:   s.txPutNew(encodeEndpoint(e)),
	})
	switch {
	case err != nil:
		return err
	case o.missing(place):
		return voiceops.ErrNotFound
	case o.exists(place):
		return voiceops.ErrEndpointLimit
	case o.failed[put]:
		return voiceops.ErrAlreadyExists
	}
	return nil
}

// GetEndpoint is one GetItem.
func (s *Config) GetEndpoint(ctx context.Context, accountID, endpointID string) (voiceops.WebhookEndpoint, error) {
	it, found, err := s.get(ctx, "GetEndpoint", endpointKey(accountID, endpointID))
	if err != nil || !found {
		return voiceops.WebhookEndpoint{}, notFound(err)
	}
	e, err := decodeEndpoint(it)
	if err != nil {
		return voiceops.WebhookEndpoint{}, wrap("GetEndpoint", err)
	}
	return e, nil
}

// ListEndpoints is one Query (more only past a page of 1 MB).
func (s *Config) ListEndpoints(ctx context.Context, accountID string) ([]voiceops.WebhookEndpoint, error) {
	items, err := s.queryPrefix(ctx, "ListEndpoints", pkAccount+accountID, skEndpoint)
	if err != nil {
		return nil, err
	}
	out := make([]voiceops.WebhookEndpoint, 0, len(items))
	for _, it := range items {
		e, err := decodeEndpoint(it)
		if err != nil {
			return nil, wrap("ListEndpoints", err)
		}
		out = append(out, e)
	}
	voiceops.SortEndpoints(out)
	return out, nil
}

// UpdateEndpoint is one conditional PutItem.
func (s *Config) UpdateEndpoint(ctx context.Context, e voiceops.WebhookEndpoint, expectVersion int64) error {
	return s.putVersion(ctx, "UpdateEndpoint", encodeEndpoint(e), expectVersion)
}

// DeleteEndpoint reads the endpoint, then deletes it and frees its place in
// one transaction conditional on the version read: two calls.
func (s *Config) DeleteEndpoint(ctx context.Context, accountID, endpointID string) error {
	for range deleteAttempts {
		e, err := s.GetEndpoint(ctx, accountID, endpointID)
		if err != nil {
			return err
		}
		const del, place = 0, 1
		o, err := s.transact(ctx, "DeleteEndpoint", []types.TransactWriteItem{
			del:   s.txDeleteVersion(endpointKey(accountID, endpointID), e.Version),
			place: s.txFreePlace(accountID, attrEndpointCount),
		})
		switch {
		case err != nil:
			return err
		case o.failed[place]:
			return wrap("DeleteEndpoint", fmt.Errorf("account %s of endpoint %s is missing", accountID, endpointID))
		case o.ok():
			return nil
		}
	}
	return voiceops.ErrConflictingWrite
}
