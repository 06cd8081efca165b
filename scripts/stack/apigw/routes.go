// Package apigw serves an API Gateway HTTP API from its template routes:
// route selection as API Gateway does it, payload format 2.0 events, the
// Lambda proxy response, the 30 s integration timeout and API Gateway's own
// answers where no route matches.
package apigw

import (
	"fmt"
	"sort"
	"strings"
)

// Route is one route of an HTTP API: "METHOD /path" or "$default", and the
// function its integration invokes.
type Route struct {
	Key      string // route key as in the template
	Function string
}

// Router selects routes.
type Router struct {
	routes []parsedRoute
	def    *Route
}

type parsedRoute struct {
	Route
	method   string
	segments []string
	greedy   bool
}

// NewRouter checks and indexes routes.
func NewRouter(routes []Route) (*Router, error) {
	r := &Router{}
	for _, rt := range routes {
		if rt.Key == "$default" {
			d := rt
			r.def = &d
			continue
		}
		method, path, ok := strings.Cut(rt.Key, " ")
		if !ok || !strings.HasPrefix(path, "/") {
			return nil, fmt.Errorf("route key %q: want \"METHOD /path\" or $default", rt.Key)
		}
		p := parsedRoute{Route: rt, method: method, segments: strings.Split(strings.Trim(path, "/"), "/")}
		if path == "/" {
			p.segments = nil
		}
		if n := len(p.segments); n > 0 && strings.HasSuffix(p.segments[n-1], "+}") {
			p.greedy = true
		}
		r.routes = append(r.routes, p)
	}
	return r, nil
}

// Match is a selected route and its path parameters.
type Match struct {
	Route
	PathParameters map[string]string
}

// Match selects the route of a request as API Gateway does: among the
// routes whose method (or ANY) and path match, a route with the request's
// own method wins over ANY, then a full literal path over one with path
// variables, then more literal segments from the left, and a greedy
// {proxy+} route comes last; $default when nothing matches. ok is false
// when no route matches and there is no $default (API Gateway answers 404
// {"message":"Not Found"}).
func (r *Router) Match(method, path string) (Match, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if strings.Trim(path, "/") == "" {
		segs = nil
	}
	type cand struct {
		m     Match
		score []int
	}
	var cands []cand
	for _, rt := range r.routes {
		if rt.method != "ANY" && rt.method != method {
			continue
		}
		params, literal, ok := matchPath(rt, segs)
		if !ok {
			continue
		}
		greedy := 0
		if rt.greedy {
			greedy = 1
		}
		methodSpecific := 0
		if rt.method == method {
			methodSpecific = 1
		}
		// Higher is better, compared in order.
		score := append([]int{-greedy}, literal...)
		score = append(score, len(rt.segments), methodSpecific)
		cands = append(cands, cand{m: Match{Route: rt.Route, PathParameters: params}, score: score})
	}
	if len(cands) == 0 {
		if r.def != nil {
			return Match{Route: *r.def}, true
		}
		return Match{}, false
	}
	sort.SliceStable(cands, func(i, j int) bool { return less(cands[j].score, cands[i].score) })
	return cands[0].m, true
}

func less(a, b []int) bool {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// matchPath matches request segments against a route's; literal holds, for
// each route segment from the left, 1 where it is literal (so that literal
// segments earlier in the path rank first).
func matchPath(rt parsedRoute, segs []string) (map[string]string, []int, bool) {
	params := map[string]string{}
	literal := make([]int, 0, len(rt.segments))
	for i, s := range rt.segments {
		if rt.greedy && i == len(rt.segments)-1 {
			if i >= len(segs) {
				return nil, nil, false // {proxy+} needs at least one segment
			}
			params[strings.TrimSuffix(strings.TrimPrefix(s, "{"), "+}")] = strings.Join(segs[i:], "/")
			literal = append(literal, 0)
			return params, literal, true
		}
		if i >= len(segs) {
			return nil, nil, false
		}
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			if segs[i] == "" {
				return nil, nil, false
			}
			params[s[1:len(s)-1]] = segs[i]
			literal = append(literal, 0)
			continue
		}
		if s != segs[i] {
			return nil, nil, false
		}
		literal = append(literal, 1)
	}
	if len(segs) != len(rt.segments) {
		return nil, nil, false
	}
	if len(params) == 0 {
		params = nil
	}
	return params, literal, true
}
