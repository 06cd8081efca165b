// Package conversation runs conversations: it starts them, answers each turn
// with the project's agent and functions, ends them, stores every turn, and
// records the metrics that alert rules watch. The chat API and the voice
// intake both drive conversations through an Engine.
package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"log/slog"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/hooks"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// FunctionRunner runs one project function (hooks.Runner).
type FunctionRunner interface {
	Run(ctx context.Context, t hooks.Target, c hooks.Call) (hooks.Result, error)
}

// Recorder records metric events (shared/metrics/buckets.Recorder): an interface,
// so the engine links no sketch library.
type Recorder interface {
	Record(ctx context.Context, events ...metrics.Event) error
}

// Engine runs the conversations of every project of a region.
type Engine struct {
	Store     voiceops.ConversationStore
	Configs   voiceops.AgentConfigStore
	Functions FunctionRunner
	Metrics   Recorder // nil: record nothing
	// Telemetry receives the service's own metrics (IdleEnds); none when nil.
	Telemetry telemetry.Recorder
	AgentDeps agent.Deps
	Now       func() time.Time
	Log       *slog.Logger
	// DNI holds the projects' DNI pools: a voice call to a reserved number
	// consumes the reservation (nil: no DNI).
	DNI voiceops.DNIStore
	// ChatIdleTimeout is the idle timeout of the chats of projects that
	// configure none (0: voiceops.DefaultChatIdleTimeout).
	ChatIdleTimeout time.Duration

	mu    sync.Mutex
	cache map[[2]string]cachedProject
}

// configTTL is how long a project's configuration (and the agents built
// from it) is used before it is read again: a loaded configuration takes
// effect within that time, and a warm function reads it once per TTL.
const configTTL = 30 * time.Second

type cachedProject struct {
	cfg     agent.Config
	agents  map[string]agent.Agent // by variant ID
	expires time.Time
}

// Errors of the engine, in the domain's kinds.
var (
	ErrEnded      = &voiceops.Error{Kind: voiceops.KindGone, Message: "the conversation has ended"}
	ErrNoAgent    = &voiceops.Error{Kind: voiceops.KindNotFound, Message: "the project has no agent configured"}
	ErrNoVariant  = &voiceops.Error{Kind: voiceops.KindInvalid, Message: "validation failed", Fields: []voiceops.FieldError{{Field: "variant_id", Message: "no such variant in this project"}}}
	ErrNoSuchConv = &voiceops.Error{Kind: voiceops.KindNotFound, Message: "conversation not found"}
)

// fallbackResponse is said when the agent could not answer at all.
const fallbackResponse = "Sorry, something went wrong on our side. Could you say that again?"

// StartInput starts a conversation.
type StartInput struct {
	AccountID, ProjectID  string
	Environment           voiceops.Environment
	Channel               voiceops.Channel
	VariantID             string // empty: the project's default variant
	FromNumber, ToNumber  string
	ASRLang, TTSLang      string
	IntegrationAttributes map[string]any
}

// TurnInput is one user turn: a message (or transcript), DTMF digits, or
// silence.
type TurnInput struct {
	Message               string
	DTMF                  string
	Silence               bool
	Metadata              map[string]any
	IntegrationAttributes map[string]any // merged into the conversation's
	ASRLang, TTSLang      string         // change the languages from this turn on
}

// Answer is what the agent said and what became of the conversation.
type Answer struct {
	Conversation voiceops.Conversation
	Turn         voiceops.Turn
	Response     string
	End          bool
	Handoff      *agent.Handoff
	// apiErrors counts the turn's failed model calls.
	apiErrors int
}

func (e *Engine) now() time.Time { return e.Now().UTC().Truncate(time.Millisecond) }

