package dynamo_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/storetest"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// client returns a client of the emulator's DynamoDB (awstest).
func client(t *testing.T) *dynamodb.Client { return awstest.DynamoDB(t) }

// newTables creates a fresh set of tables, deleted when the test ends.
func newTables(t *testing.T, c *dynamodb.Client) dynamo.TableNames { return awstest.Tables(t, c) }

func TestContract(t *testing.T) {
	c := client(t)
	db := awstest.Serial(c)
	storetest.Run(t, func(t *testing.T) voiceops.Stores {
		return dynamo.NewStores(db, newTables(t, c))
	})
}

// TestWakesContract: the wake-ups are the touches (items "T#...") the
// stores write in the metrics table, by the scope of their partition.
func TestWakesContract(t *testing.T) {
	c := client(t)
	db := awstest.Serial(c)
	storetest.RunWakes(t, func(t *testing.T) (voiceops.Stores, storetest.Woken) {
		names := newTables(t, c)
		return dynamo.NewStores(db, names), func() []string {
			var woken []string
			p := dynamodb.NewScanPaginator(c, &dynamodb.ScanInput{TableName: aws.String(names.Metrics), ConsistentRead: aws.Bool(true)})
			for p.HasMorePages() {
				page, err := p.NextPage(t.Context())
				if err != nil {
					t.Fatalf("Scan: %v", err)
				}
				for _, it := range page.Items {
					pk, _ := it["pk"].(*types.AttributeValueMemberS)
					sk, _ := it["sk"].(*types.AttributeValueMemberS)
					if pk == nil || sk == nil || !strings.HasPrefix(sk.Value, "T#") {
						continue
					}
					acct, project, ok := dynamo.MetricScope(pk.Value)
					if !ok {
						t.Fatalf("a touch in partition %q", pk.Value)
					}
					woken = append(woken, acct+"/"+project)
				}
			}
			return woken
		}
	})
}

func TestTableNames(t *testing.T) {
	env := map[string]string{"CONFIG_TABLE": "c", "METRICS_TABLE": "m", "DELIVERIES_TABLE": "d", "CONVERSATIONS_TABLE": "v", "CALLS_TABLE": "o", "REQUESTS_TABLE": "r"}
	got := dynamo.TableNamesFromEnv(func(k string) string { return env[k] })
	if want := (dynamo.TableNames{Config: "c", Metrics: "m", Deliveries: "d", Conversations: "v", Calls: "o", Requests: "r"}); got != want {
		t.Errorf("TableNamesFromEnv: want %+v, got %+v", want, got)
	}
	got = dynamo.TableNamesFor("voiceops-us")
	if want := (dynamo.TableNames{Config: "voiceops-us-config", Metrics: "voiceops-us-metrics", Deliveries: "voiceops-us-deliveries",
		Conversations: "voiceops-us-conversations", Calls: "voiceops-us-calls", Requests: "voiceops-us-requests"}); got != want {
		t.Errorf("TableNamesFor: want %+v, got %+v", want, got)
	}
	for _, tb := range tables.All {
		if got.Of(tb) == "" {
			t.Errorf("TableNames.Of(%s) is empty", tb.ID)
		}
	}
}

func TestRuleShard(t *testing.T) {
	seen := map[string]bool{}
	for i := range 400 {
		id := "acct_" + strconv.Itoa(i)
		s := voiceops.RuleShardOf(id)
		if s < 0 || s >= voiceops.RuleShards || s != voiceops.RuleShardOf(id) {
			t.Fatalf("RuleShardOf(%q) = %d", id, s)
		}
		seen[dynamo.RuleShardKey(s)] = true
	}
	if len(seen) != voiceops.RuleShards {
		t.Errorf("400 accounts spread over %d shards, want all %d", len(seen), voiceops.RuleShards)
	}
	if got := dynamo.RuleShardKey(7); got != "RULES#07" {
		t.Errorf("RuleShardKey(7) = %q", got)
	}
	// FNV-32a of "" is 2166136261, and 2166136261 % 16 = 5.
	if got := voiceops.RuleShardOf(""); got != 5 {
		t.Errorf("RuleShardOf(\"\") = %d, want 5", got)
	}
}

