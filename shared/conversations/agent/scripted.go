package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// ScriptedSpec is the built-in scripted agent: a greeting, ordered rules
// (the first that matches a turn answers it) and a fallback.
type ScriptedSpec struct {
	// Greeting is the first thing the agent says (Request.Start).
	Greeting string `json:"greeting"`
	Rules    []Rule `json:"rules,omitempty"`
	// Fallback answers a turn no rule matches; the turn is out-of-domain
	// (unless it is a silence: silences are counted as such, not as OOD).
	Fallback string `json:"fallback"`
}

// Rule matches a turn when any of its conditions does (keywords, regex,
// dtmf, silence) and, when IfState is set, the conversation's state has
// every value it lists. It then answers with Response and its other fields.
type Rule struct {
	// ID names the rule for the people who read the configuration.
	ID string `json:"id,omitempty"`

	// Keywords match whole words of the user's input, case-insensitively;
	// any one of them is enough. A keyword of several words matches them in
	// sequence ("speak to someone").
	Keywords []string `json:"keywords,omitempty"`
	// Regex is a regular expression (Go RE2 syntax, case-sensitive unless
	// it starts with (?i)) searched in the user's input. Its named groups,
	// when they match, become entities {"type": name, "value": text}.
	Regex string `json:"regex,omitempty"`
	// DTMF matches keypad input exactly ("1", "12#").
	DTMF string `json:"dtmf,omitempty"`
	// Silence matches a turn without input.
	Silence bool `json:"silence,omitempty"`
	// IfState limits the rule to conversations whose state has these
	// values (strings, numbers, booleans; null means absent).
	IfState map[string]any `json:"if_state,omitempty"`

	// Response is the answer; "{{state.KEY}}" is replaced by that state
	// value (after SetState), or nothing when there is none.
	Response string           `json:"response"`
	SetState map[string]any   `json:"set_state,omitempty"`
	Intents  []string         `json:"intents,omitempty"`
	Entities []map[string]any `json:"entities,omitempty"`
	Handoff  *Handoff         `json:"handoff,omitempty"`
	End      bool             `json:"end,omitempty"`
}

func (s *ScriptedSpec) clone() *ScriptedSpec {
	out := *s
	out.Rules = slices.Clone(s.Rules)
	for i := range out.Rules {
		r := &out.Rules[i]
		r.Keywords = slices.Clone(r.Keywords)
		r.IfState = cloneObject(r.IfState)
		r.SetState = cloneObject(r.SetState)
		r.Intents = slices.Clone(r.Intents)
		r.Entities = cloneObjects(r.Entities)
		r.Handoff = r.Handoff.clone()
	}
	return &out
}

// clone copies h as it is.
func (h *Handoff) clone() *Handoff {
	if h == nil {
		return nil
	}
	out := *h
	if h.SIP != nil {
		sip := *h.SIP
		out.SIP = &sip
	}
	return &out
}

// scripted is a compiled ScriptedSpec.
type scripted struct {
	greeting, fallback template
	rules              []rule
}

type rule struct {
	keywords [][]string // each keyword's words, lower-case
	re       *regexp.Regexp
	groups   []string // re's subexpression names ("" for unnamed)
	named    bool     // re has a named group
	dtmf     string
	silence  bool
	ifState  map[string]any

	response template
	setState map[string]any
	intents  []string
	entities []map[string]any
	handoff  *Handoff
	end      bool
}

// validDTMF reports whether s is 1 to 32 keypad keys: 0-9, *, #, A-D.
func validDTMF(s string) bool {
	if len(s) < 1 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || c == '*' || c == '#' || 'A' <= c && c <= 'D') {
			return false
		}
	}
	return true
}

// compileScripted validates spec, reporting problems under path, and
// returns the compiled agent (meaningful only when nothing was reported).
func compileScripted(spec *ScriptedSpec, path string, errs *fieldErrors) *scripted {
	a := &scripted{
		greeting: compileResponse(spec.Greeting, key(path, "greeting"), errs),
		fallback: compileResponse(spec.Fallback, key(path, "fallback"), errs),
	}
	if len(spec.Rules) > MaxRules {
		errs.add(key(path, "rules"), "must have at most %d rules", MaxRules)
		return a
	}
	ids := map[string]int{}
	a.rules = make([]rule, len(spec.Rules))
	for i, r := range spec.Rules {
		a.rules[i] = compileRule(r, index(key(path, "rules"), i), ids, i, errs)
	}
	return a
}

