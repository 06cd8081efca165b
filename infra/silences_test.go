package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestSilencesReachTheAlertsFunction: in the synthesized template, the
// silences' paths are routes of the studio host's API to the alerts
// function, whose role may do what the silences store does on the config
// table (a Query; a create's Update of the account item and Put of the
// silence, an end's Delete and Put, in transactions), and the evaluator's
// role may read them (a Query).
func TestSilencesReachTheAlertsFunction(t *testing.T) {
	tmpl := defaultSynth(t).json["VoiceOps-us"]
	all := tmpl["Resources"].(map[string]any)
	alertsID, _ := functionResource(t, tmpl, "alerts")
	found := map[string]bool{}
	for _, r := range resources(tmpl, "AWS::ApiGatewayV2::Route") {
		key, _ := props(r)["RouteKey"].(string)
		if key != "ANY /v1/silences" && key != "ANY /v1/silences/{silence_id}" {
			continue
		}
		target, _ := json.Marshal(props(r)["Target"])
		integration := strings.TrimSuffix(strings.TrimPrefix(string(target), `{"Fn::Join":["",["integrations/",{"Ref":"`), `"}]]}`)
		res, _ := all[integration].(map[string]any)
		uri, _ := json.Marshal(props(res)["IntegrationUri"])
		if !strings.Contains(string(uri), `"`+alertsID+`"`) {
			t.Errorf("route %s leads to %s, want the alerts function %s", key, uri, alertsID)
		}
		found[key] = true
	}
	if len(found) != 2 {
		t.Fatalf("silence routes in the template: %v", found)
	}
	for fn, actions := range map[string][]string{
		"alerts":    {"dynamodb:Query", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
		"evaluator": {"dynamodb:Query"},
	} {
		_, res := functionResource(t, tmpl, fn)
		grants := sortedGrants(roleGrants(tmpl, getAttTarget(props(res)["Role"])))
		for _, a := range actions {
			if !slices.ContainsFunc(grants, func(g string) bool { return strings.HasPrefix(g, a+" on ") && strings.Contains(g, "table:config") }) {
				t.Errorf("%s's role lacks %s on the config table: %v", fn, a, grants)
			}
		}
	}
}
