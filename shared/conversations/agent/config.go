package agent

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Config is a project's agent configuration: what the operator loads from a
// JSON file (testdata/demo.json is an example) and PutConfig stores.
type Config struct {
	// AccountID and ProjectID name the project. A file may leave them out:
	// the operator CLI sets them from its flags.
	AccountID string `json:"account_id,omitempty"`
	ProjectID string `json:"project_id,omitempty"`
	// RetentionDays is how long the project's conversations are kept
	// (DefaultRetentionDays when 0).
	RetentionDays int `json:"retention_days,omitempty"`
	// ChatIdleTimeoutSeconds is how long a chat conversation may go
	// without activity before the service ends it (end reason timeout);
	// 0: the engine's default (30 minutes; the dev server's
	// -conversation-idle-timeout).
	ChatIdleTimeoutSeconds int `json:"chat_idle_timeout_seconds,omitempty"`
	// Variants are the agents a conversation can run with (the base host's
	// variant_id); exactly one is the default.
	Variants []Variant `json:"variants"`
	// Functions are the project functions, by hook.
	Functions map[Hook]FunctionSpec `json:"functions,omitempty"`
	// Tools are the project functions a Bedrock agent may call, by name.
	Tools map[string]ToolSpec `json:"tools,omitempty"`
}

// Variant is one agent of a project.
type Variant struct {
	ID string `json:"id"`
	// Name is the conversation's variant_name; the ID when empty.
	Name string `json:"name,omitempty"`
	// Default marks the variant of conversations that name none. A single
	// variant is the default without saying so.
	Default bool      `json:"default,omitempty"`
	Agent   AgentSpec `json:"agent"`
}

// AgentType names an implementation of Agent.
type AgentType string

const (
	TypeScripted AgentType = "scripted"
	TypeHTTP     AgentType = "http"
	TypeBedrock  AgentType = "bedrock"
)

// AgentTypes lists every agent type.
var AgentTypes = []AgentType{TypeScripted, TypeHTTP, TypeBedrock}

// AgentSpec describes a variant's agent: Type, and the spec of that type
// (the others are absent).
type AgentSpec struct {
	Type     AgentType     `json:"type"`
	Scripted *ScriptedSpec `json:"scripted,omitempty"`
	HTTP     *HTTPSpec     `json:"http,omitempty"`
	Bedrock  *BedrockSpec  `json:"bedrock,omitempty"`
}

// HTTPSpec is an HTTP agent: the project's own HTTPS endpoint answers each
// turn (http.go describes the exchange).
type HTTPSpec struct {
	URL string `json:"url"`
	// SigningSecret signs every request with the Standard Webhooks headers:
	// "whsec_" and the base64 of 24 to 64 random bytes.
	SigningSecret string `json:"signing_secret"`
	// TimeoutMS bounds each call (DefaultTimeoutMS when 0).
	TimeoutMS int `json:"timeout_ms,omitempty"`
	// Headers are sent with every request (an Authorization header, say),
	// under the rules of webhook endpoint headers.
	Headers map[string]string `json:"headers,omitempty"`
}

// Timeout is the bound of each call.
func (s HTTPSpec) Timeout() time.Duration { return timeoutOf(s.TimeoutMS) }

// Hook names the moment a project function runs.
type Hook string

const (
	HookOnStart         Hook = "on_start"
	HookOnTurn          Hook = "on_turn"
	HookOnEnd           Hook = "on_end"
	HookOnBridgeEnded   Hook = "on_bridge_ended"
	HookOnExternalEvent Hook = "on_external_event"
)

// Hooks lists every hook.
var Hooks = []Hook{HookOnStart, HookOnTurn, HookOnEnd, HookOnBridgeEnded, HookOnExternalEvent}

// FunctionSpec is a project function: exactly one of an HTTPS URL (whose
// requests are signed with SigningSecret) or a Lambda function's ARN.
type FunctionSpec struct {
	URL       string `json:"url,omitempty"`
	LambdaARN string `json:"lambda_arn,omitempty"`
	// SigningSecret is required with URL and refused with LambdaARN; same
	// form as HTTPSpec.SigningSecret.
	SigningSecret string `json:"signing_secret,omitempty"`
	// TimeoutMS bounds each call (DefaultTimeoutMS when 0).
	TimeoutMS int `json:"timeout_ms,omitempty"`
}

// Timeout is the bound of each call.
func (s FunctionSpec) Timeout() time.Duration { return timeoutOf(s.TimeoutMS) }