func compileRule(r Rule, path string, ids map[string]int, i int, errs *fieldErrors) rule {
	c := rule{dtmf: r.DTMF, silence: r.Silence, end: r.End}
	if r.ID != "" && checkText(r.ID, key(path, "id"), MaxShortText, true, false, errs) {
		if j, dup := ids[r.ID]; dup {
			errs.add(key(path, "id"), "duplicate rule ID %q (also rules[%d])", r.ID, j)
		} else {
			ids[r.ID] = i
		}
	}
	if len(r.Keywords) > MaxKeywords {
		errs.add(key(path, "keywords"), "must have at most %d keywords", MaxKeywords)
	} else {
		for j, kw := range r.Keywords {
			kp := index(key(path, "keywords"), j)
			if !checkText(kw, kp, MaxShortText, true, false, errs) {
				continue
			}
			ws := words(kw)
			if len(ws) == 0 {
				errs.add(kp, "must contain a letter or a digit")
				continue
			}
			c.keywords = append(c.keywords, ws)
		}
	}
	if r.Regex != "" {
		rp := key(path, "regex")
		if len(r.Regex) > MaxRegexLength {
			errs.add(rp, "must be at most %d bytes", MaxRegexLength)
		} else if re, err := regexp.Compile(r.Regex); err != nil {
			errs.add(rp, "%s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		} else {
			c.re, c.groups = re, re.SubexpNames()
			c.named = slices.ContainsFunc(c.groups, func(n string) bool { return n != "" })
		}
	}
	if r.DTMF != "" && !validDTMF(r.DTMF) {
		errs.add(key(path, "dtmf"), "must be 1 to 32 keypad keys: 0-9, *, #, A-D")
	}
	if len(r.Keywords) == 0 && r.Regex == "" && r.DTMF == "" && !r.Silence {
		errs.add(path, `matches nothing: give "keywords", "regex", "dtmf" or "silence": true`)
	}
	checkStateKeys(r.IfState, key(path, "if_state"), errs)
	for _, k := range sortedKeys(r.IfState) {
		switch r.IfState[k].(type) {
		case nil, string, bool, float64, json.Number:
		default:
			errs.add(key(key(path, "if_state"), k), "must be a string, a number, true, false or null")
		}
	}
	c.ifState = cloneObject(r.IfState)

	c.response = compileResponse(r.Response, key(path, "response"), errs)
	checkStateKeys(r.SetState, key(path, "set_state"), errs)
	checkLabels(r.Intents, key(path, "intents"), errs)
	checkEntities(r.Entities, key(path, "entities"), errs)
	if r.Handoff != nil {
		checkHandoff(r.Handoff, key(path, "handoff"), errs)
	}
	// Copies: the agent must not change when the caller's spec does.
	c.setState, c.intents, c.entities = cloneObject(r.SetState), slices.Clone(r.Intents), cloneObjects(r.Entities)
	c.handoff = r.Handoff.resolved()
	return c
}

// Respond answers from the rules; it never fails and never blocks.
func (a *scripted) Respond(_ context.Context, req Request) (Reply, error) {
	state := req.Conversation.State
	if req.Start {
		return Reply{Response: a.greeting.render(nil, state)}, nil
	}
	t := &req.Turn
	silent := t.IsSilence || t.UserInputDTMF == "" && strings.TrimSpace(t.UserInput) == ""
	var (
		ws        []string
		tokenized bool
	)
	for i := range a.rules {
		r := &a.rules[i]
		if r.ifState != nil && !stateHas(state, r.ifState) {
			continue
		}
		var groups []string
		matched := false
		switch {
		case silent:
			matched = r.silence
		case r.dtmf != "" && t.UserInputDTMF == r.dtmf:
			matched = true
		default:
			if len(r.keywords) > 0 && t.UserInput != "" {
				if !tokenized {
					ws, tokenized = words(t.UserInput), true
				}
				matched = slices.ContainsFunc(r.keywords, func(kw []string) bool { return containsSeq(ws, kw) })
			}
			if !matched && r.re != nil && t.UserInput != "" {
				if r.named {
					groups = r.re.FindStringSubmatch(t.UserInput)
					matched = groups != nil
				} else {
					matched = r.re.MatchString(t.UserInput)
				}
			}
		}
		if matched {
			return r.reply(state, groups), nil
		}
	}
	return Reply{Response: a.fallback.render(nil, state), OOD: !silent}, nil
}

func (r *rule) reply(state map[string]any, groups []string) Reply {
	out := Reply{
		Response: r.response.render(r.setState, state),
		State:    cloneObject(r.setState),
		Intents:  slices.Clone(r.intents),
		Entities: cloneObjects(r.entities),
		End:      r.end,
		Handoff:  r.handoff.clone(),
	}
	for i, name := range r.groups {
		if name != "" && i < len(groups) && groups[i] != "" {
			out.Entities = append(out.Entities, map[string]any{"type": name, "value": groups[i]})
		}
	}
	return out
}

// words splits text into lower-case words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// containsSeq reports whether seq occurs in ws as consecutive words.
func containsSeq(ws, seq []string) bool {
	for i := 0; i+len(seq) <= len(ws); i++ {
		if ws[i] == seq[0] && slices.Equal(ws[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}

// stateHas reports whether state holds every value of want (a null in want
// means the key is absent or null).
func stateHas(state, want map[string]any) bool {
	for k, w := range want {
		if !scalarEqual(w, state[k]) {
			return false
		}
	}
	return true
}

func scalarEqual(want, got any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case string:
		g, ok := got.(string)
		return ok && g == w
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	case float64:
		g, ok := number(got)
		return ok && g == w
	case json.Number:
		f, err := w.Float64()
		g, ok := number(got)
		return err == nil && ok && g == f
	}
	return false
}

// number reads the numeric types a state value may have, depending on who
// decoded it.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// template is a response with "{{state.KEY}}" placeholders, split at them.
type template struct {
	parts []part // nil when the text has no placeholder
	text  string
}

type part struct {
	text     string
	stateKey string // a placeholder when not empty
}

// placeholderKey returns KEY of a placeholder "state.KEY" (KEY: 1 to 256
// ASCII letters, digits, '_', '.' or '-').
func placeholderKey(s string) (string, bool) {
	k, ok := strings.CutPrefix(s, "state.")
	if !ok || len(k) < 1 || len(k) > 256 {
		return "", false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '.' || c == '-') {
			return "", false
		}
	}
	return k, true
}

// compileResponse checks a response, greeting or fallback and splits it at
// its placeholders.
func compileResponse(s, path string, errs *fieldErrors) template {
	if !checkText(s, path, MaxResponseLength, true, true, errs) {
		return template{}
	}
	t := template{text: s}
	if !strings.Contains(s, "{{") && !strings.Contains(s, "}}") {
		return t
	}
	rest := s
	for rest != "" {
		before, after, found := strings.Cut(rest, "{{")
		if strings.Contains(before, "}}") {
			errs.add(path, `has "}}" without a "{{" before it`)
			return template{}
		}
		if before != "" {
			t.parts = append(t.parts, part{text: before})
		}
		if !found {
			break
		}
		inner, tail, closed := strings.Cut(after, "}}")
		if !closed {
			errs.add(path, `has "{{" without a closing "}}"`)
			return template{}
		}
		k, ok := placeholderKey(strings.TrimSpace(inner))
		if !ok {
			errs.add(path, "placeholder {{%s}} is not {{state.KEY}}", inner)
			return template{}
		}
		t.parts = append(t.parts, part{stateKey: k})
		rest = tail
	}
	return t
}

// render fills the placeholders from set (the turn's new state values),
// then from state.
func (t template) render(set, state map[string]any) string {
	if t.parts == nil {
		return t.text
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.stateKey == "" {
			b.WriteString(p.text)
			continue
		}
		v, ok := set[p.stateKey]
		if !ok {
			v = state[p.stateKey]
		}
		b.WriteString(formatValue(v))
	}
	return b.String()
}

func formatValue(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case json.Number:
		return string(t)
	case int, int64, int32, float32:
		return fmt.Sprint(t)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
