// Package iam evaluates a function role's identity policies from the
// template the way AWS does for the calls the functions make: an explicit
// Deny wins, else an Allow whose action and resource patterns match, else
// an implicit deny. It ignores Condition blocks (the template has none on
// these roles), permission boundaries and resource policies.
package iam

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Statement is one policy statement, its Action and Resource already
// resolved to strings.
type Statement struct {
	Sid      string
	Effect   string // Allow or Deny
	Actions  []string
	Resource []string
}

// Grant names one (statement, action, resource) triple of a policy, the
// unit the unused-grant report counts.
type Grant struct {
	Action   string
	Resource string
}

// Policy is every statement of one role.
type Policy struct {
	Statements []Statement
}

// Request is one authorization question: can the role do Action on
// Resource?
type Request struct {
	Action   string // service:Action, e.g. dynamodb:PutItem
	Resource string // ARN
}

func (r Request) String() string { return r.Action + " on " + r.Resource }

// Decision is the answer to a Request; Matched lists the grants that
// allowed it.
type Decision struct {
	Allowed bool
	Denied  bool // an explicit Deny matched
	Matched []Grant
}

// Evaluate decides one request.
func (p Policy) Evaluate(r Request) Decision {
	var d Decision
	for _, s := range p.Statements {
		ai := slices.IndexFunc(s.Actions, func(a string) bool { return matchAction(a, r.Action) })
		if ai < 0 {
			continue
		}
		ri := slices.IndexFunc(s.Resource, func(res string) bool { return matchResource(res, r.Resource) })
		if ri < 0 {
			continue
		}
		if strings.EqualFold(s.Effect, "Deny") {
			d.Denied = true
			continue
		}
		for _, a := range s.Actions {
			if !matchAction(a, r.Action) {
				continue
			}
			for _, res := range s.Resource {
				if matchResource(res, r.Resource) {
					d.Matched = append(d.Matched, Grant{Action: a, Resource: res})
				}
			}
		}
	}
	d.Allowed = !d.Denied && len(d.Matched) > 0
	return d
}

// EvaluateAll decides a call that needs several permissions (each item of
// a TransactWriteItems, each table of a BatchWriteItem): it is allowed
// only if every request is. The first refused request is returned.
func (p Policy) EvaluateAll(rs []Request) (bool, Request, []Grant) {
	var used []Grant
	for _, r := range rs {
		d := p.Evaluate(r)
		if !d.Allowed {
			return false, r, nil
		}
		used = append(used, d.Matched...)
	}
	return true, Request{}, used
}

// Grants lists every (action, resource) pair the policy allows, in order.
func (p Policy) Grants() []Grant {
	var out []Grant
	for _, s := range p.Statements {
		if strings.EqualFold(s.Effect, "Deny") {
			continue
		}
		for _, a := range s.Actions {
			for _, r := range s.Resource {
				g := Grant{Action: a, Resource: r}
				if !slices.Contains(out, g) {
					out = append(out, g)
				}
			}
		}
	}
	return out
}

// matchAction compares actions as IAM does: the service prefix and the
// action name are case-insensitive, and * and ? are wildcards.
func matchAction(pattern, action string) bool {
	return wildcard(strings.ToLower(pattern), strings.ToLower(action))
}

// matchResource compares ARNs as IAM does: case-sensitive, with * and ?
// matching within and across segments.
func matchResource(pattern, arn string) bool {
	return wildcard(pattern, arn)
}

// wildcard matches s against a pattern where * is any run of characters
// (slashes and colons included, unlike path.Match) and ? is one character.
func wildcard(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// ParseDocument reads a PolicyDocument whose values are already resolved
// (strings or lists of strings).
func ParseDocument(doc json.RawMessage) ([]Statement, error) {
	var d struct {
		Statement []struct {
			Sid      string
			Effect   string
			Action   stringList
			Resource stringList
		}
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("policy document: %w", err)
	}
	var out []Statement
	for _, s := range d.Statement {
		out = append(out, Statement{Sid: s.Sid, Effect: s.Effect, Actions: s.Action, Resource: s.Resource})
	}
	return out, nil
}

// stringList is a policy field that is a string or a list of strings.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*l = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want a string or a list of strings: %s", b)
	}
	*l = many
	return nil
}

// ParseStatements reads a resolved PolicyDocument (as decoded JSON).
func ParseStatements(doc any) ([]Statement, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return ParseDocument(b)
}