// TestCreateTablesTurnsOnAMissingStream: a metrics table made before it
// had a stream (an older dev server's, on LocalStack or moto) gets one.
func TestCreateTablesTurnsOnAMissingStream(t *testing.T) {
	c := client(t)
	names := dynamo.TableNamesFor("test-" + strings.ToLower(voiceops.RandomBase62(12)))
	t.Cleanup(func() {
		for _, tb := range tables.All {
			_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(names.Of(tb))})
		}
	})
	if _, err := c.CreateTable(t.Context(), &dynamodb.CreateTableInput{
		TableName: aws.String(names.Metrics), BillingMode: types.BillingModePayPerRequest,
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String(tables.PK), KeyType: types.KeyTypeHash}, {AttributeName: aws.String(tables.SK), KeyType: types.KeyTypeRange}},
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(tables.PK), AttributeType: types.ScalarAttributeTypeS}, {AttributeName: aws.String(tables.SK), AttributeType: types.ScalarAttributeTypeS},
		},
	}); err != nil {
		t.Fatalf("an old metrics table, without a stream: %v", err)
	}
	if err := dynamo.CreateTables(t.Context(), c, names); err != nil {
		t.Fatal(err)
	}
	out, err := c.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(names.Metrics)})
	if err != nil {
		t.Fatal(err)
	}
	if s := out.Table.StreamSpecification; s == nil || !aws.ToBool(s.StreamEnabled) || string(s.StreamViewType) != tables.Metrics.Stream {
		t.Errorf("stream %+v, want %s", s, tables.Metrics.Stream)
	}
}

func TestCreateTables(t *testing.T) {
	c := client(t)
	names := newTables(t, c)
	// Idempotent: a second run over existing tables changes nothing.
	if err := dynamo.CreateTables(t.Context(), c, names); err != nil {
		t.Fatalf("CreateTables again: %v", err)
	}
	for _, tb := range tables.All {
		name := names.Of(tb)
		out, err := c.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatalf("DescribeTable %s: %v", name, err)
		}
		d := out.Table
		if d.TableStatus != types.TableStatusActive {
			t.Errorf("%s: status %s", name, d.TableStatus)
		}
		if d.BillingModeSummary == nil || d.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
			t.Errorf("%s: billing mode %+v, want PAY_PER_REQUEST", name, d.BillingModeSummary)
		}
		if got, want := keys(d.KeySchema), []string{tb.PartitionKey + " HASH", tb.SortKey + " RANGE"}; !slices.Equal(got, want) {
			t.Errorf("%s: key schema %v, want %v", name, got, want)
		}
		attrTypes := map[string]string{}
		for _, a := range d.AttributeDefinitions {
			attrTypes[aws.ToString(a.AttributeName)] = string(a.AttributeType)
		}
		wantTypes := map[string]string{tb.PartitionKey: "S", tb.SortKey: "S"}
		if len(d.GlobalSecondaryIndexes) != len(tb.GSIs) {
			t.Fatalf("%s: %d GSIs, want %d", name, len(d.GlobalSecondaryIndexes), len(tb.GSIs))
		}
		for i, g := range tb.GSIs {
			got := d.GlobalSecondaryIndexes[i]
			if aws.ToString(got.IndexName) != g.Name {
				t.Errorf("%s: GSI %d named %q, want %q", name, i, aws.ToString(got.IndexName), g.Name)
			}
			if k, want := keys(got.KeySchema), []string{g.PartitionKey + " HASH", g.SortKey + " RANGE"}; !slices.Equal(k, want) {
				t.Errorf("%s: GSI %s key schema %v, want %v", name, g.Name, k, want)
			}
			want := types.ProjectionTypeAll
			if g.KeysOnly {
				want = types.ProjectionTypeKeysOnly
			}
			if got.Projection == nil || got.Projection.ProjectionType != want {
				t.Errorf("%s: GSI %s projection %+v, want %s", name, g.Name, got.Projection, want)
			}
			wantTypes[g.PartitionKey], wantTypes[g.SortKey] = "S", "S"
		}
		if !maps.Equal(attrTypes, wantTypes) {
			t.Errorf("%s: attribute definitions %v, want %v", name, attrTypes, wantTypes)
		}
		ttl, err := c.DescribeTimeToLive(t.Context(), &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatalf("DescribeTimeToLive %s: %v", name, err)
		}
		if ttl.TimeToLiveDescription == nil || ttl.TimeToLiveDescription.TimeToLiveStatus != "ENABLED" ||
			aws.ToString(ttl.TimeToLiveDescription.AttributeName) != tb.TTLAttribute {
			t.Errorf("%s: TTL %+v, want ENABLED on %s", name, ttl.TimeToLiveDescription, tb.TTLAttribute)
		}
		stream := d.StreamSpecification != nil && aws.ToBool(d.StreamSpecification.StreamEnabled)
		if stream != (tb.Stream != "") || (stream && string(d.StreamSpecification.StreamViewType) != tb.Stream) {
			t.Errorf("%s: stream %+v, want %q", name, d.StreamSpecification, tb.Stream)
		}
	}
	if err := dynamo.CreateTables(t.Context(), c, dynamo.TableNames{Config: "only-one"}); err == nil {
		t.Error("CreateTables without every table name succeeded")
	}
}