// Limits of a configuration.
const (
	DefaultRetentionDays = 90
	MinRetentionDays     = 1
	MaxRetentionDays     = 3650

	MaxChatIdleTimeoutSeconds = 7 * 24 * 3600

	DefaultTimeoutMS = 2000
	MinTimeoutMS     = 100
	MaxTimeoutMS     = 10000
	// MaxAgentTimeoutMS bounds an HTTP agent's turn: slow agents (a large
	// model) answer a voice turn from a run of its own, which lasts
	// calls.DefaultStepRun (25 s), while the caller hears a filler; the
	// turn's writes and the on_turn function share what is left.
	MaxAgentTimeoutMS = 22000

	// MaxConfigBytes bounds a configuration file (and what a store keeps).
	MaxConfigBytes = 256 << 10

	MaxVariants       = 20
	MaxRules          = 500
	MaxKeywords       = 100 // per rule
	MaxRegexLength    = 1024
	MaxResponseLength = 4096 // characters of a response, greeting or fallback
	MaxListItems      = 50   // intents, entities, state keys per rule or reply
	MaxShortText      = 256  // IDs, names, keywords, intents, state keys, destinations
	MaxReasonLength   = 1024
)

func timeoutOf(ms int) time.Duration {
	if ms == 0 {
		ms = DefaultTimeoutMS
	}
	return time.Duration(ms) * time.Millisecond
}

// Retention is how long the project's conversations are kept.
func (c Config) Retention() time.Duration {
	days := c.RetentionDays
	if days == 0 {
		days = DefaultRetentionDays
	}
	return time.Duration(days) * 24 * time.Hour
}

// Variant returns the variant with the given ID, or the default variant
// when id is empty.
func (c Config) Variant(id string) (Variant, bool) {
	for _, v := range c.Variants {
		if id == "" && (v.Default || len(c.Variants) == 1) || id != "" && v.ID == id {
			return v, true
		}
	}
	return Variant{}, false
}

// ParseConfig reads and validates a configuration file. Every problem is
// reported (a *ConfigError naming the JSON path of each); nothing is
// returned then. Defaults are filled in: retention_days, each timeout_ms, a
// variant's name, and the default flag of a single variant. policy says
// which URLs are acceptable: deployed stacks use the zero value; the dev
// server may allow loopback endpoints.
func ParseConfig(b []byte, policy voiceops.URLPolicy) (Config, error) {
	if len(b) > MaxConfigBytes {
		return Config{}, &ConfigError{Fields: []voiceops.FieldError{{Message: fmt.Sprintf("the configuration is larger than %d bytes", MaxConfigBytes)}}}
	}
	var c Config
	problems, decoded := decodeStrict(b, &c)
	if !decoded {
		return Config{}, problems.err()
	}
	c.fillDefaults()
	problems = append(problems, c.check(policy.CheckURL)...)
	if len(problems) > 0 {
		return Config{}, problems.capped().err()
	}
	return c.canonical()
}

// canonical returns c as a store gives it back: encoded and decoded, so
// that an empty list or object left out by omitempty is nil in both.
func (c Config) canonical() (Config, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return Config{}, fmt.Errorf("agent: encoding the configuration: %w", err)
	}
	var out Config
	if err := json.Unmarshal(b, &out); err != nil {
		return Config{}, fmt.Errorf("agent: decoding the configuration: %w", err)
	}
	return out, nil
}

// fillDefaults writes out the defaults, so that the stored configuration
// says what applies.
func (c *Config) fillDefaults() {
	if c.RetentionDays == 0 {
		c.RetentionDays = DefaultRetentionDays
	}
	if len(c.Variants) == 1 {
		c.Variants[0].Default = true
	}
	for i := range c.Variants {
		v := &c.Variants[i]
		if v.Name == "" {
			v.Name = v.ID
		}
		if v.Agent.HTTP != nil && v.Agent.HTTP.TimeoutMS == 0 {
			v.Agent.HTTP.TimeoutMS = DefaultTimeoutMS
		}
		if v.Agent.Bedrock != nil {
			v.Agent.Bedrock.fillDefaults()
		}
	}
	for h, f := range c.Functions {
		if f.TimeoutMS == 0 {
			f.TimeoutMS = DefaultTimeoutMS
			c.Functions[h] = f
		}
	}
	for name, t := range c.Tools {
		if t.Function.TimeoutMS == 0 {
			t.Function.TimeoutMS = DefaultTimeoutMS
			c.Tools[name] = t
		}
	}
}

