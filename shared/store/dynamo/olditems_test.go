package dynamo_test

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Items written by older code lack the attributes added since: DynamoDB
// has no schema to migrate, so every read must decode them. These tests
// write each kind of record through the store with every field set, then
// put its items back raw without each attribute in turn (and without all
// of them at once: the oldest shape), and read them through the store.
//
// Each kind lists the attributes of its first shape, which every item of
// it has carried since the kind was introduced (its identity and core
// fields: an item lacking one was never written by any version of the
// store, and reading it is an error), and the documented default of every
// other attribute: the field's value when the attribute is absent. An
// attribute named like a field of the record (project_id: ProjectID)
// defaults to that field's zero value unless the kind says otherwise, so
// a new optional field needs no line here. Any other attribute in neither
// list fails the test: it must be decoded from items that lack it, and
// the kind must say to what.

// oldShape describes a kind of record for the test.
type oldShape[T any] struct {
	table string
	// match picks the record's items among the table's.
	match func(it map[string]types.AttributeValue) bool
	// read reads the record back through the store.
	read func(ctx context.Context) (T, error)
	// want is the record as written, with every field set.
	want T
	// first lists the attributes of the kind's first shape.
	first []string
	// defaults sets, for every other attribute, the record's field to its
	// value when the attribute is absent (store-internal attributes set
	// no field).
	defaults map[string]func(*T)
	// together lists attributes always written together (one field's
	// parts): older items lack all of them or none.
	together [][]string
}

// internal is what a record's attributes are never stripped of: the
// table's keys, its indexes' keys and the TTL (they place the item; the
// test is of the decoding).
func internal(tb tables.Table) []string {
	out := []string{tb.PartitionKey, tb.SortKey, tb.TTLAttribute}
	for _, g := range tb.GSIs {
		out = append(out, g.PartitionKey, g.SortKey)
	}
	return out
}

func (sh oldShape[T]) run(t *testing.T, c *dynamodb.Client, tb tables.Table) {
	t.Helper()
	ctx := t.Context()
	var items []map[string]types.AttributeValue
	out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: &sh.table, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	for _, it := range out.Items {
		if sh.match(it) {
			items = append(items, it)
		}
	}
	if len(items) == 0 {
		t.Fatalf("no item of the record in %s", sh.table)
	}
	put := func(t *testing.T, strip func(string) bool) {
		t.Helper()
		for _, it := range items {
			raw := maps.Clone(it)
			maps.DeleteFunc(raw, func(name string, _ types.AttributeValue) bool { return strip(name) })
			if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &sh.table, Item: raw}); err != nil {
				t.Fatalf("PutItem: %v", err)
			}
		}
	}
	defer put(t, func(string) bool { return false })

	var optional []string
	for _, it := range items {
		for name := range it {
			if !slices.Contains(internal(tb), name) && !slices.Contains(sh.first, name) && !slices.Contains(optional, name) {
				optional = append(optional, name)
			}
		}
	}
	slices.Sort(optional)
	// The units stripped one at a time: an attribute, or a group written together.
	var units [][]string
	for _, name := range optional {
		i := slices.IndexFunc(sh.together, func(g []string) bool { return slices.Contains(g, name) })
		switch {
		case i < 0:
			units = append(units, []string{name})
		case sh.together[i][0] == name:
			units = append(units, sh.together[i])
		}
	}
	check := func(what string, absent []string) {
		t.Run(what, func(t *testing.T) {
			want := sh.want
			for _, name := range absent {
				def, ok := sh.defaults[name]
				if !ok {
					def, ok = zeroOfField[T](name)
				}
				if !ok {
					t.Fatalf("attribute %q is neither of the first shape nor given a default: older items lack it; "+
						"decode its absence as the field's documented default, and declare that default here", name)
				}
				def(&want)
			}
			put(t, func(name string) bool { return slices.Contains(absent, name) })
			got, err := sh.read(ctx)
			if err != nil {
				t.Fatalf("reading an item without %v: %v", absent, err)
			}
			storetest.CheckWhole(t, what, want, got)
		})
	}
	check("the item as written", nil)
	for _, unit := range units {
		check("the item without "+join(unit), unit)
	}
	check("the item of the first shape, without "+join(optional), optional)
}

