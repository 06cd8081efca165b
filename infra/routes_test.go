package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/apidocs"
	"github.com/voiceops/opsapi/shared/baseapi"
	"github.com/voiceops/opsapi/shared/console"
	"github.com/voiceops/opsapi/shared/conversationsapi"
	"github.com/voiceops/opsapi/shared/httpapi"
	"github.com/voiceops/opsapi/shared/outboundapi"
	"github.com/voiceops/opsapi/shared/studioapi"
	"github.com/voiceops/opsapi/shared/twilioapi"
)

// servedGroups is what each functions/<name>/main.go serves (its handler's
// groups) and on which host: the routes of the code, to hold against the
// API Gateway routes of Functions.
var servedGroups = map[string]struct {
	host   Host
	groups [][]httpapi.Route
}{
	"alerts":   {StudioHost, [][]httpapi.Route{(&studioapi.Alerts{}).Routes(), console.Routes(), apidocs.Routes(apidocs.Studio)}},
	"webhooks": {StudioHost, [][]httpapi.Route{(&studioapi.Webhooks{}).Routes()}},
	"intake":   {StudioHost, [][]httpapi.Route{(&studioapi.Intake{}).Routes()}},
	"chat":     {BaseHost, [][]httpapi.Route{(&baseapi.Chat{}).Routes()}},
	"conversations": {BaseHost, [][]httpapi.Route{
		(&conversationsapi.Conversations{}).Routes(), (&conversationsapi.Concurrency{}).Routes(), (&conversationsapi.Handoff{}).Routes(), apidocs.Routes(apidocs.Base)}},
	"calls": {BaseHost, [][]httpapi.Route{
		(&baseapi.Voice{}).Routes(), (&baseapi.DNI{}).Routes(), (&twilioapi.Callbacks{}).Routes()}},
	"outbound": {BaseHost, [][]httpapi.Route{(&outboundapi.Outbound{}).Routes()}},
	"events":   {BaseHost, [][]httpapi.Route{(&baseapi.Events{}).Routes()}},
}

// gatewayMatches reports whether the API Gateway route gw takes a request
// for the mux route r (its parameters stand for any one segment).
func gatewayMatches(gw Route, r httpapi.Route) bool {
	if gw.Method != "ANY" && gw.Method != r.Method {
		return false
	}
	gs, rs := strings.Split(gw.Path, "/"), strings.Split(r.Path, "/")
	for i, g := range gs {
		if strings.HasSuffix(g, "+}") { // greedy: the rest, at least one segment
			return len(rs) > i
		}
		if i >= len(rs) {
			return false
		}
		if strings.HasPrefix(g, "{") || g == rs[i] || strings.HasPrefix(rs[i], "{") && strings.HasPrefix(g, "{") {
			continue
		}
		return false
	}
	return len(gs) == len(rs)
}

// TestHTTPRoutesMatchTheGatewayRoutes: every route a function serves
// reaches it through API Gateway (and through no other function), and
// every API Gateway route of a function leads to a route it serves.
func TestHTTPRoutesMatchTheGatewayRoutes(t *testing.T) {
	for _, f := range Functions {
		served, ok := servedGroups[f.Name]
		if len(f.Routes) == 0 {
			if ok {
				t.Errorf("%s serves HTTP routes but has no API Gateway route", f.Name)
			}
			continue
		}
		if !ok {
			t.Errorf("%s has API Gateway routes: add what its main.go serves to servedGroups", f.Name)
			continue
		}
		for _, g := range served.groups {
			for _, r := range g {
				var owners []string
				for _, other := range Functions {
					for _, gw := range other.Routes {
						if gw.Host == served.host && gatewayMatches(gw, r) {
							owners = append(owners, other.Name)
							break
						}
					}
				}
				if len(owners) != 1 || owners[0] != f.Name {
					t.Errorf("%s serves %s on the %s host; API Gateway sends it to %v", f.Name, r.Pattern(), served.host, owners)
				}
			}
		}
		for _, gw := range f.Routes {
			used := false
			for _, g := range served.groups {
				for _, r := range g {
					used = used || (gw.Host == served.host && gatewayMatches(gw, r))
				}
			}
			if !used {
				t.Errorf("%s: API Gateway route %s %s (%s host) leads to no route it serves", f.Name, gw.Method, gw.Path, gw.Host)
			}
		}
	}
}