// Validate checks a configuration as ParseConfig does (zero values that have
// a default are accepted), returning a *ConfigError.
func (c Config) Validate(policy voiceops.URLPolicy) error { return c.check(policy.CheckURL).err() }

// urlCheck judges a URL field: "" when it is acceptable, else why not
// (voiceops.URLPolicy's CheckURL, or CheckStoredURL when an agent is built).
type urlCheck func(raw string) string

func (c Config) check(policy urlCheck) fieldErrors {
	var errs fieldErrors
	if c.AccountID != "" && !voiceops.ValidTenantID(c.AccountID) {
		errs.add("account_id", "must be 1 to 64 letters, digits, '_' or '-'")
	}
	if c.ProjectID != "" && !voiceops.ValidTenantID(c.ProjectID) {
		errs.add("project_id", "must be 1 to 64 letters, digits, '_' or '-'")
	}
	if c.RetentionDays != 0 && (c.RetentionDays < MinRetentionDays || c.RetentionDays > MaxRetentionDays) {
		errs.add("retention_days", "must be an integer between %d and %d (default %d)", MinRetentionDays, MaxRetentionDays, DefaultRetentionDays)
	}
	if c.ChatIdleTimeoutSeconds < 0 || c.ChatIdleTimeoutSeconds > MaxChatIdleTimeoutSeconds {
		errs.add("chat_idle_timeout_seconds", "must be an integer between 1 and %d (0 or absent: the service's default, 30 minutes)", MaxChatIdleTimeoutSeconds)
	}
	c.checkVariants(policy, &errs)
	for _, h := range sortedHooks(c.Functions) {
		path := key("functions", string(h))
		if _, ok := voiceops.ParseEnum(string(h), Hooks); !ok {
			errs.add(path, "unknown hook; %s", voiceops.OneOf(Hooks))
			continue
		}
		c.Functions[h].check(path, policy, &errs)
	}
	if len(c.Tools) > MaxTools {
		errs.add("tools", "must have at most %d tools", MaxTools)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Tools)) {
		path := key("tools", name)
		if checkToolName(name, path, &errs) {
			c.Tools[name].check(path, policy, &errs)
		}
	}
	return errs
}

func (c Config) checkVariants(policy urlCheck, errs *fieldErrors) {
	switch {
	case len(c.Variants) == 0:
		errs.add("variants", "must have at least 1 variant")
		return
	case len(c.Variants) > MaxVariants:
		errs.add("variants", "must have at most %d variants", MaxVariants)
		return
	}
	ids := map[string]int{}
	defaultAt := -1
	for i, v := range c.Variants {
		path := index("variants", i)
		if !voiceops.ValidTenantID(v.ID) { // the shape of account and project IDs
			errs.add(key(path, "id"), "must be 1 to 64 letters, digits, '_' or '-'")
		} else if j, dup := ids[v.ID]; dup {
			errs.add(key(path, "id"), "duplicate variant ID %q (also variants[%d])", v.ID, j)
		} else {
			ids[v.ID] = i
		}
		if v.Name != "" {
			if msg := voiceops.CheckName(v.Name); msg != "" {
				errs.add(key(path, "name"), "%s", msg)
			}
		}
		if v.Default {
			if defaultAt >= 0 {
				errs.add(key(path, "default"), "only one variant may be the default (variants[%d] already is)", defaultAt)
			} else {
				defaultAt = i
			}
		}
		v.Agent.check(key(path, "agent"), policy, c.toolsOrEmpty(), errs)
	}
	if defaultAt < 0 && len(c.Variants) > 1 {
		errs.add("variants", `one variant must have "default": true`)
	}
}

// toolsOrEmpty is the configuration's tools, never nil: a configuration
// checks its variants' tool names against them.
func (c Config) toolsOrEmpty() map[string]ToolSpec {
	if c.Tools == nil {
		return map[string]ToolSpec{}
	}
	return c.Tools
}

// absentOthers reports each spec set besides the one of s.Type.
func (s AgentSpec) absentOthers(path string, errs *fieldErrors) {
	for _, o := range []struct {
		t   AgentType
		set bool
	}{{TypeScripted, s.Scripted != nil}, {TypeHTTP, s.HTTP != nil}, {TypeBedrock, s.Bedrock != nil}} {
		if o.set && o.t != s.Type {
			errs.add(key(path, string(o.t)), "must be absent when \"type\" is %q", s.Type)
		}
	}
}