// project returns a project's configuration and the agent of a variant.
func (e *Engine) project(ctx context.Context, accountID, projectID, variantID string) (agent.Config, agent.Variant, agent.Agent, error) {
	k := [2]string{accountID, projectID}
	now := e.Now()
	e.mu.Lock()
	c, ok := e.cache[k]
	e.mu.Unlock()
	if !ok || !now.Before(c.expires) {
		cfg, err := agent.GetConfig(ctx, e.Configs, accountID, projectID)
		if errors.Is(err, voiceops.ErrNotFound) {
			return agent.Config{}, agent.Variant{}, nil, ErrNoAgent
		}
		if err != nil {
			return agent.Config{}, agent.Variant{}, nil, err
		}
		c = cachedProject{cfg: cfg, agents: map[string]agent.Agent{}, expires: now.Add(configTTL)}
		deps := e.AgentDeps
		deps.ToolSpecs = cfg.Tools
		if e.Functions != nil {
			deps.Tools = toolRunner{e.Functions}
		}
		for _, v := range cfg.Variants {
			a, err := agent.New(v.Agent, deps)
			if err != nil {
				return agent.Config{}, agent.Variant{}, nil, fmt.Errorf("building the agent of variant %s: %w", v.ID, err)
			}
			c.agents[v.ID] = a
		}
		e.mu.Lock()
		if e.cache == nil {
			e.cache = map[[2]string]cachedProject{}
		}
		e.cache[k] = c
		e.mu.Unlock()
	}
	v, ok := c.cfg.Variant(variantID)
	if !ok {
		return agent.Config{}, agent.Variant{}, nil, ErrNoVariant
	}
	return c.cfg, v, c.agents[v.ID], nil
}

// Start begins a conversation: the agent's greeting is its first turn.
func (e *Engine) Start(ctx context.Context, in StartInput) (Answer, error) {
	cfg, v, ag, err := e.project(ctx, in.AccountID, in.ProjectID, in.VariantID)
	if err != nil {
		return Answer{}, err
	}
	now := e.now()
	if err := e.consumeDNI(ctx, &in, now); err != nil {
		return Answer{}, err
	}
	env := in.Environment
	if env == "" {
		env = voiceops.EnvLive
	}
	c := voiceops.Conversation{
		ID: voiceops.NewProjectConversationID(in.AccountID, in.ProjectID, now), AccountID: in.AccountID, ProjectID: in.ProjectID,
		Environment: env, Channel: in.Channel, VariantID: v.ID, VariantName: v.Name,
		FromNumber: in.FromNumber, ToNumber: in.ToNumber, ASRLang: in.ASRLang, TTSLang: in.TTSLang,
		IntegrationAttributes: in.IntegrationAttributes, State: map[string]any{},
		StartedAt: now, InProgress: true, ExpiresAt: now.Add(cfg.Retention()), Version: 1,
	}
	turn := voiceops.Turn{Index: 0, UserInputAt: now}
	ans, ferrs := e.answer(ctx, cfg, ag, &c, &turn, agent.Request{Conversation: c, Turn: turn, Start: true}, agent.HookOnStart)
	apiErrs := ans.apiErrors
	c.NumTurns = 1
	c.IdleDue = e.idleDue(cfg, c, now)
	if err := e.Store.CreateConversation(ctx, c, &turn); err != nil {
		return Answer{}, err
	}
	e.record(ctx, c, turn, ferrs, append(apiErrors(c, apiErrs, now), metrics.Count(metrics.CallVolume, c.AccountID, c.ProjectID, now))...)
	ans.Conversation = c
	return ans, nil
}