func keys(ks []types.KeySchemaElement) []string {
	var out []string
	for _, k := range ks {
		out = append(out, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	return out
}

// --- call budget ----------------------------------------------------------------

// countingDB counts the calls made through it, by SDK operation, and the
// items its Queries read (ScannedCount: what they cost in read units).
type countingDB struct {
	dynamo.DB
	mu      sync.Mutex
	calls   map[string]int
	scanned int32
}

func (c *countingDB) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[op]++
}

// take returns the counts since the last take and resets them.
func (c *countingDB) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = map[string]int{}
	return out
}

func (c *countingDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.count("GetItem")
	return c.DB.GetItem(ctx, in, o...)
}

func (c *countingDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.count("PutItem")
	return c.DB.PutItem(ctx, in, o...)
}

func (c *countingDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.count("UpdateItem")
	return c.DB.UpdateItem(ctx, in, o...)
}

func (c *countingDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.count("DeleteItem")
	return c.DB.DeleteItem(ctx, in, o...)
}

func (c *countingDB) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.count("Query")
	out, err := c.DB.Query(ctx, in, o...)
	if err == nil {
		c.mu.Lock()
		c.scanned += out.ScannedCount
		c.mu.Unlock()
	}
	return out, err
}

// takeScanned returns the items read since the last takeScanned and
// resets the count.
func (c *countingDB) takeScanned() int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.scanned
	c.scanned = 0
	return n
}

func (c *countingDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.count("TransactWriteItems")
	return c.DB.TransactWriteItems(ctx, in, o...)
}

