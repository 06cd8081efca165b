// Package destination is the outbound destination policy of an account,
// like a telephony provider's geo permissions (docs/outbound-calls.md, "Destination policy"): the countries the account may call, and the number types
// refused unless the operator allows them (toll fraud: premium rate and
// other revenue-sharing numbers). A refused destination is a 400 naming
// why, before anything is queued.
//
// The package has no phone-number library: what a number is (its country
// and type) comes from Classify, which functions/outbound fills with
// shared/calls/phone's libphonenumber classification, so that only that function
// links the library.
package destination

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Type is a number's type, as libphonenumber tells it.
type Type = voiceops.NumberType

const (
	FixedLine         Type = "fixed_line"
	Mobile            Type = "mobile"
	FixedLineOrMobile Type = "fixed_line_or_mobile"
	TollFree          Type = "toll_free"
	PremiumRate       Type = "premium_rate"
	SharedCost        Type = "shared_cost"
	VoIP              Type = "voip"
	PersonalNumber    Type = "personal_number"
	Pager             Type = "pager"
	UAN               Type = "uan" // universal access (corporate) numbers
	Voicemail         Type = "voicemail"
	// InternationalNetwork is a number of no country: the international
	// networks and services of the ITU's +8xx and +979 codes (satellite
	// phones of +881, +882 and +883 among them), which libphonenumber puts
	// in its region "001".
	InternationalNetwork Type = "international_network"
	Unknown              Type = "unknown"
)

// Refusable are the types refused unless the account's policy allows them:
// the revenue-sharing and high-cost ones of toll fraud.
var Refusable = []Type{PremiumRate, SharedCost, PersonalNumber, UAN, VoIP, InternationalNetwork}

// describe names a refusable type for an error message.
var describe = map[Type]string{
	PremiumRate:          "a premium rate number",
	SharedCost:           "a shared cost number",
	PersonalNumber:       "a personal number",
	UAN:                  "a universal access (UAN) number",
	VoIP:                 "a VoIP number",
	InternationalNetwork: "a number of an international network (no country)",
}

// Number is what the policy needs to know of a valid E.164 number.
type Number struct {
	// Country is the ISO 3166-1 alpha-2 code of the number's country (as
	// libphonenumber assigns it: +1 876 is JM, +44 1624 is IM); "" for an
	// international network.
	Country string
	Type    Type
}

// Policy is an account's destination policy as the operator set it: the
// record the stores keep, so it is the domain's (voiceops).
type Policy = voiceops.DestinationPolicy

// EU and EEA member states (the EU's 27, and Iceland, Liechtenstein and
// Norway). Their overseas parts with their own codes (RE, GP, ...) are not
// among them: the operator adds them where needed.
var euEEA = []string{"AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE", "IS", "IT",
	"LI", "LT", "LU", "LV", "MT", "NL", "NO", "PL", "PT", "RO", "SE", "SI", "SK"}

// DefaultCountries are the countries an account of region may call unless
// the operator set its own: those its stack serves.
func DefaultCountries(region voiceops.Region) []string {
	switch region {
	case voiceops.RegionUS:
		return []string{"CA", "US"}
	case voiceops.RegionUK:
		return []string{"GB"}
	case voiceops.RegionEU:
		return slices.Clone(euEEA)
	}
	return nil
}

// Effective is the policy as it applies in region: its countries, or the
// region's default.
func Effective(p Policy, region voiceops.Region) Policy {
	if len(p.Countries) == 0 {
		p.Countries = DefaultCountries(region)
	}
	return p
}

// Allows reports whether the policy lets the account call numbers of type
// t (the Refusable types only when allowed).
func Allows(p Policy, t Type) bool {
	return !slices.Contains(Refusable, t) || slices.Contains(p.Allow, t)
}

// Validate checks a policy the operator sets against the list of known
// countries (shared/calls/phone.ValidCountry), and normalizes it: sorted, without
// repeats. A function, not a method: only opsctl needs it, and the
// functions keep every exported method of their types (functions/outbound
// is near its bundle cap).
func Validate(p Policy, validCountry func(string) bool) (Policy, error) {
	var errs []error
	out := Policy{}
	for _, c := range p.Countries {
		if !validCountry(c) {
			errs = append(errs, fmt.Errorf("country %q is not an ISO 3166-1 alpha-2 code with a numbering plan (such as US, GB, DE)", c))
			continue
		}
		out.Countries = append(out.Countries, c)
	}
	for _, t := range p.Allow {
		if !slices.Contains(Refusable, t) {
			errs = append(errs, fmt.Errorf("number type %q cannot be allowed: the refused types are %s", t, typeList(Refusable)))
			continue
		}
		out.Allow = append(out.Allow, t)
	}
	slices.Sort(out.Countries)
	slices.Sort(out.Allow)
	out.Countries, out.Allow = slices.Compact(out.Countries), slices.Compact(out.Allow)
	return out, errors.Join(errs...)
}

