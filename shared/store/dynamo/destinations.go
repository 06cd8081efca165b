package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// An account's destination policy is one item of the configuration table,
// in its account's partition (absent: the region's default):
//
//	destination policy  pk=ACCT#<acct>  sk=DESTINATIONS  countries=[ISO codes]  allow=[number types]
const (
	skDestinations = "DESTINATIONS"
	attrCountries  = "countries"
	attrAllow      = "allow"
)

func destinationsKey(accountID string) item { return key(pkAccount+accountID, skDestinations) }

// Destinations returns the store of the accounts' destination policies
// (the operator's, the dev server's). A function rather than a method of
// Config: functions/outbound reads the policies through Config's own
// DestinationPolicy, and links no writer (each exported method of a type
// a function uses is linked, and outbound is near its bundle cap).
func Destinations(c *Config) voiceops.DestinationStore { return destinations{c} }

type destinations struct{ s *Config }

var _ voiceops.DestinationStore = destinations{}
var _ voiceops.DestinationReader = (*Config)(nil)

func (d destinations) DestinationPolicy(ctx context.Context, accountID string) (voiceops.DestinationPolicy, error) {
	return d.s.DestinationPolicy(ctx, accountID)
}

// DestinationPolicy reads an account's destination policy item: one
// GetItem.
func (s *Config) DestinationPolicy(ctx context.Context, accountID string) (voiceops.DestinationPolicy, error) {
	it, found, err := s.get(ctx, "DestinationPolicy", destinationsKey(accountID))
	if err != nil || !found {
		return voiceops.DestinationPolicy{}, notFound(err)
	}
	countries, err := stringList(it, attrCountries)
	if err != nil {
		return voiceops.DestinationPolicy{}, wrap("DestinationPolicy", err)
	}
	allow, err := stringList(it, attrAllow)
	if err != nil {
		return voiceops.DestinationPolicy{}, wrap("DestinationPolicy", err)
	}
	p := voiceops.DestinationPolicy{Countries: countries}
	for _, t := range allow {
		p.Allow = append(p.Allow, voiceops.NumberType(t))
	}
	return p, nil
}

// SetDestinationPolicy writes the policy with a check that its account
// exists, in one transaction (ErrNotFound and nothing written when it does
// not); nil deletes it.
func (d destinations) SetDestinationPolicy(ctx context.Context, accountID string, p *voiceops.DestinationPolicy) error {
	s := d.s
	if p == nil {
		if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: destinationsKey(accountID)}); err != nil {
			return wrap("SetDestinationPolicy", err)
		}
		return nil
	}
	it := destinationsKey(accountID)
	it[attrAccountID] = avS(accountID)
	it[attrCountries] = avStrings(p.Countries)
	it[attrAllow] = avStrings(p.Allow)
	it[attrUpdatedAt] = avT(s.now())
	o, err := s.transact(ctx, "SetDestinationPolicy", []types.TransactWriteItem{
		s.txExists(accountKey(accountID)),
		{Put: &types.Put{TableName: &s.table, Item: it}},
	})
	switch {
	case err != nil:
		return err
	case o.failed[0]:
		return voiceops.ErrNotFound
	}
	return nil
}

// stringList reads a list of strings (absent: nil).
func stringList(it item, name string) ([]string, error) {
	v, ok := it[name]
	if !ok {
		return nil, nil
	}
	l, ok := v.(*types.AttributeValueMemberL)
	if !ok {
		return nil, fmt.Errorf("attribute %s is not a list", name)
	}
	var out []string
	for _, e := range l.Value {
		s, ok := e.(*types.AttributeValueMemberS)
		if !ok {
			return nil, fmt.Errorf("attribute %s holds a %T, not a string", name, e)
		}
		out = append(out, s.Value)
	}
	return out, nil
}