func TestCallBudget(t *testing.T) {
	c := client(t)
	db := &countingDB{DB: c}
	names := newTables(t, c)
	s := dynamo.NewConfig(db, names.Config, names.Deliveries)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)

	acct := voiceops.Account{ID: voiceops.NewID(voiceops.PrefixAccount), Name: "budget", CreatedAt: now}
	proj := voiceops.Project{ID: voiceops.NewID(voiceops.PrefixProject), AccountID: acct.ID, Name: "p", CreatedAt: now}
	key := voiceops.Key{ID: voiceops.NewID(voiceops.PrefixKey), Digest: voiceops.RandomBase62(64), Prefix: "vo_api_us_x", Kind: voiceops.KeyAPI,
		Region: voiceops.RegionUS, AccountID: acct.ID, CreatedAt: now}
	rule := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), acct.ID, voiceops.RuleInput{
		Name: "r", ProjectID: &proj.ID, Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m,
	}, now)
	updated := rule
	updated.Name, updated.Version = "renamed", 2
	moved := updated
	moved.ProjectID, moved.Version = nil, 3
	ep := voiceops.NewEndpoint(voiceops.NewID(voiceops.PrefixEndpoint), acct.ID, "whsec_x", voiceops.EndpointInput{
		Name: "e", URL: "https://example.com/h", EventTypes: []voiceops.EventType{voiceops.EventTriggered},
	}, now)
	epUpdated := ep
	epUpdated.Name, epUpdated.Version = "renamed", 2

	steps := []struct {
		name string
		call func() error
		want map[string]int
	}{
		{"CreateAccount", func() error { return s.CreateAccount(ctx, acct) }, map[string]int{"PutItem": 1}},
		{"CreateProject", func() error { return s.CreateProject(ctx, proj) }, map[string]int{"TransactWriteItems": 1}},
		{"CreateKey", func() error { return s.CreateKey(ctx, key) }, map[string]int{"TransactWriteItems": 1}},
		{"KeyByDigest", func() error { _, err := s.KeyByDigest(ctx, key.Digest); return err }, map[string]int{"GetItem": 1}},
		{"CreateRule", func() error { return s.CreateRule(ctx, rule) }, map[string]int{"TransactWriteItems": 1}},
		{"CreateRule over nothing but a duplicate", func() error {
			// Another rule under the taken ID (the very same item would be
			// this call's own retry: see applied).
			dup := rule
			dup.Name = "another"
			if err := s.CreateRule(ctx, dup); !errors.Is(err, voiceops.ErrAlreadyExists) {
				return errors.New("want ErrAlreadyExists, got " + errString(err))
			}
			return nil
		}, map[string]int{"TransactWriteItems": 1}},
		{"GetRule", func() error { _, err := s.GetRule(ctx, acct.ID, rule.ID); return err }, map[string]int{"GetItem": 1}},
		{"ListRules", func() error { _, err := s.ListRules(ctx, acct.ID); return err }, map[string]int{"Query": 1}},
		{"UpdateRule", func() error { return s.UpdateRule(ctx, updated, 1, false) }, map[string]int{"PutItem": 1}},
		{"UpdateRule checking a nil project", func() error { return s.UpdateRule(ctx, moved, 2, true) }, map[string]int{"PutItem": 1}},
		{"UpdateRule stale", func() error {
			stale := moved // another change from version 1 (the very same item would be a retry of the last call)
			stale.Name = "stale"
			if err := s.UpdateRule(ctx, stale, 1, false); !errors.Is(err, voiceops.ErrConflictingWrite) {
				return errors.New("want ErrConflictingWrite, got " + errString(err))
			}
			return nil
		}, map[string]int{"PutItem": 1}},
		{"DeleteRule", func() error { _, err := s.DeleteRule(ctx, acct.ID, rule.ID, nil); return err }, map[string]int{"GetItem": 1, "TransactWriteItems": 1}},
		{"CreateEndpoint", func() error { return s.CreateEndpoint(ctx, ep) }, map[string]int{"TransactWriteItems": 1}},
		{"GetEndpoint", func() error { _, err := s.GetEndpoint(ctx, acct.ID, ep.ID); return err }, map[string]int{"GetItem": 1}},
		{"ListEndpoints", func() error { _, err := s.ListEndpoints(ctx, acct.ID); return err }, map[string]int{"Query": 1}},
		{"UpdateEndpoint", func() error { return s.UpdateEndpoint(ctx, epUpdated, 1) }, map[string]int{"PutItem": 1}},
		{"DeleteEndpoint", func() error { return s.DeleteEndpoint(ctx, acct.ID, ep.ID) }, map[string]int{"GetItem": 1, "TransactWriteItems": 1}},
	}
	for _, st := range steps {
		db.take()
		if err := st.call(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := db.take(); !maps.Equal(got, st.want) {
			t.Errorf("%s: calls %v, want %v", st.name, got, st.want)
		}
	}

	// With the project to check, UpdateRule is one transaction.
	withProject := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), acct.ID, voiceops.RuleInput{
		Name: "r2", Metric: voiceops.MetricCallVolume, Operator: voiceops.OpLess, Threshold: 1, Window: voiceops.Window5m,
	}, now)
	if err := s.CreateRule(ctx, withProject); err != nil {
		t.Fatal(err)
	}
	withProject.ProjectID, withProject.Version = &proj.ID, 2
	db.take()
	if err := s.UpdateRule(ctx, withProject, 1, true); err != nil {
		t.Fatalf("UpdateRule checking the project: %v", err)
	}
	if got, want := db.take(), map[string]int{"TransactWriteItems": 1}; !maps.Equal(got, want) {
		t.Errorf("UpdateRule checking the project: calls %v, want %v", got, want)
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// --- failures of DynamoDB ----------------------------------------------------------

// failingDB answers every call with the error err returns for a call
// writing n transaction items (0 for every other call).
type failingDB struct {
	err func(n int) error
}

func (f *failingDB) fail() error { return f.err(0) }

func (f *failingDB) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return nil, f.fail()
}

