package main

import (
	"fmt"
	"strings"
	"testing"
)

const sample = "# Title\n\n```sh\nA=$(echo '{\"id\":\"x\",\n  \"n\":1}' | jq -c .)   # a comment\necho \"$A\"\n#> {\"id\":\"x\",\"n\":1}\ncurl -s \\\n  http://127.0.0.1:8080/x   #> 404\n# prose\n```\n\n<!-- readme: skip needs AWS -->\n```sh\naws s3 ls\n```\n\n```json\n{}\n```\n"

func TestParseCutsCommandsAndExpectedOutput(t *testing.T) {
	blocks, err := Parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 {
		t.Fatalf("%d blocks, want the 2 sh blocks", len(blocks))
	}
	if blocks[0].Skip != "" || blocks[1].Skip != "needs AWS" || blocks[0].Heading != "Title" {
		t.Errorf("blocks: %+v", blocks)
	}
	c := blocks[0].Commands
	if len(c) != 3 {
		t.Fatalf("%d commands: %+v", len(c), c)
	}
	if !strings.Contains(c[0].Text, `"n":1}'`) || c[0].Expect != nil {
		t.Errorf("the multi-line quote is one command, unchecked: %+v", c[0])
	}
	if len(c[1].Expect) != 1 || c[1].Expect[0] != `{"id":"x","n":1}` {
		t.Errorf("echo: %+v", c[1])
	}
	if c[2].Line != 8 || len(c[2].Expect) != 1 || c[2].Expect[0] != "404" {
		t.Errorf("continued curl with an inline expectation: %+v", c[2])
	}
}

func TestParseRefusesBadMarkers(t *testing.T) {
	for name, doc := range map[string]string{
		"no reason":  "<!-- readme: skip -->\n```sh\nls\n```\n",
		"unknown":    "<!-- readme: maybe -->\n```sh\nls\n```\n",
		"not sh":     "<!-- readme: skip x -->\n```json\n{}\n```\n",
		"open quote": "```sh\necho 'x\n```\n",
		"early #>":   "```sh\n#> x\n```\n",
		"open fence": "```sh\nls\n",
	} {
		if _, err := Parse(doc); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMatcher(t *testing.T) {
	cases := []struct {
		expect []string
		out    string
		ok     bool
	}{
		{[]string{`{"callSid":"CA…","status":"queued"}`}, `{"callSid":"CA0123","status":"queued"}` + "\n", true},
		{[]string{`{"callSid":"CA…","status":"queued"}`}, `{"callSid":"CA0123","status":"calling"}`, false},
		{[]string{`"req_..."`}, `"req_abc"`, true},
		{[]string{`a`, `…`}, "a\nb\nc", true},
		{[]string{`a`, `…`}, "a", true},
		{[]string{`a`, `…`, `z`}, "a\nb\nc\nz", true},
		{[]string{`a`, `…`, `z`}, "a\nz", true},
		{[]string{`a`, `…`, `z`}, "a\nb", false},
		{[]string{`a.b`}, "axb", false}, // literal, not a regexp
		{[]string{`x…`}, "xy\nextra", false},
		{[]string{`201`}, "201  \n\n", true},
	}
	for _, c := range cases {
		if got := Matcher(c.expect).MatchString(Normalize(c.out)); got != c.ok {
			t.Errorf("%q against %q: %v, want %v", c.expect, c.out, got, c.ok)
		}
	}
}

func TestScriptMarksStepsAndSubstitutesPorts(t *testing.T) {
	blocks, err := Parse(sample + "```sh\nmoto_server -p 5000 &\nAWS_ENDPOINT_URL=http://127.0.0.1:5000 true\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]string{"8080": "41000", "5000": "42000"}
	script, cmds := Script(blocks, ports)
	if len(cmds) != 5 {
		t.Fatalf("%d commands run, want 5 (the skipped block's none)", len(cmds))
	}
	for _, want := range []string{"http://127.0.0.1:41000/x", "moto_server -p 42000 &", "http://127.0.0.1:42000 true", `readme-step 4\n'`} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	if strings.Contains(script, "aws s3 ls") {
		t.Error("a skipped block is in the script")
	}
	steps := splitSteps("\n" + stepMark + "0\nhello\n\n" + stepMark + "1\n")
	if steps[0] != "hello\n" || steps[1] != "" {
		t.Errorf("steps: %v", steps)
	}
}

// A loop or an if over several lines is one command; a one-line loop too.
func TestCompoundCommandsAreOneCommand(t *testing.T) {
	blocks, err := Parse("```sh\nCUR=\nwhile :; do\n  echo \"done\"\n  [ -n \"$CUR\" ] || break\ndone\nuntil true; do sleep 1; done\nif true; then\n  echo 'fi'\nfi\necho for\necho x\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, c := range blocks[0].Commands {
		lines = append(lines, c.Line)
	}
	if fmt.Sprint(lines) != "[2 3 7 8 11 12]" {
		t.Errorf("commands start on lines %v, want [2 3 7 8 11 12]", lines)
	}
}