// Respond answers one user turn of a conversation in progress.
func (e *Engine) Respond(ctx context.Context, accountID, projectID, conversationID string, in TurnInput) (Answer, error) {
	c, err := e.Store.GetConversation(ctx, accountID, projectID, conversationID)
	if errors.Is(err, voiceops.ErrNotFound) {
		return Answer{}, ErrNoSuchConv
	}
	if err != nil {
		return Answer{}, err
	}
	if !c.InProgress {
		return Answer{}, ErrEnded
	}
	if e.idlePast(c) {
		if _, err := e.endIdle(ctx, c); err != nil {
			return Answer{}, err
		}
		return Answer{}, ErrEnded
	}
	cfg, _, ag, err := e.project(ctx, accountID, projectID, c.VariantID)
	if err != nil {
		return Answer{}, err
	}
	prev := c.Version
	now := e.now()
	if in.IntegrationAttributes != nil {
		attrs := maps.Clone(c.IntegrationAttributes)
		if attrs == nil {
			attrs = map[string]any{}
		}
		maps.Copy(attrs, in.IntegrationAttributes)
		// Each turn's attributes are within the limit; their merge must be
		// too, or the record would grow past what DynamoDB holds.
		if n := jsonSize(attrs); n > voiceops.MaxAttributesBytes {
			return Answer{}, voiceops.TooLargeField("integration_attributes", n, voiceops.MaxAttributesBytes)
		}
		c.IntegrationAttributes = attrs
	}
	if in.ASRLang != "" {
		c.ASRLang = in.ASRLang
	}
	if in.TTSLang != "" {
		c.TTSLang = in.TTSLang
	}
	silence := in.Silence || (in.Message == "" && in.DTMF == "")
	turn := voiceops.Turn{
		Index: c.NumTurns, UserInput: in.Message, UserInputDTMF: in.DTMF, UserInputAt: now,
		IsSilence: silence, Metadata: in.Metadata,
	}
	req := agent.Request{Conversation: c, Turn: turn}
	if n := agent.HistoryTurns(ag); n > 0 {
		hist, err := e.Store.Turns(ctx, accountID, projectID, conversationID)
		if err != nil {
			return Answer{}, err
		}
		req.History = hist[max(len(hist)-n, 0):]
	}
	ans, ferrs := e.answer(ctx, cfg, ag, &c, &turn, req, agent.HookOnTurn)
	c.NumTurns++
	if silence {
		c.NumSilences++
	}
	if turn.IsOOD {
		c.NumOOD++
	}
	c.Version = prev + 1
	c.IdleDue = e.idleDue(cfg, c, now)
	if err := e.Store.AddTurn(ctx, c, turn, prev); err != nil {
		if errors.Is(err, voiceops.ErrNotFound) {
			return Answer{}, ErrNoSuchConv
		}
		return Answer{}, err
	}
	e.record(ctx, c, turn, ferrs, apiErrors(c, ans.apiErrors, now)...)
	ans.Conversation = c
	return ans, nil
}

// answer asks the agent, then the hook's function, and applies what they
// decided to the conversation and the turn. It returns the number of
// function errors (a failing agent endpoint or project function); the
// conversation goes on with what is left.
func (e *Engine) answer(ctx context.Context, cfg agent.Config, ag agent.Agent, c *voiceops.Conversation, turn *voiceops.Turn, req agent.Request, hook agent.Hook) (Answer, int) {
	start := e.Now()
	ferrs := 0
	reply, err := ag.Respond(ctx, req)
	if err != nil {
		ferrs++
		e.Log.WarnContext(ctx, "agent failed", "conversation_id", c.ID, "error", err)
		reply = agent.Reply{Response: fallbackResponse, OOD: !req.Start}
	}
	if !applyState(c, reply.State) {
		ferrs++
		e.Log.WarnContext(ctx, "agent state dropped: over the state limit", "conversation_id", c.ID, "limit", voiceops.MaxStateBytes)
	}
	turn.Intents, turn.Entities, turn.IsOOD = reply.Intents, reply.Entities, reply.OOD
	turn.Model = reply.Model
	ferrs += reply.FunctionErrors
	if reply.ModelFailed {
		// Sizes and codes only: the prompt and the reply are not logged.
		e.Log.WarnContext(ctx, "model gave no answer; the fallback was said", "conversation_id", c.ID,
			"model_id", reply.Model.ModelID, "api_errors", reply.APIErrors, "input_bytes", len(req.Turn.UserInput))
	}
	ans := Answer{Response: reply.Response, End: reply.End, Handoff: reply.Handoff, apiErrors: reply.APIErrors}

	if spec, ok := cfg.Functions[hook]; ok {
		t := *turn
		res, err := e.Functions.Run(ctx, target(cfg, spec), hooks.Call{Hook: string(hook), Conversation: *c, Turn: &t})
		if err != nil {
			ferrs++
			e.Log.WarnContext(ctx, "project function failed", "conversation_id", c.ID, "hook", hook, "error", err)
		} else {
			if !applyState(c, res.State) {
				ferrs++
				e.Log.WarnContext(ctx, "function state dropped: over the state limit", "conversation_id", c.ID, "hook", hook, "limit", voiceops.MaxStateBytes)
			}
			e.logMetrics(ctx, c, res.Metrics)
			if res.Response != nil {
				ans.Response = *res.Response
			}
			ans.End = ans.End || res.End
			if res.Handoff != nil {
				ans.Handoff = fromHook(res.Handoff)
			}
		}
	}
	now := e.now()
	turn.AgentResponse, turn.AgentResponseAt = ans.Response, now
	turn.Latency = e.Now().Sub(start)
	turn.FunctionErrors = ferrs
	c.ServiceTime += turn.Latency
	if ans.Handoff != nil {
		c.Handoff, c.HandoffDestination, c.HandoffReason = true, ans.Handoff.Destination, ans.Handoff.Reason
		if c.HandoffDestination == "" && ans.Handoff.SIP != nil {
			c.HandoffDestination = ans.Handoff.SIP.OutboundEndpoint
		}
		if c.SharedID == "" {
			c.SharedID = voiceops.NewID("shr_")
		}
		ans.End = true
	}
	if ans.End {
		reason := voiceops.EndCompleted
		if ans.Handoff != nil {
			reason = voiceops.EndHandoff
		}
		e.end(ctx, cfg, c, reason, now)
	}
	ans.Turn = *turn
	return ans, ferrs
}