// zeroOfField returns the default that zeroes the field of T named like
// the attribute (its name without underscores, case aside), if T has one.
func zeroOfField[T any](attr string) (func(*T), bool) {
	want := strings.ReplaceAll(attr, "_", "")
	rt := reflect.TypeFor[T]()
	for i := range rt.NumField() {
		if strings.EqualFold(rt.Field(i).Name, want) {
			return func(v *T) {
				f := reflect.ValueOf(v).Elem().Field(i)
				f.Set(reflect.Zero(f.Type()))
			}, true
		}
	}
	return nil, false
}

func join(names []string) string {
	if len(names) == 0 {
		return "(nothing)"
	}
	s := names[0]
	for _, n := range names[1:] {
		s += ", " + n
	}
	return s
}

func attrIs(it map[string]types.AttributeValue, name, value string) bool {
	s, ok := it[name].(*types.AttributeValueMemberS)
	return ok && s.Value == value
}

func none[T any](*T) {}

// old is a time with milliseconds in a zone other than UTC.
var old = time.Date(2026, 11, 20, 8, 30, 15, 123_000_000, time.FixedZone("UTC+1", 3600))

func TestOldItems(t *testing.T) {
	c := client(t)
	newStores := func(t *testing.T) (voiceops.Stores, dynamo.TableNames) {
		names := newTables(t, c)
		return dynamo.NewStores(c, names), names
	}

	t.Run("Account", func(t *testing.T) {
		s, names := newStores(t)
		a := voiceops.Account{ID: voiceops.NewID(voiceops.PrefixAccount), Name: "Old Co", CreatedAt: old}
		mustDo(t, s.Accounts.CreateAccount(t.Context(), a))
		oldShape[voiceops.Account]{
			table: names.Config, want: a,
			match: func(it map[string]types.AttributeValue) bool { return attrIs(it, "id", a.ID) },
			read:  func(ctx context.Context) (voiceops.Account, error) { return s.Accounts.GetAccount(ctx, a.ID) },
			first: []string{"id", "name", "created_at"},
		}.run(t, c, tables.Config)
	})

	t.Run("Project", func(t *testing.T) {
		s, names := newStores(t)
		a := voiceops.Account{ID: voiceops.NewID(voiceops.PrefixAccount), Name: "Old Co", CreatedAt: old}
		mustDo(t, s.Accounts.CreateAccount(t.Context(), a))
		p := voiceops.Project{ID: voiceops.NewID(voiceops.PrefixProject), AccountID: a.ID, Name: "Line", CreatedAt: old}
		mustDo(t, s.Accounts.CreateProject(t.Context(), p))
		oldShape[voiceops.Project]{
			table: names.Config, want: p,
			match: func(it map[string]types.AttributeValue) bool { return attrIs(it, "id", p.ID) },
			read:  func(ctx context.Context) (voiceops.Project, error) { return s.Accounts.GetProject(ctx, a.ID, p.ID) },
			first: []string{"id", "account_id", "name", "created_at"},
		}.run(t, c, tables.Config)
	})

	t.Run("Key", func(t *testing.T) {
		s, names := newStores(t)
		a := voiceops.Account{ID: voiceops.NewID(voiceops.PrefixAccount), Name: "Old Co", CreatedAt: old}
		mustDo(t, s.Accounts.CreateAccount(t.Context(), a))
		p := voiceops.Project{ID: voiceops.NewID(voiceops.PrefixProject), AccountID: a.ID, Name: "Line", CreatedAt: old}
		mustDo(t, s.Accounts.CreateProject(t.Context(), p))
		k := voiceops.Key{ID: voiceops.NewID(voiceops.PrefixKey), Digest: voiceops.RandomBase62(64), Prefix: "vo_agent_us_abc",
			Kind: voiceops.KeyAgent, Region: voiceops.RegionUS, AccountID: a.ID, ProjectID: p.ID, Environment: "sandbox", CreatedAt: old}
		mustDo(t, s.Accounts.CreateKey(t.Context(), k))
		_, err := s.Accounts.RevokeKey(t.Context(), a.ID, k.ID, old.Add(time.Hour))
		mustDo(t, err)
		k.RevokedAt = aws.Time(old.Add(time.Hour))
		shape := oldShape[voiceops.Key]{
			table: names.Config, want: k,
			match: func(it map[string]types.AttributeValue) bool { return attrIs(it, "id", k.ID) },
			read:  func(ctx context.Context) (voiceops.Key, error) { return s.Accounts.KeyByDigest(ctx, k.Digest) },
			first: []string{"id", "digest", "prefix", "kind", "region", "account_id", "created_at"},
			defaults: map[string]func(*voiceops.Key){
				"project_id": func(k *voiceops.Key) { k.ProjectID = "" },
				// Keys from before agent tokens had no environment (cf5bd53).
				"environment": func(k *voiceops.Key) { k.Environment = "" },
				"revoked_at":  func(k *voiceops.Key) { k.RevokedAt = nil },
			},
		}
		t.Run("KeyByDigest", func(t *testing.T) { shape.run(t, c, tables.Config) })
		shape.read = func(ctx context.Context) (voiceops.Key, error) {
			ks, err := s.Accounts.ListKeys(ctx, a.ID)
			if err != nil || len(ks) != 1 {
				t.Fatalf("ListKeys: %v %v", ks, err)
			}
			return ks[0], nil
		}
		t.Run("ListKeys", func(t *testing.T) { shape.run(t, c, tables.Config) })
	})

	t.Run("Rule", func(t *testing.T) {
		s, names := newStores(t)
		a := voiceops.Account{ID: voiceops.NewID(voiceops.PrefixAccount), Name: "Old Co", CreatedAt: old}
		mustDo(t, s.Accounts.CreateAccount(t.Context(), a))
		p := voiceops.Project{ID: voiceops.NewID(voiceops.PrefixProject), AccountID: a.ID, Name: "Line", CreatedAt: old}
		mustDo(t, s.Accounts.CreateProject(t.Context(), p))
		r := voiceops.AlertRule{ID: voiceops.NewID(voiceops.PrefixRule), AccountID: a.ID, Name: "errors", ProjectID: &p.ID,
			Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 5, Window: voiceops.Window5m, Enabled: true,
			State: voiceops.StateAlert, CreatedAt: old, UpdatedAt: old.Add(time.Minute), Since: aws.Time(old.Add(2 * time.Minute)),
			LastEvaluatedAt: aws.Time(old.Add(3 * time.Minute)), CurrentValue: aws.Int64(9), Version: 4}
		mustDo(t, s.Rules.CreateRule(t.Context(), r))
		oldShape[voiceops.AlertRule]{
			table: names.Config, want: r,
			match: func(it map[string]types.AttributeValue) bool { return attrIs(it, "id", r.ID) },
			read:  func(ctx context.Context) (voiceops.AlertRule, error) { return s.Rules.GetRule(ctx, a.ID, r.ID) },
			first: []string{"id", "account_id", "name", "metric", "operator", "threshold", "window", "enabled", "state",
				"created_at", "updated_at", "version"},
			// project_id, since, last_evaluated_at, current_value (and any
			// optional field added since): the field's zero value.
		}.run(t, c, tables.Config)
	})

	t.Run("Endpoint", func(t *testing.T) {
		s, names := newStores(t)
		a := voiceops.Account{ID: voiceops.NewID(voiceops.PrefixAccount), Name: "Old Co", CreatedAt: old}
		mustDo(t, s.Accounts.CreateAccount(t.Context(), a))
		e := voiceops.WebhookEndpoint{ID: voiceops.NewID(voiceops.PrefixEndpoint), AccountID: a.ID, Name: "ops",
			Kind: voiceops.EndpointPagerDuty, URL: "https://hooks.example.com/x", RoutingKey: voiceops.RandomBase62(32),
			EventTypes: []voiceops.EventType{voiceops.EventTriggered, voiceops.EventResolved}, Headers: map[string]string{"X-A": "1"},
			TimeoutMS: 2500, Enabled: true, CreatedAt: old, UpdatedAt: old.Add(time.Minute), Secret: "whsec_new",
			PreviousSecret: "whsec_old", PreviousExpiresAt: aws.Time(old.Add(time.Hour)), Version: 3}
		mustDo(t, s.Endpoints.CreateEndpoint(t.Context(), e))
		oldShape[voiceops.WebhookEndpoint]{
			table: names.Config, want: e,
			match: func(it map[string]types.AttributeValue) bool { return attrIs(it, "id", e.ID) },
			read: func(ctx context.Context) (voiceops.WebhookEndpoint, error) {
				return s.Endpoints.GetEndpoint(ctx, a.ID, e.ID)
			},
			first: []string{"id", "account_id", "name", "url", "event_types", "timeout_ms", "enabled", "created_at", "updated_at",
				"secret", "version"},
			defaults: map[string]func(*voiceops.WebhookEndpoint){
				// No headers: an empty map, as the API shows it.
				"headers":             func(e *voiceops.WebhookEndpoint) { e.Headers = map[string]string{} },
				"previous_secret":     func(e *voiceops.WebhookEndpoint) { e.PreviousSecret = "" },
				"previous_expires_at": func(e *voiceops.WebhookEndpoint) { e.PreviousExpiresAt = nil },
				// Written before kinds: a webhook endpoint.
				"kind": func(e *voiceops.WebhookEndpoint) { e.Kind = voiceops.EndpointWebhook },
			},
		}.run(t, c, tables.Config)
	})

	t.Run("Event", func(t *testing.T) {
		s, names := newStores(t)
		e := voiceops.AlertEvent{ID: voiceops.NewID(voiceops.PrefixEvent), AccountID: "acct_a", RuleID: "ar_1", Type: voiceops.EventTriggered,
			CreatedAt: time.Now().Add(-time.Minute).Truncate(time.Millisecond), Body: []byte(`{"x":1}`), EndpointID: "whe_1", FannedOut: true}
		mustDo(t, s.Events.PutEvent(t.Context(), e))
		oldShape[voiceops.AlertEvent]{
			table: names.Deliveries, want: e,
			match: func(it map[string]types.AttributeValue) bool { return attrIs(it, "id", e.ID) },
			read: func(ctx context.Context) (voiceops.AlertEvent, error) {
				return s.Events.GetEvent(ctx, e.AccountID, e.ID)
			},
			first: []string{"id", "account_id", "rule_id", "type", "created_at", "body"},
			defaults: map[string]func(*voiceops.AlertEvent){
				"endpoint_id": func(e *voiceops.AlertEvent) { e.EndpointID = "" },
				"fanned_out":  func(e *voiceops.AlertEvent) { e.FannedOut = false },
			},
		}.run(t, c, tables.Deliveries)
	})

	t.Run("Delivery", func(t *testing.T) {
		s, names := newStores(t)
		now := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
		d := voiceops.Delivery{ID: voiceops.DeliveryID("evt_1", "whe_1"), AccountID: "acct_a", EndpointID: "whe_1", EventID: "evt_1",
			EventType: voiceops.EventResolved, Test: true, Status: voiceops.DeliveryPending, NextAttemptAt: aws.Time(now), CreatedAt: now, UpdatedAt: now}
		mustDo(t, s.Deliveries.CreateDeliveries(t.Context(), []voiceops.Delivery{d}))
		d.Status, d.UpdatedAt = voiceops.DeliveryFailed, now.Add(time.Minute)
		d.Attempts = []voiceops.DeliveryAttempt{{Number: 1, At: now.Add(time.Second), StatusCode: 500, DurationMS: 12, Error: "500"}}
		mustDo(t, s.Deliveries.RecordAttempt(t.Context(), d, 0))
		oldShape[voiceops.Delivery]{
			table: names.Deliveries, want: d,
			match: func(it map[string]types.AttributeValue) bool { return attrIs(it, "id", d.ID) },
			read: func(ctx context.Context) (voiceops.Delivery, error) {
				return s.Deliveries.GetDelivery(ctx, d.AccountID, d.EndpointID, d.ID)
			},
			first: []string{"id", "account_id", "endpoint_id", "event_id", "type", "test", "status", "created_at", "updated_at"},
			defaults: map[string]func(*voiceops.Delivery){
				"attempts":        func(d *voiceops.Delivery) { d.Attempts = nil },
				"attempt_count":   none[voiceops.Delivery], // the count RecordAttempt's condition reads
				"next_attempt_at": func(d *voiceops.Delivery) { d.NextAttemptAt = nil },
			},
		}.run(t, c, tables.Deliveries)
	})

	t.Run("Conversation", func(t *testing.T) {
		s, names := newStores(t)
		started := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
		ended := started.Add(time.Minute)
		conv := voiceops.Conversation{ID: voiceops.NewConversationID(started), AccountID: "acct_a", ProjectID: "proj_a",
			Environment: voiceops.EnvLive, Channel: voiceops.ChannelVoice, VariantID: "v1", VariantName: "Main",
			FromNumber: "+441632960001", ToNumber: "+441632960999", ASRLang: "en-GB", TTSLang: "en-GB",
			IntegrationAttributes: map[string]any{"crm": "A-1"}, State: map[string]any{"step": 2.0},
			StartedAt: started, EndedAt: &ended, EndReason: voiceops.EndHandoff, InProgress: true, IdleDue: started.Add(time.Hour),
			NumTurns: 2, NumSilences: 1, NumOOD: 1, ServiceTime: time.Second, Handoff: true, HandoffReason: "human",
			HandoffDestination: "queue", SharedID: "shared-1", Metrics: []voiceops.CustomMetric{{Name: "ORDER", Value: "A-1"}},
			ExpiresAt: started.Add(90 * 24 * time.Hour), Version: 1}
		turn := voiceops.Turn{Index: 0, UserInput: "hi", UserInputDTMF: "1", UserInputAt: started, AgentResponse: "hello",
			AgentResponseAt: started.Add(time.Second), Latency: time.Second, TranslatedUserInput: "salut", EnglishAgentResponse: "hello",
			Intents: []string{"greet"}, Entities: []map[string]any{{"type": "x"}}, IsOOD: true, IsSilence: true,
			Metadata: map[string]any{"k": "v"}, FunctionErrors: 1}
		mustDo(t, s.Conversations.CreateConversation(t.Context(), conv, &turn))
		t.Run("Conversation", func(t *testing.T) {
			oldShape[voiceops.Conversation]{
				table: names.Conversations, want: conv,
				match: func(it map[string]types.AttributeValue) bool {
					return attrIs(it, "id", conv.ID) && it["shared_id"] != nil
				},
				read: func(ctx context.Context) (voiceops.Conversation, error) {
					return s.Conversations.GetConversation(ctx, conv.AccountID, conv.ProjectID, conv.ID)
				},
				// The first shape (cf5bd53) had neither idle_due nor custom_metrics.
				first: []string{"id", "account_id", "project_id", "started_at", "in_progress", "num_turns", "num_silences", "num_ood",
					"service_time_ns", "handoff", "version"},
				defaults: map[string]func(*voiceops.Conversation){
					"environment":            func(c *voiceops.Conversation) { c.Environment = "" },
					"channel":                func(c *voiceops.Conversation) { c.Channel = "" },
					"variant_id":             func(c *voiceops.Conversation) { c.VariantID = "" },
					"variant_name":           func(c *voiceops.Conversation) { c.VariantName = "" },
					"from_number":            func(c *voiceops.Conversation) { c.FromNumber = "" },
					"to_number":              func(c *voiceops.Conversation) { c.ToNumber = "" },
					"asr_lang":               func(c *voiceops.Conversation) { c.ASRLang = "" },
					"tts_lang":               func(c *voiceops.Conversation) { c.TTSLang = "" },
					"integration_attributes": func(c *voiceops.Conversation) { c.IntegrationAttributes = nil },
					"state":                  func(c *voiceops.Conversation) { c.State = nil },
					"ended_at":               func(c *voiceops.Conversation) { c.EndedAt = nil },
					"end_reason":             func(c *voiceops.Conversation) { c.EndReason = "" },
					"handoff_reason":         func(c *voiceops.Conversation) { c.HandoffReason = "" },
					"handoff_destination":    func(c *voiceops.Conversation) { c.HandoffDestination = "" },
					"shared_id":              func(c *voiceops.Conversation) { c.SharedID = "" },
					"expires":                func(c *voiceops.Conversation) { c.ExpiresAt = time.Time{} },
					// Added on 2026-11-25: a conversation from before has no
					// custom metrics and no idle due (it never times out).
					"custom_metrics": func(c *voiceops.Conversation) { c.Metrics = nil },
					"idle_due":       func(c *voiceops.Conversation) { c.IdleDue = time.Time{} },
					// A conversation from before has
					// every turn item committed (store-internal: no field).
					"turns_to": none[voiceops.Conversation],
				},
			}.run(t, c, tables.Conversations)
		})
		t.Run("Turn", func(t *testing.T) {
			oldShape[voiceops.Turn]{
				table: names.Conversations, want: turn,
				match: func(it map[string]types.AttributeValue) bool { return it["index"] != nil },
				read: func(ctx context.Context) (voiceops.Turn, error) {
					ts, err := s.Conversations.Turns(ctx, conv.AccountID, conv.ProjectID, conv.ID)
					if err != nil || len(ts) != 1 {
						t.Fatalf("Turns: %v %v", ts, err)
					}
					return ts[0], nil
				},
				first: []string{"index", "latency_ns", "is_ood", "is_silence", "function_errors"},
				defaults: map[string]func(*voiceops.Turn){
					"user_input":              func(t *voiceops.Turn) { t.UserInput = "" },
					"user_input_dtmf":         func(t *voiceops.Turn) { t.UserInputDTMF = "" },
					"user_input_datetime":     func(t *voiceops.Turn) { t.UserInputAt = time.Time{} },
					"agent_response":          func(t *voiceops.Turn) { t.AgentResponse = "" },
					"agent_response_datetime": func(t *voiceops.Turn) { t.AgentResponseAt = time.Time{} },
					"translated_user_input":   func(t *voiceops.Turn) { t.TranslatedUserInput = "" },
					"english_agent_response":  func(t *voiceops.Turn) { t.EnglishAgentResponse = "" },
					"intents":                 func(t *voiceops.Turn) { t.Intents = nil },
					"entities":                func(t *voiceops.Turn) { t.Entities = nil },
					"metadata":                func(t *voiceops.Turn) { t.Metadata = nil },
					"expires":                 none[voiceops.Turn], // the conversation's, for the store's reads
					// Store-internal: the version a turn
					// builds on and when it was written, read only by a
					// writer finding an uncommitted turn in its place.
					"base":    none[voiceops.Turn],
					"written": none[voiceops.Turn],
				},
			}.run(t, c, tables.Conversations)
		})
	})

	t.Run("Call", func(t *testing.T) {
		names := newTables(t, c)
		s := dynamo.NewCalls(c, names.Calls)
		now := time.Now().Truncate(time.Millisecond)
		step, exp := now.Add(time.Second), now.Add(time.Hour)
		call := voiceops.Call{SID: voiceops.NewCallSID(), AccountID: "acct_a", ProjectID: "proj_a", ToNumber: "+447700900123",
			Metadata: map[string]any{"n": 1.0}, Encryption: "srtp", CountryCode: "GB", Status: voiceops.CallFailure,
			Reason: voiceops.ReasonBusy, ConversationID: "conv_1", Steps: 2, StepAt: &step, StepToken: "tok",
			Greeting: &voiceops.CallReply{Step: 1, Text: "Hi", End: true}, Reply: &voiceops.CallReply{Step: 2, Text: "Bye", End: true},
			CreatedAt: now, UpdatedAt: now, ExpiresAt: &exp}
		mustDo(t, s.CreateCall(t.Context(), call))
		oldShape[voiceops.Call]{
			table: names.Calls, want: call,
			match: func(map[string]types.AttributeValue) bool { return true },
			read:  func(ctx context.Context) (voiceops.Call, error) { return s.GetCall(ctx, call.SID, now) },
			first: []string{"account_id", "project_id", "to_number", "status", "created_at", "updated_at"},
			together: [][]string{
				{"steps", "step_at", "step_at_ns", "step_token"},
				{"reply_step", "reply_text", "reply_end"},
				{"greeting_text", "greeting_end"},
			},
			defaults: map[string]func(*voiceops.Call){
				"metadata":        func(c *voiceops.Call) { c.Metadata = nil },
				"encryption":      func(c *voiceops.Call) { c.Encryption = "" },
				"country_code":    func(c *voiceops.Call) { c.CountryCode = "" },
				"reason":          func(c *voiceops.Call) { c.Reason = "" },
				"conversation_id": func(c *voiceops.Call) { c.ConversationID = "" },
				"expires":         func(c *voiceops.Call) { c.ExpiresAt = nil },
				"steps":           func(c *voiceops.Call) { c.Steps, c.StepAt, c.StepToken = 0, nil, "" },
				"step_at":         none[voiceops.Call], // with steps
				"step_at_ns":      none[voiceops.Call], // step_at for the takeover's condition
				"step_token":      none[voiceops.Call],
				"reply_step":      func(c *voiceops.Call) { c.Reply = nil },
				"reply_text":      none[voiceops.Call],
				"reply_end":       none[voiceops.Call],
				"greeting_text":   func(c *voiceops.Call) { c.Greeting = nil },
				"greeting_end":    none[voiceops.Call],
			},
		}.run(t, c, tables.Calls)
	})
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