// check validates the spec; for a scripted agent it also returns the
// compiled agent (usable only when nothing was reported). tools are the
// configuration's (nil: not checked, as for a spec on its own).
func (s AgentSpec) check(path string, policy urlCheck, tools map[string]ToolSpec, errs *fieldErrors) *scripted {
	switch s.Type {
	case TypeScripted, TypeHTTP, TypeBedrock:
		s.absentOthers(path, errs)
	}
	switch s.Type {
	case TypeScripted:
		if s.Scripted == nil {
			errs.add(key(path, "scripted"), `is required when "type" is "scripted"`)
			return nil
		}
		return compileScripted(s.Scripted, key(path, "scripted"), errs)
	case TypeHTTP:
		if s.HTTP == nil {
			errs.add(key(path, "http"), `is required when "type" is "http"`)
			return nil
		}
		s.HTTP.check(key(path, "http"), policy, errs)
	case TypeBedrock:
		if s.Bedrock == nil {
			errs.add(key(path, "bedrock"), `is required when "type" is "bedrock"`)
			return nil
		}
		s.Bedrock.check(key(path, "bedrock"), tools, errs)
	case "":
		errs.add(key(path, "type"), "is required; %s", voiceops.OneOf(AgentTypes))
	default:
		errs.add(key(path, "type"), "%s", voiceops.OneOf(AgentTypes))
	}
	return nil
}

func (s HTTPSpec) check(path string, policy urlCheck, errs *fieldErrors) {
	checkURL(s.URL, key(path, "url"), policy, errs)
	checkSecret(s.SigningSecret, key(path, "signing_secret"), errs)
	checkTimeoutUpTo(s.TimeoutMS, MaxAgentTimeoutMS, key(path, "timeout_ms"), errs)
	for _, fe := range voiceops.CheckHeaders(s.Headers) {
		errs.add(key(path, fe.Field), "%s", fe.Message)
	}
}