// Close ends a conversation in progress (chat close, the end of a call).
// One idle past its IdleDue has ended already: it is ended now, as the
// sweep would have, and Close is ErrEnded.
func (e *Engine) Close(ctx context.Context, accountID, projectID, conversationID string, reason voiceops.EndReason) (voiceops.Conversation, error) {
	c, err := e.Store.GetConversation(ctx, accountID, projectID, conversationID)
	if errors.Is(err, voiceops.ErrNotFound) {
		return c, ErrNoSuchConv
	}
	if err != nil {
		return c, err
	}
	if !c.InProgress {
		return c, ErrEnded
	}
	if e.idlePast(c) {
		if _, err := e.endIdle(ctx, c); err != nil {
			return c, err
		}
		return c, ErrEnded
	}
	return e.closeAs(ctx, c, reason, e.now(), false)
}

// closeAs ends c (read at its current version) with reason at `at`, runs
// its on_end function, writes it and records its metrics. idle marks the
// service's own end of an idle conversation.
func (e *Engine) closeAs(ctx context.Context, c voiceops.Conversation, reason voiceops.EndReason, at time.Time, idle bool) (voiceops.Conversation, error) {
	cfg, _, _, err := e.project(ctx, c.AccountID, c.ProjectID, c.VariantID)
	// A project whose agent was removed still has its idle conversations
	// ended (without functions to run).
	if err != nil && !errors.Is(err, ErrNoVariant) && !(errors.Is(err, ErrNoAgent) && idle) {
		return c, err
	}
	prev := c.Version
	ferrs := e.end(ctx, cfg, &c, reason, at)
	c.Version = prev + 1
	if err := e.Store.UpdateConversation(ctx, c, prev); err != nil {
		return c, err
	}
	now := e.now()
	var extra []metrics.Event
	if reason == voiceops.EndCrashed {
		extra = append(extra, metrics.Count(metrics.CallCrashes, c.AccountID, c.ProjectID, now))
	}
	e.recordEvents(ctx, c, ferrs, nil, extra...)
	return c, nil
}

// end marks the conversation ended and runs its on_end function.
func (e *Engine) end(ctx context.Context, cfg agent.Config, c *voiceops.Conversation, reason voiceops.EndReason, now time.Time) int {
	c.InProgress, c.EndReason = false, reason
	ended := now
	c.EndedAt = &ended
	spec, ok := cfg.Functions[agent.HookOnEnd]
	if !ok {
		return 0
	}
	res, err := e.Functions.Run(ctx, target(cfg, spec), hooks.Call{Hook: string(agent.HookOnEnd), Conversation: *c,
		Extra: map[string]any{"reason": string(reason)}})
	if err != nil {
		e.Log.WarnContext(ctx, "project function failed", "conversation_id", c.ID, "hook", agent.HookOnEnd, "error", err)
		return 1
	}
	if !applyState(c, res.State) {
		e.Log.WarnContext(ctx, "function state dropped: over the state limit", "conversation_id", c.ID, "hook", agent.HookOnEnd, "limit", voiceops.MaxStateBytes)
		return 1
	}
	e.logMetrics(ctx, c, res.Metrics)
	return 0
}

// logMetrics appends the metrics a function logged to the conversation's,
// up to voiceops.MaxCustomMetrics values (the record's size is bounded);
// the values past it are dropped, with a warning.
func (e *Engine) logMetrics(ctx context.Context, c *voiceops.Conversation, ms []voiceops.CustomMetric) {
	if len(ms) == 0 {
		return
	}
	room := max(voiceops.MaxCustomMetrics-len(c.Metrics), 0)
	if len(ms) > room {
		e.Log.WarnContext(ctx, "custom metrics dropped: the conversation holds the most it can", "conversation_id", c.ID, "dropped", len(ms)-room)
		ms = ms[:room]
	}
	c.Metrics = append(slices.Clone(c.Metrics), ms...)
}