func (f *failingDB) BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return nil, f.fail()
}

func (f *failingDB) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return nil, f.fail()
}

func (f *failingDB) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return nil, f.fail()
}

func (f *failingDB) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return nil, f.fail()
}

func (f *failingDB) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return nil, f.fail()
}

func (f *failingDB) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return nil, f.err(len(in.TransactItems))
}

// everyMethod returns a call of every store method.
func everyMethod(s voiceops.Stores) map[string]func(context.Context) error {
	r := voiceops.AlertRule{ID: "ar_x", AccountID: "acct_x", Version: 2}
	e := voiceops.WebhookEndpoint{ID: "whe_x", AccountID: "acct_x", Version: 2}
	k := voiceops.Key{ID: "key_x", Digest: "d", AccountID: "acct_x", ProjectID: "proj_x"}
	return map[string]func(context.Context) error{
		"CreateAccount": func(ctx context.Context) error { return s.Accounts.CreateAccount(ctx, voiceops.Account{ID: "acct_x"}) },
		"GetAccount":    func(ctx context.Context) error { _, err := s.Accounts.GetAccount(ctx, "acct_x"); return err },
		"ListAccounts":  func(ctx context.Context) error { _, err := s.Accounts.ListAccounts(ctx); return err },
		"CreateProject": func(ctx context.Context) error {
			return s.Accounts.CreateProject(ctx, voiceops.Project{ID: "p", AccountID: "acct_x"})
		},
		"GetProject":   func(ctx context.Context) error { _, err := s.Accounts.GetProject(ctx, "acct_x", "p"); return err },
		"ListProjects": func(ctx context.Context) error { _, err := s.Accounts.ListProjects(ctx, "acct_x"); return err },
		"CreateKey":    func(ctx context.Context) error { return s.Accounts.CreateKey(ctx, k) },
		"KeyByDigest":  func(ctx context.Context) error { _, err := s.Accounts.KeyByDigest(ctx, "d"); return err },
		"ListKeys":     func(ctx context.Context) error { _, err := s.Accounts.ListKeys(ctx, "acct_x"); return err },
		"RevokeKey": func(ctx context.Context) error {
			_, err := s.Accounts.RevokeKey(ctx, "acct_x", "key_x", time.Now())
			return err
		},
		"CreateRule":     func(ctx context.Context) error { return s.Rules.CreateRule(ctx, r) },
		"GetRule":        func(ctx context.Context) error { _, err := s.Rules.GetRule(ctx, "acct_x", "ar_x"); return err },
		"ListRules":      func(ctx context.Context) error { _, err := s.Rules.ListRules(ctx, "acct_x"); return err },
		"UpdateRule":     func(ctx context.Context) error { return s.Rules.UpdateRule(ctx, r, 1, false) },
		"DeleteRule":     func(ctx context.Context) error { _, err := s.Rules.DeleteRule(ctx, "acct_x", "ar_x", nil); return err },
		"CreateEndpoint": func(ctx context.Context) error { return s.Endpoints.CreateEndpoint(ctx, e) },
		"GetEndpoint":    func(ctx context.Context) error { _, err := s.Endpoints.GetEndpoint(ctx, "acct_x", "whe_x"); return err },
		"ListEndpoints":  func(ctx context.Context) error { _, err := s.Endpoints.ListEndpoints(ctx, "acct_x"); return err },
		"UpdateEndpoint": func(ctx context.Context) error { return s.Endpoints.UpdateEndpoint(ctx, e, 1) },
		"DeleteEndpoint": func(ctx context.Context) error { return s.Endpoints.DeleteEndpoint(ctx, "acct_x", "whe_x") },
	}
}

