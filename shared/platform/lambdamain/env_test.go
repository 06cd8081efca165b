package lambdamain

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestEveryEnvironmentNamesKnownVariables(t *testing.T) {
	known := Known()
	for name, env := range Environments {
		for _, f := range fields(reflect.TypeOf(env)) {
			if !slices.Contains(known, f.name) {
				t.Errorf("%s: variable %s is not one of lambdamain.Known", name, f.name)
			}
		}
	}
}

func TestLoadNamesEveryMissingVariable(t *testing.T) {
	env := map[string]string{"SERVICE_REGION": "uk", "CONFIG_TABLE": "c", "METRICS_TABLE": ""}
	_, err := Load[Alerts]("alerts", func(k string) string { return env[k] })
	if err == nil {
		t.Fatal("loaded without its tables and queue")
	}
	for _, want := range []string{"functions/alerts", "DELIVERIES_TABLE", "METRICS_TABLE", "REQUESTS_TABLE", "DELIVERY_QUEUE_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "CONFIG_TABLE") {
		t.Errorf("error %q names a variable that is set", err)
	}
	for _, k := range Names(Alerts{}) {
		env[k] = "x"
	}
	env["SERVICE_REGION"] = "mars"
	if _, err := Load[Alerts]("alerts", func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "SERVICE_REGION") {
		t.Errorf("region mars: %v", err)
	}
	env["SERVICE_REGION"] = "uk"
	a, err := Load[Alerts]("alerts", func(k string) string { return env[k] })
	if err != nil || a.Region.AWSRegion != "eu-west-2" || a.ConfigTable != "x" || a.DeliveryQueue != "x" {
		t.Errorf("loaded %+v, %v", a, err)
	}
	if _, err := Load[Webhooks]("alerts", func(k string) string { return env[k] }); err == nil {
		t.Error("the alerts function loaded the webhooks environment")
	}
}

func TestOptionalVariables(t *testing.T) {
	env := map[string]string{}
	for _, k := range Names(Dialer{}) {
		env[k] = "v"
	}
	if slices.Contains(Names(Dialer{}), TwilioAPIEnv) {
		t.Errorf("Names lists the optional %s: infra would set it", TwilioAPIEnv)
	}
	d, err := Load[Dialer]("dialer", func(k string) string { return env[k] })
	if err != nil || d.TwilioAPI != "" || d.CallsTable != "v" {
		t.Errorf("without the optional variable: %+v %v", d, err)
	}
	env[TwilioAPIEnv] = "http://127.0.0.1:1"
	if d, err := Load[Dialer]("dialer", func(k string) string { return env[k] }); err != nil || d.TwilioAPI != env[TwilioAPIEnv] {
		t.Errorf("with it: %+v %v", d, err)
	}
}
