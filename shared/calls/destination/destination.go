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

// Checker decides whether an account may call a number: the outbound
// trigger's one call (outboundapi.Outbound.Destinations). The policy is read
// on every trigger (one GetItem), so an operator's change applies to the
// next call.
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
