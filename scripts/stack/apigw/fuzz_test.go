package apigw

import (
	"strings"
	"testing"
)

// FuzzMatch: route selection never panics, a match's method is the
// request's or ANY, and a match's path parameters are non-empty segments
// of the path.
func FuzzMatch(f *testing.F) {
	r, err := NewRouter([]Route{
		{Key: "ANY /v1/alert-rules/{proxy+}", Function: "a"},
		{Key: "POST /{version}/{account_id}/{project_id}/chat/create", Function: "c"},
		{Key: "GET /v1/outbound-calling/{callSid}/status", Function: "o"},
		{Key: "GET /v1/x", Function: "x"},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("GET", "/v1/alert-rules/a/b")
	f.Add("POST", "/v3/a/p/chat/create")
	f.Add("GET", "//v1//x/")
	f.Fuzz(func(t *testing.T, method, path string) {
		m, ok := r.Match(method, path)
		if !ok {
			return
		}
		if m.Key == "$default" {
			t.Fatal("matched $default, which this router has not")
		}
		if rm, _, _ := strings.Cut(m.Key, " "); rm != "ANY" && rm != method {
			t.Fatalf("%s %s matched %s", method, path, m.Key)
		}
		for k, v := range m.PathParameters {
			if v == "" || !strings.Contains(path, v) {
				t.Fatalf("%s %s: parameter %s=%q", method, path, k, v)
			}
		}
	})
}
