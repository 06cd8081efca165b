package storetest

import (
	"reflect"
	"testing"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// RunDestinations runs the contract of destination.Store. newStores returns
// empty stores and the destination policy store over the same accounts.
func RunDestinations(t *testing.T, newStores func(t *testing.T) (voiceops.Stores, destination.Store)) {
	t.Helper()
	t.Run("SetGetReset", func(t *testing.T) {
		s, ds := newStores(t)
		a, b := mustAccount(t, s), mustAccount(t, s)
		_, err := ds.DestinationPolicy(ctx(t), a.ID)
		wantErr(t, "DestinationPolicy before any set", err, voiceops.ErrNotFound)

		full := destination.Policy{Countries: []string{"CA", "GB", "US"}, Allow: []destination.Type{destination.InternationalNetwork, destination.PremiumRate}}
		mustNil(t, "SetDestinationPolicy", ds.SetDestinationPolicy(ctx(t), a.ID, &full))
		got, err := ds.DestinationPolicy(ctx(t), a.ID)
		mustNil(t, "DestinationPolicy", err)
		if !reflect.DeepEqual(got, full) {
			t.Errorf("DestinationPolicy = %#v, want %#v", got, full)
		}
		// Tenants never see each other's policy.
		_, err = ds.DestinationPolicy(ctx(t), b.ID)
		wantErr(t, "another account's DestinationPolicy", err, voiceops.ErrNotFound)

		// The returned policy is a copy.
		got.Countries[0], got.Allow[0] = "XX", "x"
		again, _ := ds.DestinationPolicy(ctx(t), a.ID)
		if !reflect.DeepEqual(again, full) {
			t.Errorf("changing a returned policy changed the stored one: %#v", again)
		}

		// A replacement is whole: parts left out are gone.
		only := destination.Policy{Allow: []destination.Type{destination.SharedCost}}
		mustNil(t, "SetDestinationPolicy again", ds.SetDestinationPolicy(ctx(t), a.ID, &only))
		if got, _ := ds.DestinationPolicy(ctx(t), a.ID); !reflect.DeepEqual(got, only) {
			t.Errorf("after replacing: %#v, want %#v", got, only)
		}
		mustNil(t, "SetDestinationPolicy nil", ds.SetDestinationPolicy(ctx(t), a.ID, nil))
		_, err = ds.DestinationPolicy(ctx(t), a.ID)
		wantErr(t, "DestinationPolicy after reset", err, voiceops.ErrNotFound)
		mustNil(t, "reset without a policy", ds.SetDestinationPolicy(ctx(t), a.ID, nil))
	})
	t.Run("NoAccount", func(t *testing.T) {
		_, ds := newStores(t)
		p := destination.Policy{Countries: []string{"US"}}
		wantErr(t, "SetDestinationPolicy of no account", ds.SetDestinationPolicy(ctx(t), "acct_nobody", &p), voiceops.ErrNotFound)
		_, err := ds.DestinationPolicy(ctx(t), "acct_nobody")
		wantErr(t, "DestinationPolicy of no account", err, voiceops.ErrNotFound)
	})
}