// lambdaARNPattern matches the ARN of a Lambda function, with an optional
// version or alias. It is compiled on first use: only configuration checks
// need it, and its counted repetitions make it costly to compile.
var lambdaARNPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^arn:aws(-[a-z]+)*:lambda:[a-z]{2}(-[a-z]+)+-\d:\d{12}:function:[A-Za-z0-9_-]{1,64}(:(\$LATEST|[A-Za-z0-9_-]{1,128}))?$`)
})

func (s FunctionSpec) check(path string, policy urlCheck, errs *fieldErrors) {
	switch {
	case s.URL == "" && s.LambdaARN == "":
		errs.add(path, `needs exactly one of "url" and "lambda_arn"; it has neither`)
	case s.URL != "" && s.LambdaARN != "":
		errs.add(path, `needs exactly one of "url" and "lambda_arn"; it has both`)
	case s.URL != "":
		checkURL(s.URL, key(path, "url"), policy, errs)
		checkSecret(s.SigningSecret, key(path, "signing_secret"), errs)
	default:
		if !lambdaARNPattern().MatchString(s.LambdaARN) {
			errs.add(key(path, "lambda_arn"), "must be a Lambda function ARN: arn:aws:lambda:REGION:ACCOUNT:function:NAME[:ALIAS]")
		}
		if s.SigningSecret != "" {
			errs.add(key(path, "signing_secret"), `must be absent with "lambda_arn" (only HTTPS calls are signed)`)
		}
	}
	checkTimeout(s.TimeoutMS, key(path, "timeout_ms"), errs)
}

func checkURL(raw, path string, policy urlCheck, errs *fieldErrors) {
	if raw == "" {
		errs.add(path, "is required")
		return
	}
	if msg := policy(raw); msg != "" {
		errs.add(path, "%s", msg)
	}
}

func checkTimeout(ms int, path string, errs *fieldErrors) {
	checkTimeoutUpTo(ms, MaxTimeoutMS, path, errs)
}

func checkTimeoutUpTo(ms, maxMS int, path string, errs *fieldErrors) {
	if ms != 0 && (ms < MinTimeoutMS || ms > maxMS) {
		errs.add(path, "must be an integer between %d and %d (default %d)", MinTimeoutMS, maxMS, DefaultTimeoutMS)
	}
}

// checkSecret accepts "whsec_" followed by the standard base64 of 24 to 64
// bytes. Messages never quote the secret.
func checkSecret(s, path string, errs *fieldErrors) {
	const prefix = "whsec_"
	if s == "" {
		errs.add(path, `is required: "whsec_" followed by the base64 of 32 random bytes`)
		return
	}
	raw, ok := strings.CutPrefix(s, prefix)
	b, err := base64.StdEncoding.DecodeString(raw)
	if !ok || err != nil || len(b) < 24 || len(b) > 64 {
		errs.add(path, `must be "whsec_" followed by the standard base64 of 24 to 64 random bytes (32 recommended)`)
	}
}

// checkText checks a piece of text: at most max characters, no control
// characters (but newlines and tabs when multiline), and not blank when
// required.
func checkText(s, path string, max int, required, multiline bool, errs *fieldErrors) bool {
	switch {
	case required && strings.TrimSpace(s) == "":
		errs.add(path, "must not be empty")
		return false
	case !utf8.ValidString(s):
		errs.add(path, "must be valid UTF-8")
		return false
	case utf8.RuneCountInString(s) > max:
		errs.add(path, "must be at most %d characters", max)
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\r' || r == '\t')) {
			errs.add(path, "must not contain control characters")
			return false
		}
	}
	return true
}

// checkHandoff checks a handoff of a rule or of an HTTP agent's answer.
func checkHandoff(h *Handoff, path string, errs *fieldErrors) {
	if h.SIP == nil || h.Destination != "" {
		checkText(h.Destination, key(path, "destination"), MaxShortText, true, false, errs)
	}
	checkText(h.Reason, key(path, "reason"), MaxReasonLength, false, false, errs)
	if h.SIP != nil {
		checkText(h.SIP.OutboundEndpoint, key(path, "sip.outbound_endpoint"), MaxShortText, true, false, errs)
		checkText(h.SIP.OutboundCallerID, key(path, "sip.outbound_caller_id"), 64, false, false, errs)
	}
}

// resolved returns a copy of h with the destination filled in from the SIP
// endpoint when it is empty.
func (h *Handoff) resolved() *Handoff {
	if h == nil {
		return nil
	}
	out := h.clone()
	if out.SIP != nil && out.Destination == "" {
		out.Destination = out.SIP.OutboundEndpoint
	}
	return out
}

// checkStateKeys checks the keys of a state object.
func checkStateKeys(m map[string]any, path string, errs *fieldErrors) {
	if len(m) > MaxListItems {
		errs.add(path, "must have at most %d keys", MaxListItems)
		return
	}
	for _, k := range sortedKeys(m) {
		if k == "" || utf8.RuneCountInString(k) > MaxShortText {
			errs.add(key(path, k), "state keys must be 1 to %d characters", MaxShortText)
		}
	}
}

// checkLabels checks intents: at most MaxListItems non-empty short strings.
func checkLabels(ls []string, path string, errs *fieldErrors) {
	if len(ls) > MaxListItems {
		errs.add(path, "must have at most %d items", MaxListItems)
		return
	}
	for i, l := range ls {
		checkText(l, index(path, i), MaxShortText, true, false, errs)
	}
}

func checkEntities(es []map[string]any, path string, errs *fieldErrors) {
	if len(es) > MaxListItems {
		errs.add(path, "must have at most %d items", MaxListItems)
		return
	}
	for i, e := range es {
		if e == nil {
			errs.add(index(path, i), "must be an object")
		}
	}
}

func sortedHooks(m map[Hook]FunctionSpec) []Hook {
	hs := make([]Hook, 0, len(m))
	for h := range m {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	return hs
}

// Clone returns a deep copy of c: nothing of it is shared with c.
func (c Config) Clone() Config {
	out := c
	out.Variants = slices.Clone(c.Variants)
	for i := range out.Variants {
		a := &out.Variants[i].Agent
		if a.Scripted != nil {
			a.Scripted = a.Scripted.clone()
		}
		if a.HTTP != nil {
			h := *a.HTTP
			h.Headers = maps.Clone(h.Headers)
			a.HTTP = &h
		}
		if a.Bedrock != nil {
			a.Bedrock = a.Bedrock.clone()
		}
	}
	out.Functions = maps.Clone(c.Functions)
	if c.Tools != nil {
		out.Tools = make(map[string]ToolSpec, len(c.Tools))
		for name, t := range c.Tools {
			t.InputSchema = cloneObject(t.InputSchema)
			out.Tools[name] = t
		}
	}
	return out
}

// cloneValue deep-copies a JSON value (maps and slices; the rest are
// immutable).
func cloneValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return cloneObject(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = cloneValue(e)
		}
		return out
	case []map[string]any:
		return cloneObjects(t)
	}
	return v
}

func cloneObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneObjects(es []map[string]any) []map[string]any {
	if es == nil {
		return nil
	}
	out := make([]map[string]any, len(es))
	for i, e := range es {
		out[i] = cloneObject(e)
	}
	return out
}
