package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/voiceops/opsapi/shared/platform/catalog"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

// gatewayMatches reports whether the API Gateway route gw takes a request
// for the catalog route r (its parameters stand for any one segment).
func gatewayMatches(gw Route, r catalog.Route) bool {
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

// TestHTTPRoutesMatchTheGatewayRoutes: the functions with routes are the
// catalog's (shared/platform/catalog, which tests hold each function's handler to),
// every catalog route reaches its function through API Gateway (and no
// other function), and every API Gateway route of a function leads to a
// catalog route of its own.
func TestHTTPRoutesMatchTheGatewayRoutes(t *testing.T) {
	for _, cf := range catalog.Functions {
		if !slices.ContainsFunc(Functions, func(f Function) bool { return f.Name == cf.Name }) {
			t.Errorf("catalog function %s is not in Functions", cf.Name)
		}
	}
	for _, f := range Functions {
		served, ok := catalog.Lookup(f.Name)
		if len(f.Routes) == 0 {
			if ok {
				t.Errorf("%s serves HTTP routes (catalog) but has no API Gateway route", f.Name)
			}
			continue
		}
		if !ok {
			t.Errorf("%s has API Gateway routes but is not in shared/platform/catalog", f.Name)
			continue
		}
		for _, g := range served.Groups {
			for _, r := range g.Routes {
				var owners []string
				for _, other := range Functions {
					for _, gw := range other.Routes {
						if gw.Host == g.Host && gatewayMatches(gw, r) {
							owners = append(owners, other.Name)
							break
						}
					}
				}
				if len(owners) != 1 || owners[0] != f.Name {
					t.Errorf("%s serves %s on the %s host; API Gateway sends it to %v", f.Name, r.Pattern(), g.Host, owners)
				}
			}
		}
		for _, gw := range f.Routes {
			used := false
			for _, g := range served.Groups {
				for _, r := range g.Routes {
					used = used || (gw.Host == g.Host && gatewayMatches(gw, r))
				}
			}
			if !used {
				t.Errorf("%s: API Gateway route %s %s (%s host) leads to no route it serves", f.Name, gw.Method, gw.Path, gw.Host)
			}
		}
	}
}

// TestGatewayRoutesAreTheCatalogs: each path of a catalog function's groups
// is one ANY route (a ServeMux "{rest...}" API Gateway's "{rest+}").
func TestGatewayRoutesAreTheCatalogs(t *testing.T) {
	f := catalog.Function{Name: "f", Groups: []catalog.Group{
		{Host: catalog.Studio, Routes: []catalog.Route{{Method: "GET", Path: "/a/{id}"}, {Method: "PATCH", Path: "/a/{id}"}, {Method: "GET", Path: "/c/{file...}"}}},
		{Host: catalog.Base, Routes: []catalog.Route{{Method: "GET", Path: "/a/{id}"}}},
	}}
	want := []Route{
		{Host: StudioHost, Method: "ANY", Path: "/a/{id}"},
		{Host: StudioHost, Method: "ANY", Path: "/c/{file+}"},
		{Host: BaseHost, Method: "ANY", Path: "/a/{id}"},
	}
	if got := gatewayRoutes(f); !slices.Equal(got, want) {
		t.Errorf("gatewayRoutes = %v, want %v", got, want)
	}
	chat, _ := catalog.Lookup("chat")
	for _, f := range Functions {
		if f.Name == "chat" && !slices.Equal(f.Routes, gatewayRoutes(chat)) {
			t.Errorf("chat's routes %v are not the catalog's %v", f.Routes, gatewayRoutes(chat))
		}
	}
}

func TestGatewayMatches(t *testing.T) {
	for _, c := range []struct {
		gw   Route
		r    catalog.Route
		want bool
	}{
		{Route{Method: "ANY", Path: "/v1/alert-rules/{proxy+}"}, catalog.Route{Method: "PATCH", Path: "/v1/alert-rules/{rule_id}"}, true},
		{Route{Method: "ANY", Path: "/v1/alert-rules/{proxy+}"}, catalog.Route{Method: "GET", Path: "/v1/alert-rules"}, false},
		{Route{Method: "POST", Path: "/v1/outbound-calling/trigger"}, catalog.Route{Method: "GET", Path: "/v1/outbound-calling/trigger"}, false},
		{Route{Method: "GET", Path: "/v1/{account_id}/{project_id}/conversations"}, catalog.Route{Method: "GET", Path: "/v1/{account_id}/{project_id}/conversations"}, true},
		{Route{Method: "GET", Path: "/v1/{account_id}/{project_id}/conversations"}, catalog.Route{Method: "GET", Path: "/v1/{account_id}/{project_id}/conversations/concurrency"}, false},
		{Route{Method: "ANY", Path: "/console/{file+}"}, catalog.Route{Method: "GET", Path: "/console/{file...}"}, true},
		{Route{Method: "ANY", Path: "/console/{file+}"}, catalog.Route{Method: "GET", Path: "/console"}, false},
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