func TestSDKErrorsAreInternal(t *testing.T) {
	throttled := &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException", Message: "Dynamo says: table voiceops-us-config is throttled"}
	refused := errors.New("dial tcp 10.0.0.1:443: connection refused")
	// A transaction cancelled for something other than a condition or a
	// conflict; single-item calls fail with a throttling error meanwhile.
	cancelled := map[int]error{0: throttled}
	for n := 1; n <= 4; n++ {
		reasons := make([]types.CancellationReason, n)
		for i := range reasons {
			reasons[i] = types.CancellationReason{Code: aws.String("None")}
		}
		reasons[n-1] = types.CancellationReason{Code: aws.String("ThrottlingError"), Message: aws.String("Dynamo says: throttled")}
		cancelled[n] = &types.TransactionCanceledException{Message: aws.String("Dynamo says: cancelled"), CancellationReasons: reasons}
	}
	for _, tc := range []struct {
		name string
		err  func(n int) error
	}{
		{"API error", func(int) error { return throttled }},
		{"transport error", func(int) error { return refused }},
		{"cancelled transaction", func(n int) error { return cancelled[n] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var last error
			s := dynamo.NewStores(&failingDB{err: func(n int) error { last = tc.err(n); return last }}, dynamo.TableNamesFor("x"))
			for name, call := range everyMethod(s) {
				last = nil
				err := call(t.Context())
				if err == nil {
					t.Errorf("%s: no error", name)
					continue
				}
				var de *voiceops.Error
				if errors.As(err, &de) {
					t.Errorf("%s: got the domain error %q (kind %d), want a plain internal error", name, de.Message, de.Kind)
				}
				if k := voiceops.KindOf(err); k != voiceops.KindInternal {
					t.Errorf("%s: kind %d, want KindInternal", name, k)
				}
				if last == nil || !errors.Is(err, last) {
					t.Errorf("%s: %v does not wrap the SDK error %v", name, err, last)
				}
			}
		})
	}
}

func TestContextCancelled(t *testing.T) {
	c := client(t)
	s := dynamo.NewStores(c, newTables(t, c))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for name, call := range everyMethod(s) {
		err := call(ctx)
		if !errors.Is(err, context.Canceled) || voiceops.KindOf(err) != voiceops.KindInternal {
			t.Errorf("%s with a cancelled context: got %v, want an internal error wrapping context.Canceled", name, err)
		}
	}
}

// conflictingDB cancels the first n transactions for a conflict with
// another transaction, as DynamoDB does when two transactions touch the
// same item at once, then passes calls through.
type conflictingDB struct {
	dynamo.DB
	mu        sync.Mutex
	conflicts int
	calls     int
}

func (c *conflictingDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.mu.Lock()
	c.calls++
	conflict := c.calls <= c.conflicts
	c.mu.Unlock()
	if !conflict {
		return c.DB.TransactWriteItems(ctx, in, o...)
	}
	reasons := make([]types.CancellationReason, len(in.TransactItems))
	for i := range reasons {
		reasons[i].Code = aws.String("None")
	}
	reasons[0].Code = aws.String("TransactionConflict")
	return nil, &types.TransactionCanceledException{Message: aws.String("Transaction cancelled"), CancellationReasons: reasons}
}

