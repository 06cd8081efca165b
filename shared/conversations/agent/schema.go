package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// A tool's input schema is a subset of JSON Schema, enough to describe a
// function's arguments and small enough to check here without a schema
// library in every function: type (object, string, number, integer,
// boolean, array), properties, required, additionalProperties (false),
// items, enum, description, minimum, maximum, minLength, maxLength.

const maxSchemaDepth = 8

var schemaTypes = []string{"object", "string", "number", "integer", "boolean", "array"}

var schemaKeywords = []string{"type", "properties", "required", "additionalProperties", "items", "enum",
	"description", "minimum", "maximum", "minLength", "maxLength", "title"}

// checkSchema checks that s uses only the subset, well formed.
func checkSchema(s map[string]any, path string, depth int, errs *fieldErrors) {
	if depth > maxSchemaDepth {
		errs.add(path, "is nested deeper than %d levels", maxSchemaDepth)
		return
	}
	for _, k := range sortedKeys(s) {
		if !slices.Contains(schemaKeywords, k) {
			errs.add(key(path, k), "is not supported; a tool's schema may use %s", strings.Join(schemaKeywords, ", "))
		}
	}
	typ, ok := s["type"].(string)
	if !ok || !slices.Contains(schemaTypes, typ) {
		errs.add(key(path, "type"), "must be one of %s", strings.Join(schemaTypes, ", "))
		return
	}
	if props, ok := s["properties"]; ok {
		m, ok := props.(map[string]any)
		if !ok || typ != "object" {
			errs.add(key(path, "properties"), `must be an object, in a schema of "type": "object"`)
		} else {
			for _, name := range sortedKeys(m) {
				sub, ok := m[name].(map[string]any)
				if !ok {
					errs.add(key(key(path, "properties"), name), "must be a schema (an object)")
					continue
				}
				checkSchema(sub, key(key(path, "properties"), name), depth+1, errs)
			}
		}
	}
	if req, ok := s["required"]; ok {
		list, ok := req.([]any)
		props, _ := s["properties"].(map[string]any)
		for _, r := range list {
			name, isStr := r.(string)
			if _, declared := props[name]; !isStr || !declared {
				ok = false
			}
		}
		if !ok {
			errs.add(key(path, "required"), "must list names of \"properties\"")
		}
	}
	if ap, ok := s["additionalProperties"]; ok && ap != false {
		errs.add(key(path, "additionalProperties"), "may only be false")
	}
	if items, ok := s["items"]; ok {
		sub, ok := items.(map[string]any)
		if !ok || typ != "array" {
			errs.add(key(path, "items"), `must be a schema, in a schema of "type": "array"`)
		} else {
			checkSchema(sub, key(path, "items"), depth+1, errs)
		}
	}
	if e, ok := s["enum"]; ok {
		if list, ok := e.([]any); !ok || len(list) == 0 {
			errs.add(key(path, "enum"), "must be a non-empty array")
		}
	}
	for _, k := range []string{"minimum", "maximum", "minLength", "maxLength"} {
		if v, ok := s[k]; ok {
			if _, ok := schemaNumber(v); !ok {
				errs.add(key(path, k), "must be a number")
			}
		}
	}
}

// schemaNumber reads a number of a schema or of arguments: json.Number
// (a configuration being parsed), float64 (decoded) or int (a spec built
// in code).
func schemaNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// validateArgs checks a tool's arguments (decoded JSON) against its schema
// (already checked); it returns the first problem, naming the argument,
// and never quotes a value.
func validateArgs(s map[string]any, v any, path string) error {
	typ, _ := s["type"].(string)
	name := path
	if name == "" {
		name = "the arguments"
	}
	switch typ {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s must be an object", name)
		}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: %q is required", name, r)
			}
		}
		for _, k := range sortedKeys(obj) {
			sub, ok := props[k].(map[string]any)
			if !ok {
				if s["additionalProperties"] == false {
					return fmt.Errorf("%s: %q is not an argument of this tool", name, k)
				}
				continue
			}
			if err := validateArgs(sub, obj[k], key(path, k)); err != nil {
				return err
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s must be an array", name)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range arr {
				if err := validateArgs(items, e, index(path, i)); err != nil {
					return err
				}
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s must be a string", name)
		}
		n := float64(utf8.RuneCountInString(str))
		if m, ok := schemaNumber(s["minLength"]); ok && n < m {
			return fmt.Errorf("%s is shorter than %v characters", name, m)
		}
		if m, ok := schemaNumber(s["maxLength"]); ok && n > m {
			return fmt.Errorf("%s is longer than %v characters", name, m)
		}
	case "number", "integer":
		f, ok := schemaNumber(v)
		if !ok || typ == "integer" && f != math.Trunc(f) {
			return fmt.Errorf("%s must be a %s", name, typ)
		}
		if m, ok := schemaNumber(s["minimum"]); ok && f < m {
			return fmt.Errorf("%s is below its minimum %v", name, m)
		}
		if m, ok := schemaNumber(s["maximum"]); ok && f > m {
			return fmt.Errorf("%s is above its maximum %v", name, m)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s must be true or false", name)
		}
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return jsonEqual(x, v) }) {
		return fmt.Errorf("%s is not one of the allowed values", name)
	}
	return nil
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