func TestGatewayMatches(t *testing.T) {
	for _, c := range []struct {
		gw   Route
		r    httpapi.Route
		want bool
	}{
		{Route{Method: "ANY", Path: "/v1/alert-rules/{proxy+}"}, httpapi.Route{Method: "PATCH", Path: "/v1/alert-rules/{rule_id}"}, true},
		{Route{Method: "ANY", Path: "/v1/alert-rules/{proxy+}"}, httpapi.Route{Method: "GET", Path: "/v1/alert-rules"}, false},
		{Route{Method: "POST", Path: "/v1/outbound-calling/trigger"}, httpapi.Route{Method: "GET", Path: "/v1/outbound-calling/trigger"}, false},
		{Route{Method: "GET", Path: "/v1/{account_id}/{project_id}/conversations"}, httpapi.Route{Method: "GET", Path: "/v1/{account_id}/{project_id}/conversations"}, true},
		{Route{Method: "GET", Path: "/v1/{account_id}/{project_id}/conversations"}, httpapi.Route{Method: "GET", Path: "/v1/{account_id}/{project_id}/conversations/concurrency"}, false},
	} {
		if got := gatewayMatches(c.gw, c.r); got != c.want {
			t.Errorf("%v vs %v: %v", c.gw, c.r, got)
		}
	}
}

// TestEveryHostAnswersUnknownPathsAndWrongMethodsItself: in every regional
// stack, each host's API sends what no route matches ($default) to the
// function marked DefaultRoute (the service's JSON 404), its stage names
// the host's error shape for it, and every other route is ANY, so that a
// wrong method reaches the path's own function (its 405 with Allow), not
// API Gateway's {"message":"Not Found"}.
func TestEveryHostAnswersUnknownPathsAndWrongMethodsItself(t *testing.T) {
	var fallback string
	for _, f := range Functions {
		if f.DefaultRoute {
			fallback = f.Name
		}
	}
	if fallback == "" {
		t.Fatal("no function takes the $default route")
	}
	for _, r := range Regions {
		name := "VoiceOps-" + r.Name
		tmpl := defaultSynth(t).json[name]
		fnID, _ := functionResource(t, tmpl, fallback)
		all := tmpl["Resources"].(map[string]any)
		apis := map[string]Host{} // logical ID to host
		for id, res := range all {
			res := res.(map[string]any)
			if res["Type"] == "AWS::ApiGatewayV2::Api" {
				for _, h := range Hosts {
					if props(res)["Name"] == "voiceops-"+r.Name+"-"+string(h) {
						apis[id] = h
					}
				}
			}
		}
		if len(apis) != len(servedHosts(Functions)) {
			t.Fatalf("%s: APIs %v", name, apis)
		}
		defaults, families := map[Host]bool{}, map[Host]string{}
		for id, res := range all {
			res := res.(map[string]any)
			p := props(res)
			api, _ := p["ApiId"].(map[string]any)
			host, ok := apis[fmt.Sprint(api["Ref"])]
			switch {
			case res["Type"] == "AWS::ApiGatewayV2::Stage" && ok:
				vars, _ := p["StageVariables"].(map[string]any)
				families[host], _ = vars[httpapi.FamilyStageVariable].(string)
			case res["Type"] == "AWS::ApiGatewayV2::Route" && ok:
				key, _ := p["RouteKey"].(string)
				if key == "$default" {
					target, _ := json.Marshal(p["Target"])
					integration := strings.TrimSuffix(strings.TrimPrefix(string(target), `{"Fn::Join":["",["integrations/",{"Ref":"`), `"}]]}`)
					uri, _ := json.Marshal(props(all[integration].(map[string]any))["IntegrationUri"])
					if !strings.Contains(string(uri), `"`+fnID+`"`) {
						t.Errorf("%s %s: $default route %s leads to %s, want the %s function", name, host, id, uri, fallback)
					}
					defaults[host] = true
				} else if !strings.HasPrefix(key, "ANY /") {
					t.Errorf("%s %s: route %q is not ANY: a wrong method would be API Gateway's 404", name, host, key)
				}
			}
		}
		for _, h := range servedHosts(Functions) {
			if !defaults[h] {
				t.Errorf("%s %s: no $default route", name, h)
			}
			if want := hostFamily[h].String(); families[h] != want {
				t.Errorf("%s %s: stage variable %s=%q, want %q", name, h, httpapi.FamilyStageVariable, families[h], want)
			}
		}
	}
}