func TestTransactionConflictsAreRetried(t *testing.T) {
	c := client(t)
	names := newTables(t, c)
	direct := dynamo.NewConfig(c, names.Config, names.Deliveries)
	acct := voiceops.Account{ID: voiceops.NewID(voiceops.PrefixAccount), Name: "a", CreatedAt: time.Now()}
	if err := direct.CreateAccount(t.Context(), acct); err != nil {
		t.Fatal(err)
	}
	rule := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), acct.ID, voiceops.RuleInput{
		Name: "r", Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m,
	}, time.Now())

	t.Run("a few conflicts, then success", func(t *testing.T) {
		db := &conflictingDB{DB: c, conflicts: 2}
		if err := dynamo.NewConfig(db, names.Config, names.Deliveries).CreateRule(t.Context(), rule); err != nil {
			t.Fatalf("CreateRule: %v", err)
		}
		if db.calls != 3 {
			t.Errorf("TransactWriteItems calls: %d, want 3", db.calls)
		}
		if _, err := direct.GetRule(t.Context(), acct.ID, rule.ID); err != nil {
			t.Errorf("GetRule: %v", err)
		}
	})
	t.Run("conflicts without end", func(t *testing.T) {
		db := &conflictingDB{DB: c, conflicts: 1000}
		r := rule
		r.ID = voiceops.NewID(voiceops.PrefixRule)
		err := dynamo.NewConfig(db, names.Config, names.Deliveries).CreateRule(t.Context(), r)
		if !errors.Is(err, voiceops.ErrConflictingWrite) {
			t.Fatalf("CreateRule: want ErrConflictingWrite, got %v", err)
		}
		if db.calls < 2 || db.calls > 20 {
			t.Errorf("TransactWriteItems calls: %d, want a few retries", db.calls)
		}
		if _, err := direct.GetRule(t.Context(), acct.ID, r.ID); !errors.Is(err, voiceops.ErrNotFound) {
			t.Errorf("GetRule of the refused rule: %v", err)
		}
	})
}

// --- what only DynamoDB has -------------------------------------------------------

func TestExpiredItemsAreIgnored(t *testing.T) {
	c := client(t)
	names := newTables(t, c)
	s := dynamo.NewConfig(c, names.Config, names.Deliveries)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	acct := voiceops.Account{ID: voiceops.NewID(voiceops.PrefixAccount), Name: "a", CreatedAt: now}
	if err := s.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	in := voiceops.RuleInput{Name: "r", Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m}
	live := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), acct.ID, in, now)
	later := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), acct.ID, in, now.Add(time.Second))
	gone := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), acct.ID, in, now.Add(2*time.Second))
	for _, r := range []voiceops.AlertRule{live, later, gone} {
		if err := s.CreateRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	setTTL := func(ruleID string, at time.Time) {
		t.Helper()
		_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(names.Config),
			Key: map[string]types.AttributeValue{
				tables.PK: &types.AttributeValueMemberS{Value: "ACCT#" + acct.ID},
				tables.SK: &types.AttributeValueMemberS{Value: "RULE#" + ruleID},
			},
			UpdateExpression:          aws.String("SET #ttl = :t"),
			ExpressionAttributeNames:  map[string]string{"#ttl": tables.TTL},
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberN{Value: strconv.FormatInt(at.Unix(), 10)}},
		})
		if err != nil {
			t.Fatalf("UpdateItem: %v", err)
		}
	}
	setTTL(later.ID, time.Now().Add(time.Hour))
	setTTL(gone.ID, time.Now().Add(-time.Minute))

	if _, err := s.GetRule(ctx, acct.ID, gone.ID); !errors.Is(err, voiceops.ErrNotFound) {
		t.Errorf("GetRule of an expired rule: want ErrNotFound, got %v", err)
	}
	if _, err := s.GetRule(ctx, acct.ID, later.ID); err != nil {
		t.Errorf("GetRule of a rule expiring later: %v", err)
	}
	rs, err := s.ListRules(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	if want := []string{live.ID, later.ID}; !slices.Equal(ids, want) {
		t.Errorf("ListRules: want %v, got %v", want, ids)
	}
}

