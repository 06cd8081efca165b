package apispec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Every example of the document validates against its schema: the
// "examples" of a schema, and the "example"/"examples" of a media type or
// parameter against the schema beside them. (Redocly's linter checks the
// same in the test command; this one runs with go test.)
func TestEveryExampleMatchesItsSchema(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Document()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "mem://openapi.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	var raw any
	if err := json.Unmarshal(Document(), &raw); err != nil {
		t.Fatal(err)
	}
	checked := 0
	check := func(schemaPtr string, where string, example any) {
		t.Helper()
		s, err := c.Compile(url + "#" + schemaPtr)
		if err != nil {
			t.Errorf("%s: compiling the schema: %v", schemaPtr, err)
			return
		}
		checked++
		// Round-trip through the library's decoder: numbers as json.Number.
		b, _ := json.Marshal(example)
		v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err := s.Validate(v); err != nil {
			t.Errorf("the example at %s does not match its schema: %v", where, err)
		}
	}
	var walk func(x any, ptr string)
	walk = func(x any, ptr string) {
		switch x := x.(type) {
		case map[string]any:
			_, isSchemaCarrier := x["schema"].(map[string]any)
			if ex, ok := x["examples"].([]any); ok && !isSchemaCarrier && strings.Contains(ptr, "schema") {
				for i, e := range ex {
					check(ptr, fmt.Sprintf("%s/examples/%d", ptr, i), e)
				}
			}
			if isSchemaCarrier {
				if e, ok := x["example"]; ok {
					check(ptr+"/schema", ptr+"/example", e)
				}
				if exs, ok := x["examples"].(map[string]any); ok {
					for name, e := range exs {
						if m, ok := e.(map[string]any); ok {
							if v, ok := m["value"]; ok {
								check(ptr+"/schema", ptr+"/examples/"+name, v)
							}
						}
					}
				}
			}
			for k, v := range x {
				walk(v, ptr+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k))
			}
		case []any:
			for i, v := range x {
				walk(v, fmt.Sprintf("%s/%d", ptr, i))
			}
		}
	}
	walk(raw, "")
	if checked < 20 {
		t.Errorf("only %d examples checked: the walk missed them", checked)
	}
	t.Logf("%d examples checked", checked)
}
