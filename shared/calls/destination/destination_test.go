package destination_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDefaultCountries(t *testing.T) {
	if got := destination.DefaultCountries(voiceops.RegionUS); !reflect.DeepEqual(got, []string{"CA", "US"}) {
		t.Errorf("us: %v", got)
	}
	if got := destination.DefaultCountries(voiceops.RegionUK); !reflect.DeepEqual(got, []string{"GB"}) {
		t.Errorf("uk: %v", got)
	}
	eu := destination.DefaultCountries(voiceops.RegionEU)
	if len(eu) != 30 || strings.Join(eu, ",") != "AT,BE,BG,CY,CZ,DE,DK,EE,ES,FI,FR,GR,HR,HU,IE,IS,IT,LI,LT,LU,LV,MT,NL,NO,PL,PT,RO,SE,SI,SK" {
		t.Errorf("eu: %d %v", len(eu), eu)
	}
	eu[0] = "XX"
	if destination.DefaultCountries(voiceops.RegionEU)[0] != "AT" {
		t.Error("DefaultCountries hands out its own list")
	}
}

func TestRefusal(t *testing.T) {
	def := destination.Effective(destination.Policy{}, voiceops.RegionUK)
	for _, c := range []struct {
		n    destination.Number
		p    destination.Policy
		want string // "" allowed
	}{
		{destination.Number{Country: "GB", Type: destination.Mobile}, def, ""},
		{destination.Number{Country: "GB", Type: destination.TollFree}, def, ""},
		{destination.Number{Country: "GB", Type: destination.PremiumRate}, def, "premium rate"},
		{destination.Number{Country: "GB", Type: destination.SharedCost}, def, "shared cost"},
		{destination.Number{Country: "GB", Type: destination.PersonalNumber}, def, "personal number"},
		{destination.Number{Country: "GB", Type: destination.UAN}, def, "universal access"},
		{destination.Number{Country: "GB", Type: destination.VoIP}, def, "VoIP"},
		{destination.Number{Type: destination.InternationalNetwork}, def, "international network"},
		{destination.Number{Country: "IM", Type: destination.Mobile}, def, "IM, a country"},
		{destination.Number{Country: "GB", Type: destination.PremiumRate}, destination.Policy{Countries: []string{"GB"}, Allow: []destination.Type{destination.PremiumRate}}, ""},
		{destination.Number{Type: destination.InternationalNetwork}, destination.Policy{Countries: []string{"GB"}, Allow: []destination.Type{destination.InternationalNetwork}}, ""},
	} {
		err := destination.Refusal(c.p, c.n)
		var msg string
		var e *voiceops.Error
		if errors.As(err, &e) {
			for _, f := range e.Fields {
				msg += f.Field + " " + f.Message + "; "
			}
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v under %+v: %v", c.n, c.p, err)
		case c.want != "" && (err == nil || voiceops.KindOf(err) != voiceops.KindBadRequest || !strings.Contains(msg, c.want)):
			t.Errorf("%+v under %+v: %v, want a 400 naming %q", c.n, c.p, err, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	valid := func(c string) bool { return c == "US" || c == "GB" }
	got, err := destination.Validate(destination.Policy{Countries: []string{"US", "GB", "US"}, Allow: []destination.Type{"voip", "premium_rate", "voip"}}, valid)
	if err != nil || !reflect.DeepEqual(got, destination.Policy{Countries: []string{"GB", "US"}, Allow: []destination.Type{"premium_rate", "voip"}}) {
		t.Errorf("%#v %v", got, err)
	}
	for _, p := range []destination.Policy{{Countries: []string{"XX"}}, {Allow: []destination.Type{"mobile"}}, {Allow: []destination.Type{""}}} {
		if _, err := destination.Validate(p, valid); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}
