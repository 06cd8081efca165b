package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/calls/phone"
	"github.com/voiceops/opsapi/shared/voiceops"
)

const destinationsUsage = `  destinations show -account ID              print the account's outbound
                                             destination policy: the countries it
                                             may call and the number types it may
                                             call that are refused by default
  destinations set -account ID [-countries CC,CC|default] [-allow TYPE,TYPE|none]
                                             change it: -countries replaces the
                                             countries (ISO 3166-1 alpha-2; default:
                                             the region's: us US,CA; uk GB; eu the
                                             EU/EEA), -allow replaces the allowed
                                             types among premium_rate, shared_cost,
                                             personal_number, uan, voip,
                                             international_network (none: refuse
                                             them all). A part not given is kept.
                                             Applies to triggers within 5 s (a
                                             warm function keeps a policy 5 s).
  destinations reset -account ID             back to the region's default policy
`

// destinationsCommand shows, changes or removes an account's destination
// policy (docs/outbound-calls.md, "Destination policy").
func destinationsCommand(ctx context.Context, cmd string, st *stores, region voiceops.Region, account, countries, allow string, stdout io.Writer) error {
	if account == "" {
		return fmt.Errorf("%s: -account is required", cmd)
	}
	if st.destinations == nil {
		return fmt.Errorf("%s: no destination policy store", cmd)
	}
	if _, err := st.accounts.GetAccount(ctx, account); err != nil {
		return describe(err, "account "+account)
	}
	switch cmd {
	case "destinations set":
		if countries == "" && allow == "" {
			return fmt.Errorf("destinations set: give -countries, -allow or both")
		}
		p, err := st.destinations.DestinationPolicy(ctx, account)
		if err != nil && voiceops.KindOf(err) != voiceops.KindNotFound {
			return err
		}
		switch countries {
		case "":
		case "default":
			p.Countries = nil
		default:
			p.Countries = splitList(strings.ToUpper(countries))
		}
		switch allow {
		case "":
		case "none":
			p.Allow = nil
		default:
			p.Allow = nil
			for _, t := range splitList(allow) {
				p.Allow = append(p.Allow, destination.Type(t))
			}
		}
		p, err = destination.Validate(p, phone.ValidCountry)
		if err != nil {
			return fmt.Errorf("destinations set: %v; nothing was stored", err)
		}
		if err := st.destinations.SetDestinationPolicy(ctx, account, &p); err != nil {
			return describe(err, "account "+account)
		}
	case "destinations reset":
		if err := st.destinations.SetDestinationPolicy(ctx, account, nil); err != nil {
			return describe(err, "account "+account)
		}
	}
	own, err := st.destinations.DestinationPolicy(ctx, account)
	source := "set by the operator"
	if voiceops.KindOf(err) == voiceops.KindNotFound {
		own, source, err = destination.Policy{}, "the default of region "+string(region), nil
	}
	if err != nil {
		return err
	}
	p := destination.Effective(own, region)
	if len(own.Countries) == 0 && len(own.Allow) > 0 {
		source = "the countries of region " + string(region) + ", types set by the operator"
	}
	var allowed, refused []string
	for _, t := range destination.Refusable {
		if destination.Allows(p, t) {
			allowed = append(allowed, string(t))
		} else {
			refused = append(refused, string(t))
		}
	}
	fmt.Fprintf(stdout, "account %s may call (%s):\n  countries: %s\n  allowed types refused by default: %s\n  refused types: %s\n",
		account, source, strings.Join(p.Countries, ", "), orNone(allowed), orNone(refused))
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
