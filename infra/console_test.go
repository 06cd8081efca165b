package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/platform/lambdamain"
)

// TestConsoleReachesTheBaseHost: the base host's API answers CORS for the
// console (any origin, x-api-key and content-type, GET) and the studio
// host's does not; the function serving the console is told the base
// host's URL (its endpoint, or its custom domain); and that reference
// makes no dependency cycle in the template.
func TestConsoleReachesTheBaseHost(t *testing.T) {
	s := defaultSynth(t)
	for _, r := range Regions {
		name := "VoiceOps-" + r.Name
		tmpl := s.templates[name]
		check(t, name+" base host CORS", func() {
			tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), obj{
				"Name": "voiceops-" + r.Name + "-base",
				"CorsConfiguration": obj{
					"AllowOrigins": []any{"*"}, "AllowHeaders": []any{"x-api-key", "content-type"},
					"AllowMethods": []any{"GET"}, "MaxAge": 3600,
				},
			})
		})
		apis := map[string]string{} // host -> logical ID
		for id, res := range s.json[name]["Resources"].(map[string]any) {
			res := res.(map[string]any)
			if res["Type"] != "AWS::ApiGatewayV2::Api" {
				continue
			}
			p := props(res)
			host := p["Name"].(string)[strings.LastIndex(p["Name"].(string), "-")+1:]
			apis[host] = id
			if _, cors := p["CorsConfiguration"]; cors != (host == string(BaseHost)) {
				t.Errorf("%s: API %s has CORS: %v, want it on the base host only", name, p["Name"], cors)
			}
		}
		if apis[string(BaseHost)] == "" || apis[string(StudioHost)] == "" {
			t.Fatalf("%s: APIs %v, want the studio and base hosts", name, apis)
		}
		check(t, name+" CONSOLE_BASE_URL", func() {
			tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{
				"Description": "VoiceOps alerts (" + r.Name + ")",
				"Environment": obj{"Variables": objectLike(obj{
					lambdamain.ConsoleBaseURLEnv: obj{"Fn::GetAtt": []any{apis[string(BaseHost)], "ApiEndpoint"}},
				})},
			})
		})
		check(t, name+" CONSOLE_URL", func() {
			tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{
				"Description": "VoiceOps dispatcher (" + r.Name + ")",
				"Environment": obj{"Variables": objectLike(obj{
					lambdamain.ConsoleURLEnv: obj{"Fn::Join": []any{"", []any{obj{"Fn::GetAtt": []any{apis[string(StudioHost)], "ApiEndpoint"}}, "/console/"}}},
				})},
			})
		})
		if cycle := findCycle(s.json[name]); cycle != nil {
			t.Errorf("%s: dependency cycle %v", name, cycle)
		}
	}
	for _, f := range Functions {
		if got, want := slices.Contains(lambdamain.Names(envOf(f)), lambdamain.ConsoleBaseURLEnv), servesConsole(f); got != want {
			t.Errorf("%s: reads CONSOLE_BASE_URL %v, serves the console %v", f.Name, got, want)
		}
	}

	// With a custom domain, the console calls the domain.
	d := mustSynth(t, map[string]any{"region": "us", "baseDomain": "api.example.com", "certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/abc"}, withBaseHost())
	check(t, "custom domain", func() {
		d.templates["VoiceOps-us"].HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{
			"Description": "VoiceOps alerts (us)",
			"Environment": obj{"Variables": objectLike(obj{lambdamain.ConsoleBaseURLEnv: "https://api.example.com"})},
		})
	})
}

// findCycle returns a cycle of resources that reference each other (Ref,
// Fn::GetAtt, DependsOn), which CloudFormation refuses; nil when none.
func findCycle(tmpl map[string]any) []string {
	res, _ := tmpl["Resources"].(map[string]any)
	deps := map[string][]string{}
	var walk func(from string, v any)
	walk = func(from string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch k {
				case "Ref":
					if s, ok := e.(string); ok {
						deps[from] = append(deps[from], s)
					}
				case "Fn::GetAtt":
					if a, ok := e.([]any); ok && len(a) > 0 {
						deps[from] = append(deps[from], fmt.Sprint(a[0]))
					}
				}
				walk(from, e)
			}
		case []any:
			for _, e := range x {
				walk(from, e)
			}
		}
	}
	for id, r := range res {
		r := r.(map[string]any)
		walk(id, r["Properties"])
		switch d := r["DependsOn"].(type) {
		case string:
			deps[id] = append(deps[id], d)
		case []any:
			for _, e := range d {
				deps[id] = append(deps[id], fmt.Sprint(e))
			}
		}
	}
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(id string) []string
	visit = func(id string) []string {
		if _, ok := res[id]; !ok || state[id] == done {
			return nil // a parameter or pseudo parameter, or checked
		}
		if state[id] == open {
			return append(slices.Clone(path[slices.Index(path, id):]), id)
		}
		state[id] = open
		path = append(path, id)
		for _, d := range deps[id] {
			if c := visit(d); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		state[id] = done
		return nil
	}
	ids := make([]string, 0, len(res))
	for id := range res {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if c := visit(id); c != nil {
			return c
		}
	}
	return nil
}

func TestFindCycle(t *testing.T) {
	tmpl := map[string]any{"Resources": map[string]any{
		"A": map[string]any{"Properties": map[string]any{"X": map[string]any{"Fn::GetAtt": []any{"B", "Arn"}}}},
		"B": map[string]any{"Properties": map[string]any{"Y": map[string]any{"Ref": "AWS::Region"}}, "DependsOn": []any{"A"}},
	}}
	if c := findCycle(tmpl); !slices.Equal(c, []string{"A", "B", "A"}) {
		t.Errorf("cycle = %v, want [A B A]", c)
	}
	delete(tmpl["Resources"].(map[string]any)["B"].(map[string]any), "DependsOn")
	if c := findCycle(tmpl); c != nil {
		t.Errorf("cycle = %v, want none", c)
	}
}