// TestEvaluatorIndex checks the sparse index the evaluator queries: a rule
// is on it exactly while it is enabled.
func TestEvaluatorIndex(t *testing.T) {
	c := client(t)
	names := newTables(t, c)
	s := dynamo.NewConfig(c, names.Config, names.Deliveries)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	acct := voiceops.Account{ID: voiceops.NewID(voiceops.PrefixAccount), Name: "a", CreatedAt: now}
	if err := s.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	off := false
	in := voiceops.RuleInput{Name: "r", Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m}
	on := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), acct.ID, in, now)
	in.Enabled = &off
	disabled := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), acct.ID, in, now)
	for _, r := range []voiceops.AlertRule{on, disabled} {
		if err := s.CreateRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	indexed := func() []string {
		t.Helper()
		var ids []string
		for shard := range voiceops.RuleShards {
			out, err := c.Query(ctx, &dynamodb.QueryInput{
				TableName: aws.String(names.Config), IndexName: aws.String(tables.Config.GSIs[0].Name),
				KeyConditionExpression:    aws.String("#p = :p"),
				ExpressionAttributeNames:  map[string]string{"#p": tables.Config.GSIs[0].PartitionKey},
				ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: dynamo.RuleShardKey(shard)}},
			})
			if err != nil {
				t.Fatalf("Query: %v", err)
			}
			for _, it := range out.Items {
				r, err := dynamo.DecodeRule(it)
				if err != nil {
					t.Fatalf("DecodeRule: %v", err)
				}
				if shard != voiceops.RuleShardOf(r.AccountID) {
					t.Errorf("rule %s on shard %d, want %d", r.ID, shard, voiceops.RuleShardOf(r.AccountID))
				}
				ids = append(ids, r.ID)
			}
		}
		return ids
	}
	if got := indexed(); !slices.Equal(got, []string{on.ID}) {
		t.Fatalf("index after create: want [%s], got %v", on.ID, got)
	}
	flip := func(r voiceops.AlertRule, enabled bool) voiceops.AlertRule {
		t.Helper()
		next := r
		next.Enabled, next.Version = enabled, r.Version+1
		if err := s.UpdateRule(ctx, next, r.Version, false); err != nil {
			t.Fatalf("UpdateRule: %v", err)
		}
		return next
	}
	on = flip(on, false)
	disabled = flip(disabled, true)
	if got := indexed(); !slices.Equal(got, []string{disabled.ID}) {
		t.Errorf("index after flipping both: want [%s], got %v", disabled.ID, got)
	}
	if _, err := s.DeleteRule(ctx, acct.ID, disabled.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := indexed(); len(got) != 0 {
		t.Errorf("index after deleting the enabled rule: want empty, got %v", got)
	}
}

func TestMetricScope(t *testing.T) {
	for _, c := range []struct {
		pk, account, project string
		ok                   bool
	}{
		{dynamo.MetricPartition("acct_a", ""), "acct_a", "", true},
		{dynamo.MetricPartition("acct_a", "proj_1"), "acct_a", "proj_1", true},
		{"M#", "", "", false},
		{"A#acct_a", "", "", false},
		{"M#acct_a#proj#x", "", "", false},
		{"M#acct a", "", "", false},
	} {
		a, p, ok := dynamo.MetricScope(c.pk)
		if a != c.account || p != c.project || ok != c.ok {
			t.Errorf("MetricScope(%q) = %q, %q, %v; want %q, %q, %v", c.pk, a, p, ok, c.account, c.project, c.ok)
		}
	}
}