func typeList(ts []Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// Reader reads the accounts' policies.
type Reader = voiceops.DestinationReader

// Store keeps the accounts' policies (the config table).
type Store = voiceops.DestinationStore

// PolicyOf returns the account's policy as it applies in region.
func PolicyOf(ctx context.Context, st Reader, region voiceops.Region, accountID string) (Policy, error) {
	p, err := st.DestinationPolicy(ctx, accountID)
	if errors.Is(err, voiceops.ErrNotFound) {
		p, err = Policy{}, nil
	}
	if err != nil {
		return Policy{}, err
	}
	return Effective(p, region), nil
}

// CacheTTL is how long a warm instance uses an account's policy it read
// (set or not) before it reads it again (Cache): an operator's change
// applies to every trigger at most CacheTTL after it is written, the bound
// a revoked key has too (auth.CacheTTL). The price is one GetItem per
// account per CacheTTL per warm instance, whatever the trigger rate.
const CacheTTL = 5 * time.Second

// maxCached bounds a Cache; past it the cache is emptied (cheap, and a
// flood of accounts cannot grow memory).
const maxCached = 10000

// Cache is a Reader that keeps each account's policy for CacheTTL from the
// moment its read began (so a change written while it ran is seen within
// CacheTTL). A missing policy (ErrNotFound) is kept too; a failed read is
// not.
type Cache struct {
	Policies Reader
	Now      func() time.Time

	mu sync.Mutex
	m  map[string]cachedPolicy
}

type cachedPolicy struct {
	p       Policy
	found   bool
	expires time.Time
}

// DestinationPolicy is the account's policy, read at most once per CacheTTL.
func (c *Cache) DestinationPolicy(ctx context.Context, accountID string) (Policy, error) {
	now := c.Now()
	c.mu.Lock()
	e, ok := c.m[accountID]
	c.mu.Unlock()
	if !ok || !now.Before(e.expires) {
		p, err := c.Policies.DestinationPolicy(ctx, accountID)
		if err != nil && !errors.Is(err, voiceops.ErrNotFound) {
			return Policy{}, err
		}
		e = cachedPolicy{p: p, found: err == nil, expires: now.Add(CacheTTL)}
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxCached {
			c.m = map[string]cachedPolicy{}
		}
		c.m[accountID] = e
		c.mu.Unlock()
	}
	if !e.found {
		return Policy{}, voiceops.ErrNotFound
	}
	p := e.p // the caller's own lists: the cached ones are shared
	p.Countries, p.Allow = slices.Clone(p.Countries), slices.Clone(p.Allow)
	return p, nil
}

// Checker decides whether an account may call a number: the outbound
// trigger's one call (outboundapi.Outbound.Destinations). The policy is read
// from Policies on every trigger: functions/outbound gives it a Cache, so
// an operator's change applies within CacheTTL.
type Checker struct {
	Policies Reader
	Region   voiceops.Region
	// Classify tells a valid E.164 number's country and type
	// (shared/calls/phone.Classify).
	Classify func(e164 string) Number
}

// Check returns nil when accountID may call to (a valid E.164 number), else
// a 400 naming every reason it may not.
func (c *Checker) Check(ctx context.Context, accountID, to string) error {
	p, err := PolicyOf(ctx, c.Policies, c.Region, accountID)
	if err != nil {
		return err
	}
	return Refusal(p, c.Classify(to))
}

// Refusal is the 400 of a number the policy refuses, naming each reason;
// nil when the policy allows it.
func Refusal(p Policy, n Number) error {
	var fields []voiceops.FieldError
	if !Allows(p, n.Type) {
		fields = append(fields, voiceops.FieldError{Field: "to_number", Message: fmt.Sprintf(
			"is %s (%s), which this account may not call; the operator can allow the type", describe[n.Type], n.Type)})
	}
	// A number of no country is judged by its type alone.
	if n.Country != "" && !slices.Contains(p.Countries, n.Country) {
		fields = append(fields, voiceops.FieldError{Field: "to_number", Message: fmt.Sprintf(
			"is a number of %s, a country this account may not call (it may call %s)", n.Country, strings.Join(p.Countries, ", "))})
	}
	if len(fields) == 0 {
		return nil
	}
	return &voiceops.Error{Kind: voiceops.KindBadRequest, Message: "destination refused", Fields: fields}
}
