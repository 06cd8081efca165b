package esm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Pattern is one of a mapping's FilterCriteria: an EventBridge event
// pattern matched against each record. Supported: exact values, prefix,
// exists, anything-but and numeric equality, in nested objects.
type Pattern map[string]any

// ParsePattern reads a filter's Pattern string.
func ParsePattern(s string) (Pattern, error) {
	var p map[string]any
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return nil, fmt.Errorf("filter pattern %q: %w", s, err)
	}
	return p, nil
}

// MatchAny tells whether a record (as JSON) matches any pattern; with no
// patterns every record matches.
func MatchAny(patterns []Pattern, record []byte) bool {
	if len(patterns) == 0 {
		return true
	}
	var r map[string]any
	if err := json.Unmarshal(record, &r); err != nil {
		return false
	}
	for _, p := range patterns {
		if matchObject(p, r) {
			return true
		}
	}
	return false
}

func matchObject(p map[string]any, r map[string]any) bool {
	for k, want := range p {
		got, present := r[k]
		switch w := want.(type) {
		case map[string]any:
			sub, ok := got.(map[string]any)
			if !ok || !matchObject(w, sub) {
				return false
			}
		case []any:
			if !matchValues(w, got, present) {
				return false
			}
		default:
			return false // a pattern's leaves are arrays
		}
	}
	return true
}

func matchValues(rules []any, got any, present bool) bool {
	for _, rule := range rules {
		if matchRule(rule, got, present) {
			return true
		}
	}
	return false
}

func matchRule(rule, got any, present bool) bool {
	if m, ok := rule.(map[string]any); ok {
		for op, arg := range m {
			switch op {
			case "exists":
				b, _ := arg.(bool)
				return b == present
			case "prefix":
				s, ok := got.(string)
				pre, _ := arg.(string)
				return ok && strings.HasPrefix(s, pre)
			case "anything-but":
				if !present {
					return false
				}
				if list, ok := arg.([]any); ok {
					for _, x := range list {
						if equal(x, got) {
							return false
						}
					}
					return true
				}
				return !equal(arg, got)
			}
		}
		return false
	}
	if !present {
		return false
	}
	if list, ok := got.([]any); ok { // an array matches if any element does
		for _, x := range list {
			if equal(rule, x) {
				return true
			}
		}
		return false
	}
	return equal(rule, got)
}

func equal(a, b any) bool {
	return fmt.Sprintf("%T:%v", a, a) == fmt.Sprintf("%T:%v", b, b)
}
