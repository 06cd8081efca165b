// Package cfn reads a synthesized CloudFormation template from a cloud
// assembly and resolves the intrinsic functions CDK writes (Ref,
// Fn::GetAtt, Fn::Join, Fn::Select, Fn::Split, Fn::Sub) against the
// physical values of the resources the stack runner created.
package cfn

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Template is the part of a template the runner reads.
type Template struct {
	Resources map[string]Resource
}

// Resource is one template resource; Properties are unresolved.
type Resource struct {
	Type       string
	Properties map[string]any
	Metadata   map[string]any
}

// Load reads the template of stack from the cloud assembly in dir.
func Load(dir, stack string) (Template, error) {
	var manifest struct {
		Artifacts map[string]struct {
			Type       string
			Properties struct{ TemplateFile string }
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return Template{}, fmt.Errorf("reading the cloud assembly: %w", err)
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		return Template{}, fmt.Errorf("manifest.json: %w", err)
	}
	a, ok := manifest.Artifacts[stack]
	if !ok || a.Type != "aws:cloudformation:stack" {
		var names []string
		for n, a := range manifest.Artifacts {
			if a.Type == "aws:cloudformation:stack" {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		return Template{}, fmt.Errorf("the cloud assembly in %s has no stack %s (it has %v)", dir, stack, names)
	}
	b, err = os.ReadFile(filepath.Join(dir, a.Properties.TemplateFile))
	if err != nil {
		return Template{}, err
	}
	var t Template
	if err := json.Unmarshal(b, &t); err != nil {
		return Template{}, fmt.Errorf("%s: %w", a.Properties.TemplateFile, err)
	}
	return t, nil
}

// OfType lists the logical IDs of the resources of a type, sorted.
func (t Template) OfType(typ string) []string {
	var out []string
	for id, r := range t.Resources {
		if r.Type == typ {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// ErrUnresolved is returned for a reference to a resource not created yet.
var ErrUnresolved = errors.New("unresolved reference")

// Values are the physical values intrinsics resolve to.
type Values struct {
	Refs   map[string]string            // Ref of a logical ID or pseudo parameter
	Attrs  map[string]map[string]string // Fn::GetAtt by logical ID and attribute
	Region string
}

// NewValues returns Values with the pseudo parameters of an account and
// region.
func NewValues(account, region, stackName string) *Values {
	return &Values{
		Region: region,
		Refs: map[string]string{
			"AWS::AccountId": account, "AWS::Region": region, "AWS::Partition": "aws",
			"AWS::URLSuffix": "amazonaws.com", "AWS::StackName": stackName, "AWS::NoValue": "",
		},
		Attrs: map[string]map[string]string{},
	}
}

// Set records a resource's Ref value and attributes.
func (v *Values) Set(id, ref string, attrs map[string]string) {
	v.Refs[id] = ref
	v.Attrs[id] = attrs
}

// Resolve replaces every intrinsic function in x with its value.
func (v *Values) Resolve(x any) (any, error) {
	switch x := x.(type) {
	case map[string]any:
		if len(x) == 1 {
			for k, arg := range x {
				if k == "Ref" || strings.HasPrefix(k, "Fn::") {
					return v.intrinsic(k, arg)
				}
			}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := v.Resolve(e)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := v.Resolve(e)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return x, nil
}

// String resolves x to a string.
func (v *Values) String(x any) (string, error) {
	r, err := v.Resolve(x)
	if err != nil {
		return "", err
	}
	switch r := r.(type) {
	case string:
		return r, nil
	case float64, bool:
		return fmt.Sprint(r), nil
	}
	return "", fmt.Errorf("want a string, got %v", r)
}

func (v *Values) ref(id string) (string, error) {
	s, ok := v.Refs[id]
	if !ok {
		return "", fmt.Errorf("%w: Ref %s", ErrUnresolved, id)
	}
	return s, nil
}

func (v *Values) getAtt(id, attr string) (string, error) {
	s, ok := v.Attrs[id][attr]
	if !ok {
		if _, made := v.Attrs[id]; made {
			return "", fmt.Errorf("Fn::GetAtt %s.%s: the runner does not know this attribute", id, attr)
		}
		return "", fmt.Errorf("%w: Fn::GetAtt %s.%s", ErrUnresolved, id, attr)
	}
	return s, nil
}

var subVar = regexp.MustCompile(`\$\{([^}!][^}]*)\}`)

func (v *Values) intrinsic(fn string, arg any) (any, error) {
	switch fn {
	case "Ref":
		id, _ := arg.(string)
		return v.ref(id)
	case "Fn::GetAtt":
		var id, attr string
		switch a := arg.(type) {
		case []any:
			if len(a) == 2 {
				id, _ = a[0].(string)
				attr, _ = a[1].(string)
			}
		case string:
			id, attr, _ = strings.Cut(a, ".")
		}
		return v.getAtt(id, attr)
	case "Fn::Join":
		a, ok := arg.([]any)
		if !ok || len(a) != 2 {
			return nil, fmt.Errorf("Fn::Join: want [sep, list]")
		}
		sep, _ := a[0].(string)
		list, err := v.Resolve(a[1])
		if err != nil {
			return nil, err
		}
		items, _ := list.([]any)
		parts := make([]string, len(items))
		for i, it := range items {
			s, err := v.String(it)
			if err != nil {
				return nil, err
			}
			parts[i] = s
		}
		return strings.Join(parts, sep), nil
	case "Fn::Select":
		a, ok := arg.([]any)
		if !ok || len(a) != 2 {
			return nil, fmt.Errorf("Fn::Select: want [index, list]")
		}
		idx, err := v.Resolve(a[0])
		if err != nil {
			return nil, err
		}
		list, err := v.Resolve(a[1])
		if err != nil {
			return nil, err
		}
		var i int
		switch n := idx.(type) {
		case float64:
			i = int(n)
		case string:
			fmt.Sscan(n, &i)
		}
		items, _ := list.([]any)
		if i < 0 || i >= len(items) {
			return nil, fmt.Errorf("Fn::Select: index %d out of %d", i, len(items))
		}
		return items[i], nil
	case "Fn::Split":
		a, ok := arg.([]any)
		if !ok || len(a) != 2 {
			return nil, fmt.Errorf("Fn::Split: want [sep, string]")
		}
		sep, _ := a[0].(string)
		s, err := v.String(a[1])
		if err != nil {
			return nil, err
		}
		var out []any
		for _, p := range strings.Split(s, sep) {
			out = append(out, p)
		}
		return out, nil
	case "Fn::Sub":
		var tmpl string
		vars := map[string]any{}
		switch a := arg.(type) {
		case string:
			tmpl = a
		case []any:
			if len(a) == 2 {
				tmpl, _ = a[0].(string)
				vars, _ = a[1].(map[string]any)
			}
		}
		var firstErr error
		out := subVar.ReplaceAllStringFunc(tmpl, func(m string) string {
			name := m[2 : len(m)-1]
			var s string
			var err error
			if x, ok := vars[name]; ok {
				s, err = v.String(x)
			} else if id, attr, ok := strings.Cut(name, "."); ok {
				s, err = v.getAtt(id, attr)
			} else {
				s, err = v.ref(name)
			}
			if err != nil && firstErr == nil {
				firstErr = err
			}
			return s
		})
		if firstErr != nil {
			return nil, firstErr
		}
		return out, nil
	}
	return nil, fmt.Errorf("intrinsic %s is not supported by the stack runner", fn)
}