// applyState merges set into the conversation's state, unless the merge
// would pass voiceops.MaxStateBytes: then the state stays as it was and
// it reports false (the caller counts a function error; the conversation
// goes on, and its record stays under DynamoDB's item limit).
func applyState(c *voiceops.Conversation, set map[string]any) bool {
	if len(set) == 0 {
		return true
	}
	st := maps.Clone(c.State)
	if st == nil {
		st = map[string]any{}
	}
	maps.Copy(st, set)
	if jsonSize(st) > voiceops.MaxStateBytes {
		return false
	}
	c.State = st
	return true
}

// jsonSize is the size of v as JSON; a value that cannot be encoded counts
// as over every limit.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return math.MaxInt
	}
	return len(b)
}

func fromHook(h *hooks.Handoff) *agent.Handoff {
	out := &agent.Handoff{Destination: h.Destination, Reason: h.Reason}
	if h.SIP != nil {
		out.SIP = &agent.SIPHandoff{OutboundCallerID: h.SIP.OutboundCallerID, OutboundEndpoint: h.SIP.OutboundEndpoint}
	}
	return out
}

// record writes a turn's metrics: its latency, activity, function errors,
// and any extra events (call volume at the start). A failure is logged: the
// turn is stored, and metrics are best effort for the conversation.
func (e *Engine) record(ctx context.Context, c voiceops.Conversation, t voiceops.Turn, ferrs int, extra ...metrics.Event) {
	e.recordEvents(ctx, c, ferrs, &t, extra...)
}

func (e *Engine) recordEvents(ctx context.Context, c voiceops.Conversation, ferrs int, t *voiceops.Turn, extra ...metrics.Event) {
	if e.Metrics == nil {
		return
	}
	now := e.Now()
	evs := append([]metrics.Event{}, extra...)
	evs = append(evs, metrics.Event{AccountID: c.AccountID, ProjectID: c.ProjectID, Kind: metrics.Activity, At: now})
	if t != nil {
		evs = append(evs, metrics.Event{AccountID: c.AccountID, ProjectID: c.ProjectID, Kind: metrics.TurnLatency,
			Value: float64(t.Latency) / float64(time.Millisecond), At: now})
	}
	if ferrs > 0 {
		evs = append(evs, metrics.Event{AccountID: c.AccountID, ProjectID: c.ProjectID, Kind: metrics.FunctionErrors, Value: float64(ferrs), At: now})
	}
	if err := e.Metrics.Record(ctx, evs...); err != nil {
		e.Log.ErrorContext(ctx, "recording conversation metrics", "conversation_id", c.ID, "error", err)
	}
}

// target is where a hook's function lives.
func target(_ agent.Config, spec agent.FunctionSpec) hooks.Target {
	return hooks.Target{URL: spec.URL, LambdaARN: spec.LambdaARN, Timeout: spec.Timeout(), Secret: spec.SigningSecret}
}

// apiErrors are the api_errors events of a turn's failed model calls.
func apiErrors(c voiceops.Conversation, n int, at time.Time) []metrics.Event {
	if n == 0 {
		return nil
	}
	return []metrics.Event{{AccountID: c.AccountID, ProjectID: c.ProjectID, Kind: metrics.APIErrors, Value: float64(n), At: at}}
}

// toolRunner runs a Bedrock agent's tool calls as project functions: the
// hook "tool", the call's name and arguments in "extra".
type toolRunner struct{ fn FunctionRunner }

func (r toolRunner) RunTool(ctx context.Context, name string, spec agent.FunctionSpec, conv voiceops.Conversation, turn voiceops.Turn, args map[string]any) (agent.ToolResult, error) {
	res, err := r.fn.Run(ctx, target(agent.Config{}, spec), hooks.Call{Hook: "tool", Conversation: conv, Turn: &turn,
		Extra: map[string]any{"tool": name, "arguments": args}})
	if err != nil {
		return agent.ToolResult{}, err
	}
	return agent.ToolResult{Response: res.Response, State: res.State}, nil
}
