package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/calls/dialer"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/tables"
)

func TestEveryRegionSynthesizesWithItsRegion(t *testing.T) {
	s := defaultSynth(t)
	want := append(regionalNames(), "VoiceOps-global")
	var got []string
	for name := range s.stacks {
		got = append(got, name)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("stacks = %v, want %v", got, want)
	}
	for _, r := range Regions {
		name := "VoiceOps-" + r.Name
		if got := *s.stacks[name].Region(); got != r.AWSRegion {
			t.Errorf("%s: region %s, want %s", name, got, r.AWSRegion)
		}
		for _, f := range Functions {
			if !slices.Contains(lambdamain.Names(lambdamain.Environments[f.Name]), lambdamain.RegionEnv) {
				continue
			}
			_, fn := functionResource(t, s.json[name], f.Name)
			environment, _ := props(fn)["Environment"].(map[string]any)
			if vars, _ := environment["Variables"].(map[string]any); vars[lambdamain.RegionEnv] != r.Name {
				t.Errorf("%s %s: %s=%v", name, f.Name, lambdamain.RegionEnv, vars[lambdamain.RegionEnv])
			}
		}
	}
	if got := *s.stacks["VoiceOps-global"].Region(); got != defaultGlobalRegion {
		t.Errorf("VoiceOps-global: region %s, want %s", got, defaultGlobalRegion)
	}
}

// TestTablesMatchDefinitions proves that the deployed tables and the
// definitions in shared/platform/tables (which the dev server also creates against
// LocalStack or moto) cannot drift: every definition is in every stack with
// its keys, indexes and TTL, and reading the tables back out of the template
// gives exactly tables.All.
func TestTablesMatchDefinitions(t *testing.T) {
	s := defaultSynth(t)
	for _, r := range Regions {
		name := "VoiceOps-" + r.Name
		tmpl := s.templates[name]
		check(t, name+" table count", func() {
			tmpl.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(len(tables.All)))
		})
		for _, tbl := range tables.All {
			gsis := any(assertions.Match_Absent())
			if len(tbl.GSIs) > 0 {
				var list []any
				for _, g := range tbl.GSIs {
					projection := "ALL"
					if g.KeysOnly {
						projection = "KEYS_ONLY"
					}
					list = append(list, obj{
						"IndexName":  g.Name,
						"KeySchema":  keySchema(g.PartitionKey, g.SortKey),
						"Projection": obj{"ProjectionType": projection},
					})
				}
				gsis = assertions.Match_ArrayEquals(&list)
			}
			check(t, name+" table "+tbl.ID, func() {
				tmpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), obj{
					"TableName":                        tables.PhysicalName("voiceops-"+r.Name, tbl),
					"KeySchema":                        assertions.Match_ArrayEquals(keySchema(tbl.PartitionKey, tbl.SortKey)),
					"GlobalSecondaryIndexes":           gsis,
					"TimeToLiveSpecification":          obj{"AttributeName": tbl.TTLAttribute, "Enabled": true},
					"BillingMode":                      "PAY_PER_REQUEST",
					"PointInTimeRecoverySpecification": obj{"PointInTimeRecoveryEnabled": true},
					"SSESpecification":                 obj{"SSEEnabled": true},
					"DeletionProtectionEnabled":        true,
				})
			})
		}
		if got, want := tablesFromTemplate(t, s.json[name], r.Name), sortedTables(tables.All); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: tables read back from the template\n got  %+v\n want %+v", name, got, want)
		}
	}
}

func keySchema(pk, sk string) *[]any {
	keys := []any{obj{"AttributeName": pk, "KeyType": "HASH"}}
	if sk != "" {
		keys = append(keys, obj{"AttributeName": sk, "KeyType": "RANGE"})
	}
	return &keys
}

// tablesFromTemplate rebuilds tables.Table values from the synthesized
// AWS::DynamoDB::Table resources.
func tablesFromTemplate(tb testing.TB, tmpl map[string]any, region string) []tables.Table {
	tb.Helper()
	var out []tables.Table
	for _, res := range resources(tmpl, "AWS::DynamoDB::Table") {
		var p struct {
			TableName string
			KeySchema []struct {
				AttributeName, KeyType string
			}
			AttributeDefinitions []struct {
				AttributeName, AttributeType string
			}
			GlobalSecondaryIndexes []struct {
				IndexName string
				KeySchema []struct {
					AttributeName, KeyType string
				}
				Projection struct{ ProjectionType string }
			}
			TimeToLiveSpecification struct {
				AttributeName string
				Enabled       bool
			}
			StreamSpecification struct {
				StreamViewType string
			}
		}
		raw, _ := json.Marshal(props(res))
		if err := json.Unmarshal(raw, &p); err != nil {
			tb.Fatal(err)
		}
		for _, a := range p.AttributeDefinitions {
			if a.AttributeType != "S" {
				tb.Errorf("%s: attribute %s has type %s, want S", p.TableName, a.AttributeName, a.AttributeType)
			}
		}
		keys := func(ks []struct{ AttributeName, KeyType string }) (pk, sk string) {
			for _, k := range ks {
				if k.KeyType == "HASH" {
					pk = k.AttributeName
				} else {
					sk = k.AttributeName
				}
			}
			return pk, sk
		}
		t := tables.Table{ID: strings.TrimPrefix(p.TableName, "voiceops-"+region+"-")}
		for _, def := range tables.All {
			if def.ID == t.ID {
				t.EnvVar = def.EnvVar // not in the table resource; checked on the functions
			}
		}
		t.PartitionKey, t.SortKey = keys(p.KeySchema)
		t.Stream = p.StreamSpecification.StreamViewType
		if p.TimeToLiveSpecification.Enabled {
			t.TTLAttribute = p.TimeToLiveSpecification.AttributeName
		}
		for _, g := range p.GlobalSecondaryIndexes {
			gsi := tables.GSI{Name: g.IndexName, KeysOnly: g.Projection.ProjectionType == "KEYS_ONLY"}
			gsi.PartitionKey, gsi.SortKey = keys(g.KeySchema)
			t.GSIs = append(t.GSIs, gsi)
		}
		out = append(out, t)
	}
	return sortedTables(out)
}

func sortedTables(ts []tables.Table) []tables.Table {
	out := append([]tables.Table{}, ts...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	for i := range out {
		if len(out[i].GSIs) == 0 {
			out[i].GSIs = nil
		}
	}
	return out
}

func TestTablesAreRetainedUnlessDeletionProtectionIsOff(t *testing.T) {
	on := defaultSynth(t).templates["VoiceOps-us"]
	check(t, "protected tables are retained", func() {
		on.ResourcePropertiesCountIs(jsii.String("AWS::DynamoDB::Table"),
			objectLike(obj{"DeletionProtectionEnabled": true}), jsii.Number(len(tables.All)))
		on.AllResources(jsii.String("AWS::DynamoDB::Table"), objectLike(obj{"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"}))
		on.AllResources(jsii.String("AWS::SecretsManager::Secret"), objectLike(obj{"DeletionPolicy": "Retain"}))
	})

	off := mustSynth(t, map[string]any{"region": "us", "deletionProtection": "false"}, Functions).templates["VoiceOps-us"]
	check(t, "unprotected tables are deleted with the stack", func() {
		off.AllResourcesProperties(jsii.String("AWS::DynamoDB::Table"), objectLike(obj{"DeletionProtectionEnabled": false}))
		off.AllResources(jsii.String("AWS::DynamoDB::Table"), objectLike(obj{"DeletionPolicy": "Delete"}))
	})
}

func TestFunctionsRunGoOnArmWithTheirEnvironment(t *testing.T) {
	s := defaultSynth(t)
	for _, r := range Regions {
		name := "VoiceOps-" + r.Name
		tmpl := s.templates[name]
		check(t, name+" function count", func() {
			tmpl.ResourceCountIs(jsii.String("AWS::Lambda::Function"), jsii.Number(len(Functions)))
			// each function's, and each host's API access log (observability.go)
			tmpl.ResourceCountIs(jsii.String("AWS::Logs::LogGroup"), jsii.Number(len(Functions)+len(servedHosts(Functions))))
			tmpl.AllResourcesProperties(jsii.String("AWS::Logs::LogGroup"), objectLike(obj{"RetentionInDays": 30}))
		})
		for _, f := range Functions {
			// Exactly the variables of the function's environment struct,
			// which its main loads (lambdamain.Load).
			vars := obj{}
			for _, v := range lambdamain.Names(lambdamain.Environments[f.Name]) {
				switch v {
				case lambdamain.RegionEnv:
					vars[v] = r.Name
				case lambdamain.PublicBaseURLEnv, lambdamain.ConsoleBaseURLEnv, lambdamain.ConsoleURLEnv:
					vars[v] = assertions.Match_AnyValue()
				default:
					vars[v] = obj{"Ref": assertions.Match_AnyValue()}
				}
			}
			for _, tbl := range tables.All {
				if _, ok := vars[tbl.EnvVar]; ok {
					vars[tbl.EnvVar] = tables.PhysicalName("voiceops-"+r.Name, tbl)
				}
			}
			environment := any(obj{"Variables": assertions.Match_ObjectEquals(&vars)})
			if len(vars) == 0 {
				environment = assertions.Match_Absent()
			}
			check(t, name+" function "+f.Name, func() {
				tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{
					"Description":   fmt.Sprintf("VoiceOps %s (%s)", f.Name, r.Name),
					"Runtime":       "provided.al2023",
					"Architectures": []any{"arm64"},
					"Handler":       "bootstrap",
					"MemorySize":    f.MemoryMB,
					"Timeout":       int(f.Timeout.Seconds()),
					"TracingConfig": obj{"Mode": "Active"},
					"LoggingConfig": objectLike(obj{"LogFormat": "JSON", "LogGroup": obj{"Ref": assertions.Match_AnyValue()}}),
					"Environment":   environment,
					"Code":          objectLike(obj{"S3Key": assertions.Match_StringLikeRegexp(jsii.String(`^[0-9a-f]{64}\.zip$`))}),
					"Tags":          arrayWith(obj{"Key": FunctionTag, "Value": f.Name}),
				})
			})
		}
	}
}

// TestPermissionsAreNarrow walks every IAM policy of every stack: no Allow
// statement has a "*" or "service:*" action, "*" resources appear only for
// X-Ray and dynamodb:ListStreams (which have no resource-level
// permissions; the stream event source needs the latter), and no role carries a
// full-access or administrator managed policy.
func TestPermissionsAreNarrow(t *testing.T) {
	s := defaultSynth(t)
	for name, tmpl := range s.json {
		var docs []any
		for _, res := range resources(tmpl, "AWS::IAM::Policy") {
			docs = append(docs, props(res)["PolicyDocument"])
		}
		for _, res := range resources(tmpl, "AWS::IAM::Role") {
			p := props(res)
			if pols, ok := p["Policies"].([]any); ok {
				for _, pol := range pols {
					docs = append(docs, pol.(map[string]any)["PolicyDocument"])
				}
			}
			managed, _ := json.Marshal(p["ManagedPolicyArns"])
			for _, bad := range []string{"FullAccess", "AdministratorAccess", "PowerUserAccess"} {
				if strings.Contains(string(managed), bad) {
					t.Errorf("%s: role has managed policy %s", name, managed)
				}
			}
		}
		for _, doc := range docs {
			stmts, _ := doc.(map[string]any)["Statement"].([]any)
			for _, st := range stmts {
				st := st.(map[string]any)
				if st["Effect"] != "Allow" {
					continue
				}
				actions := strings1(st["Action"])
				for _, a := range actions {
					if a == "*" || strings.HasSuffix(a, ":*") {
						t.Errorf("%s: statement allows %q: %v", name, a, st)
					}
				}
				for _, res := range strings1(st["Resource"]) {
					if res == "*" {
						for _, a := range actions {
							if !strings.HasPrefix(a, "xray:") && a != "dynamodb:ListStreams" {
								t.Errorf("%s: action %s on resource *", name, a)
							}
						}
					}
				}
			}
		}
	}

	// The grants the functions need are there.
	var all []grant
	for _, f := range Functions {
		_, fn := functionResource(t, s.json["VoiceOps-us"], f.Name)
		all = append(all, roleGrants(s.json["VoiceOps-us"], getAttTarget(props(fn)["Role"]))...)
	}
	for _, action := range []string{"dynamodb:PutItem", "dynamodb:Query", "sqs:SendMessage", "secretsmanager:GetSecretValue"} {
		if !slices.ContainsFunc(all, func(g grant) bool { return g.action == action }) {
			t.Errorf("no policy allows %s", action)
		}
	}
}

// strings1 returns an IAM Action or Resource as a list of strings; values
// that are CloudFormation functions are skipped.
func strings1(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func TestDeliveryQueueAndDeadLetterQueue(t *testing.T) {
	if deliveryVisibilityTimeout < 6*DispatcherTimeout {
		t.Fatalf("visibility timeout %s < 6 × dispatcher timeout %s", deliveryVisibilityTimeout, DispatcherTimeout)
	}
	// The dialer gives a call up on the outbound queue's last receive.
	if maxReceiveCount != dialer.DefaultMaxReceives {
		t.Fatalf("maxReceiveCount %d, dialer.DefaultMaxReceives %d", maxReceiveCount, dialer.DefaultMaxReceives)
	}
	for _, r := range Regions {
		tmpl := defaultSynth(t).templates["VoiceOps-"+r.Name]
		check(t, r.Name+" queues", func() {
			// Delivery and outbound, each with its DLQ, and the evaluator's: the
			// stream's failure destination, the shard queue and its DLQ.
			tmpl.ResourceCountIs(jsii.String("AWS::SQS::Queue"), jsii.Number(2+2+3))
			tmpl.HasResourceProperties(jsii.String("AWS::SQS::Queue"), obj{
				"VisibilityTimeout":    int(outboundVisibilityTimeout.Seconds()),
				"RedrivePolicy":        obj{"maxReceiveCount": 5, "deadLetterTargetArn": assertions.Match_AnyValue()},
				"SqsManagedSseEnabled": true,
			})
			tmpl.HasResourceProperties(jsii.String("AWS::SQS::Queue"), obj{
				"VisibilityTimeout":    int(deliveryVisibilityTimeout.Seconds()),
				"RedrivePolicy":        obj{"maxReceiveCount": 5, "deadLetterTargetArn": assertions.Match_AnyValue()},
				"SqsManagedSseEnabled": true,
			})
			tmpl.HasResourceProperties(jsii.String("AWS::SQS::Queue"), obj{
				"MessageRetentionPeriod": 14 * 24 * 3600,
				"SqsManagedSseEnabled":   true,
				"RedrivePolicy":          assertions.Match_Absent(),
			})
			tmpl.ResourceCountIs(jsii.String("AWS::SQS::QueuePolicy"), jsii.Number(2+2+3)) // TLS only, on each
		})
	}
}

func TestHTTPAPIsRoutesAndThrottling(t *testing.T) {
	routes := 0
	for _, f := range Functions {
		routes += len(f.Routes)
	}
	hosts := servedHosts(Functions)
	if !slices.Contains(hosts, StudioHost) {
		t.Fatalf("served hosts %v lack the studio host", hosts)
	}
	for _, r := range Regions {
		tmpl := defaultSynth(t).templates["VoiceOps-"+r.Name]
		check(t, r.Name+" APIs", func() {
			tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Api"), jsii.Number(len(hosts)))
			for _, h := range hosts {
				tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), obj{
					"Name": "voiceops-" + r.Name + "-" + string(h), "ProtocolType": "HTTP",
				})
			}
			tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Route"), jsii.Number(routes+len(hosts))) // and each $default
			tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Stage"), jsii.Number(len(hosts)))
			tmpl.AllResourcesProperties(jsii.String("AWS::ApiGatewayV2::Stage"), objectLike(obj{
				"StageName":  "$default",
				"AutoDeploy": true,
				"DefaultRouteSettings": obj{
					"ThrottlingRateLimit":  defaultRateLimit,
					"ThrottlingBurstLimit": defaultBurstLimit,
				},
			}))
			tmpl.AllResourcesProperties(jsii.String("AWS::ApiGatewayV2::Integration"), objectLike(obj{
				"IntegrationType": "AWS_PROXY", "PayloadFormatVersion": "2.0",
			}))
			tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::DomainName"), jsii.Number(0))
		})
		// The ceiling of the costly routes, under the stage's.
		for _, f := range Functions {
			if f.Throttle == nil {
				continue
			}
			if f.Throttle.RateLimit >= defaultRateLimit {
				t.Errorf("%s: route ceiling %v is not under the stage's %v", f.Name, f.Throttle.RateLimit, defaultRateLimit)
			}
			for _, rt := range f.Routes {
				check(t, fmt.Sprintf("%s route ceiling %s %s", r.Name, rt.Method, rt.Path), func() {
					tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), objectLike(obj{
						"RouteSettings": objectLike(obj{rt.Method + " " + rt.Path: obj{
							"ThrottlingRateLimit": f.Throttle.RateLimit, "ThrottlingBurstLimit": f.Throttle.BurstLimit,
						}}),
					}))
				})
			}
		}
		for _, f := range Functions {
			for _, rt := range f.Routes {
				check(t, fmt.Sprintf("%s route %s %s", r.Name, rt.Method, rt.Path), func() {
					tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), obj{
						"RouteKey": rt.Method + " " + rt.Path,
						"Target":   assertions.Match_AnyValue(),
					})
				})
			}
		}
	}
}

func TestAlarms(t *testing.T) {
	for _, r := range Regions {
		tmpl := defaultSynth(t).templates["VoiceOps-"+r.Name]
		scheduled, evaluator := 0, 0
		for _, f := range Functions {
			if f.Every != 0 {
				scheduled++
			}
			if f.MetricsStream {
				evaluator += 2 // the failure destination's, the iterator age
			}
			if f.ShardFanout {
				evaluator += 3 // the shard DLQ's, the shard queue's age, a missing schedule
			}
		}
		// The DLQs of the delivery and outbound queues, the age of those
		// queues, and of the pending events (repair, dispatch).
		const queues = 2 + 2 + 2
		check(t, r.Name+" alarms", func() {
			tmpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), jsii.Number(queues+2*len(Functions)+scheduled+evaluator+ObservabilityAlarmCount(len(servedHosts(Functions)))))
			// A dead letter on either DLQ alarms.
			for _, id := range []string{"DeliveryDLQNotEmpty", "OutboundDLQNotEmpty"} {
				tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj{
					"AlarmName":          "voiceops-" + r.Name + "-" + id,
					"Namespace":          "AWS/SQS",
					"MetricName":         "ApproximateNumberOfMessagesVisible",
					"ComparisonOperator": "GreaterThanThreshold",
					"Threshold":          0,
				})
			}
			// One error or throttle is normal: they alarm in 3 of 5 minutes.
			for _, metric := range []string{"Errors", "Throttles"} {
				tmpl.ResourcePropertiesCountIs(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{
					"Namespace": "AWS/Lambda", "MetricName": metric, "ComparisonOperator": "GreaterThanThreshold",
					"Statistic": "Sum", "Period": 60, "EvaluationPeriods": 5, "DatapointsToAlarm": 3,
				}), jsii.Number(len(Functions)))
			}
			for _, tb := range tables.All {
				tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{
					"AlarmName": "voiceops-" + r.Name + "-DynamoDBThrottles" + constructID(tb.ID), "EvaluationPeriods": 5, "DatapointsToAlarm": 3,
				}))
			}
		})
	}
}

func TestOutputs(t *testing.T) {
	// Output keys are chosen names (users read them after cdk deploy),
	// not generated logical IDs.
	want := []string{"DeliveryQueueUrl", "DeliveryDLQUrl", "InternalKeySecretArn", "OutboundDLQUrl", "TwilioSecretArn"}
	for _, h := range servedHosts(Functions) {
		want = append(want, constructID(string(h))+"ApiUrl")
	}
	for _, tbl := range tables.All {
		want = append(want, constructID(tbl.ID)+"TableName")
	}
	for _, r := range Regions {
		tmpl := defaultSynth(t).templates["VoiceOps-"+r.Name]
		for _, key := range want {
			check(t, r.Name+" output "+key, func() {
				tmpl.HasOutput(jsii.String(key), obj{"Value": assertions.Match_AnyValue()})
			})
		}
	}
	check(t, "global output", func() {
		defaultSynth(t).templates["VoiceOps-global"].HasOutput(jsii.String("GlobalApiUrl"), obj{"Value": assertions.Match_AnyValue()})
	})
}

func TestInternalKeyIsGeneratedNeverInTheTemplate(t *testing.T) {
	for _, r := range Regions {
		name := "VoiceOps-" + r.Name
		tmpl := defaultSynth(t).templates[name]
		check(t, name+" secret", func() {
			tmpl.ResourceCountIs(jsii.String("AWS::SecretsManager::Secret"), jsii.Number(2))
			tmpl.HasResourceProperties(jsii.String("AWS::SecretsManager::Secret"), obj{
				"GenerateSecretString": objectLike(obj{"PasswordLength": 48}),
				"SecretString":         assertions.Match_Absent(),
			})
			// The Twilio accounts: a generated first value, never one in the template.
			tmpl.HasResourceProperties(jsii.String("AWS::SecretsManager::Secret"), obj{
				"Name":                 "voiceops-" + r.Name + "/twilio-accounts",
				"GenerateSecretString": objectLike(obj{"SecretStringTemplate": "{}", "GenerateStringKey": "_generated"}),
				"SecretString":         assertions.Match_Absent(),
			})
		})
		raw, _ := json.Marshal(defaultSynth(t).json[name])
		if strings.Contains(string(raw), `"SecretString"`) {
			t.Errorf("%s: template holds a SecretString", name)
		}
	}
}

func TestCustomDomains(t *testing.T) {
	s := mustSynth(t, map[string]any{
		"region":         "all",
		"studioDomain":   "studio.{region}.example.com",
		"baseDomain.eu":  "api.euw-1.example.com",
		"certificateArn": "arn:aws:acm:eu-west-1:123456789012:certificate/abc",
	}, withBaseHost())
	tmpl := s.templates["VoiceOps-eu"]
	check(t, "domains", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::DomainName"), jsii.Number(2))
		tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::ApiMapping"), jsii.Number(2))
		for _, d := range []string{"studio.eu.example.com", "api.euw-1.example.com"} {
			tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::DomainName"), obj{
				"DomainName": d,
				"DomainNameConfigurations": arrayWith(objectLike(obj{
					"CertificateArn": "arn:aws:acm:eu-west-1:123456789012:certificate/abc",
				})),
			})
		}
	})
	msg := s.templates["VoiceOps-global"]
	check(t, "global message names the regional hosts", func() {
		msg.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{
			"Environment": obj{"Variables": obj{"MESSAGE": assertions.Match_StringLikeRegexp(jsii.String(
				`^use a regional address: .*https://studio\.us\.example\.com.*https://api\.euw-1\.example\.com`))}},
		})
	})

	if _, err := trySynth(t, map[string]any{"region": "us", "studioDomain": "studio.example.com"}, Functions); err == nil ||
		!strings.Contains(err.Error(), "certificateArn") {
		t.Errorf("domain without certificate: err = %v, want one naming certificateArn", err)
	}
	if !slices.Contains(servedHosts(Functions), BaseHost) {
		_, err := trySynth(t, map[string]any{"region": "us", "baseDomain": "api.example.com", "certificateArn": "arn:x"}, Functions)
		if err == nil || !strings.Contains(err.Error(), "no function serves the base host") {
			t.Errorf("domain of an unserved host: err = %v", err)
		}
	}
}

// withBaseHost is Functions plus a test function on the base host, for
// tests that need both hosts before the base-host functions exist.
func withBaseHost() []Function {
	fns := append([]Function{}, Functions...)
	if slices.Contains(servedHosts(fns), BaseHost) {
		return fns
	}
	for _, f := range testFunctions {
		if slices.ContainsFunc(f.Routes, func(r Route) bool { return r.Host == BaseHost }) {
			return append(fns, f)
		}
	}
	panic("no test function on the base host")
}

func TestGlobalStackAnswers421(t *testing.T) {
	tmpl := defaultSynth(t).templates["VoiceOps-global"]
	check(t, "global stack", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::Lambda::Function"), jsii.Number(1))
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{
			"Code":          objectLike(obj{"S3Key": assertions.Match_StringLikeRegexp(jsii.String(`^[0-9a-f]{64}\.zip$`))}),
			"Runtime":       "provided.al2023",
			"Architectures": []any{"arm64"},
			"Handler":       "bootstrap",
			"Environment": obj{"Variables": obj{
				"MESSAGE": assertions.Match_StringLikeRegexp(jsii.String("^use a regional address: ")),
			}},
			"Tags": arrayWith(obj{"Key": FunctionTag, "Value": MisdirectedFunction}),
		})
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), obj{"RouteKey": "$default"})
		tmpl.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(0))
		tmpl.ResourceCountIs(jsii.String("AWS::SecretsManager::Secret"), jsii.Number(0))
	})
}

// TestEveryFunctionIsGoOnArm: the templates hold only Go functions on
// provided.al2023 and arm64 (no inline code, no other runtime, including any
// function a CDK construct might add behind our back).
func TestEveryFunctionIsGoOnArm(t *testing.T) {
	s := defaultSynth(t)
	for name, tmpl := range s.templates {
		check(t, name, func() {
			tmpl.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), objectLike(obj{
				"Runtime":       "provided.al2023",
				"Architectures": []any{"arm64"},
				"Handler":       "bootstrap",
				"Code":          obj{"S3Bucket": assertions.Match_AnyValue(), "S3Key": assertions.Match_AnyValue()},
			}))
		})
		if n := len(resources(s.json[name], "AWS::Lambda::Function")); n == 0 {
			t.Errorf("%s has no function", name)
		}
	}
}

// TestFunctionsDependOnTheirPoliciesNotTheirRoles: each function is created
// after its policies (DependsOn), and its role is not repeated in DependsOn,
// since the Role property's Fn::GetAtt already orders them (cfn-lint W3005).
func TestFunctionsDependOnTheirPoliciesNotTheirRoles(t *testing.T) {
	s := defaultSynth(t)
	for name, tmpl := range s.json {
		all, _ := tmpl["Resources"].(map[string]any)
		for id, r := range all {
			res, _ := r.(map[string]any)
			if res["Type"] != "AWS::Lambda::Function" {
				continue
			}
			role := getAttTarget(props(res)["Role"])
			if role == "" {
				t.Errorf("%s %s: Role is not a Fn::GetAtt: %v", name, id, props(res)["Role"])
				continue
			}
			dependsOn := strings1(res["DependsOn"])
			if slices.Contains(dependsOn, role) {
				t.Errorf("%s %s: DependsOn %v repeats its role %s", name, id, dependsOn, role)
			}
			// Every policy of the role is in DependsOn.
			for pid, p := range all {
				pol, _ := p.(map[string]any)
				if pol["Type"] != "AWS::IAM::Policy" {
					continue
				}
				raw, _ := json.Marshal(props(pol)["Roles"])
				doc, _ := json.Marshal(props(pol)["PolicyDocument"])
				// Except the policy naming the function itself, which can
				// only follow it (until it does, a step's handoff is
				// refused and the step runs in its callback).
				self := strings.Contains(string(doc), `{"Fn::GetAtt":["`+id+`","Arn"]}`)
				if strings.Contains(string(raw), `{"Ref":"`+role+`"}`) && !slices.Contains(dependsOn, pid) && !self {
					t.Errorf("%s %s: DependsOn %v lacks the policy %s of its role", name, id, dependsOn, pid)
				}
			}
			if name != "VoiceOps-global" && len(dependsOn) == 0 {
				t.Errorf("%s %s: no DependsOn: a regional function's role has a policy", name, id)
			}
		}
	}
}

// getAttTarget returns the logical ID of {"Fn::GetAtt": [id, attr]}, or "".
func getAttTarget(v any) string {
	m, _ := v.(map[string]any)
	ga, _ := m["Fn::GetAtt"].([]any)
	if len(ga) != 2 {
		return ""
	}
	id, _ := ga[0].(string)
	return id
}

// TestOnlyFunctionsThatReadTheInternalKeyGetIt: the internal key's secret
// is granted, and named in INTERNAL_KEY_PARAMETER, to the functions marked
// ReadsInternalKey alone; no other function's role has any Secrets Manager
// permission on it.
func TestOnlyFunctionsThatReadTheInternalKeyGetIt(t *testing.T) {
	onlyReadersGetTheSecret(t, "/internal-metric-key", lambdamain.InternalKeyEnv, func(f Function) bool { return f.ReadsInternalKey })
}

// TestOnlyFunctionsThatReadTwilioGetIt: the dialer and the calls function
// (Twilio's callbacks) read the Twilio accounts' secret, through Grant; no
// other function may.
func TestOnlyFunctionsThatReadTwilioGetIt(t *testing.T) {
	var readers []string
	for _, f := range Functions {
		if f.ReadsTwilio {
			readers = append(readers, f.Name)
		}
	}
	slices.Sort(readers)
	if !slices.Equal(readers, []string{"calls", "dialer"}) {
		t.Errorf("Twilio readers %v, want calls and dialer", readers)
	}
	onlyReadersGetTheSecret(t, "/twilio-accounts", lambdamain.TwilioSecretEnv, func(f Function) bool { return f.ReadsTwilio })
}

// onlyReadersGetTheSecret checks, in every regional stack, that exactly the
// functions reads says have the secret whose name ends in suffix in their
// environment (envVar) and GetSecretValue on it.
func onlyReadersGetTheSecret(t *testing.T, suffix, envVar string, reads func(Function) bool) {
	t.Helper()
	n := 0
	for _, f := range Functions {
		if reads(f) {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no function reads the secret *%s", suffix)
	}
	for _, r := range Regions {
		name := "VoiceOps-" + r.Name
		tmpl := defaultSynth(t).json[name]
		all, _ := tmpl["Resources"].(map[string]any)
		var secret string
		for id, res := range all {
			res := res.(map[string]any)
			if sn, _ := props(res)["Name"].(string); res["Type"] == "AWS::SecretsManager::Secret" && strings.HasSuffix(sn, suffix) {
				secret = id
			}
		}
		if secret == "" {
			t.Fatalf("%s: no secret *%s", name, suffix)
		}
		for _, f := range Functions {
			id, fn := functionResource(t, tmpl, f.Name)
			environment, _ := props(fn)["Environment"].(map[string]any)
			vars, _ := environment["Variables"].(map[string]any)
			_, hasVar := vars[envVar]
			raw, _ := json.Marshal(vars)
			if strings.Contains(string(raw), secret) && !reads(f) {
				t.Errorf("%s %s: environment names the secret: %s", name, f.Name, raw)
			}
			actions := secretActions(tmpl, getAttTarget(props(fn)["Role"]), secret)
			switch {
			case reads(f) && (!hasVar || !slices.Contains(actions, "secretsmanager:GetSecretValue")):
				t.Errorf("%s %s (%s) reads *%s: env %v, actions on the secret %v", name, f.Name, id, suffix, hasVar, actions)
			case !reads(f) && (hasVar || len(actions) > 0):
				t.Errorf("%s %s (%s) does not read *%s, yet has %s=%v and actions %v on it",
					name, f.Name, id, suffix, envVar, hasVar, actions)
			}
		}
	}
}

// functionResource returns the logical ID and resource of a function, by its
// voiceops-function tag.
func functionResource(tb testing.TB, tmpl map[string]any, fn string) (string, map[string]any) {
	tb.Helper()
	all, _ := tmpl["Resources"].(map[string]any)
	for id, r := range all {
		res, _ := r.(map[string]any)
		if res["Type"] != "AWS::Lambda::Function" {
			continue
		}
		tags, _ := props(res)["Tags"].([]any)
		for _, tag := range tags {
			if m, _ := tag.(map[string]any); m["Key"] == FunctionTag && m["Value"] == fn {
				return id, res
			}
		}
	}
	tb.Fatalf("no function tagged %s=%s", FunctionTag, fn)
	return "", nil
}

// secretActions lists the actions of every Allow statement, in the policies
// attached to role, whose resources reference the secret secretID, or are a
// wildcard that could match it.
func secretActions(tmpl map[string]any, role, secretID string) []string {
	var out []string
	for _, pol := range resources(tmpl, "AWS::IAM::Policy") {
		roles, _ := json.Marshal(props(pol)["Roles"])
		if !strings.Contains(string(roles), `{"Ref":"`+role+`"}`) {
			continue
		}
		doc, _ := props(pol)["PolicyDocument"].(map[string]any)
		stmts, _ := doc["Statement"].([]any)
		for _, st := range stmts {
			st := st.(map[string]any)
			if st["Effect"] != "Allow" {
				continue
			}
			res, _ := json.Marshal(st["Resource"])
			secretish := strings.Contains(string(res), `"`+secretID+`"`) || strings.Contains(string(res), `"*"`) ||
				strings.Contains(string(res), ":secret:")
			for _, a := range strings1(st["Action"]) {
				if secretish && strings.HasPrefix(a, "secretsmanager:") {
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// TestRequestGuardsGrants: every function with public routes may update
// its rate-limit buckets in the requests table, and put Idempotency-Key
// records when it serves create-like routes (every one but
// conversations), never read them, and read the
// config table (the per-account override); the functions without public
// routes have no access to the requests table at all.
func TestRequestGuardsGrants(t *testing.T) {
	for _, r := range Regions {
		name := "VoiceOps-" + r.Name
		tmpl := defaultSynth(t).json[name]
		var table string
		for id, res := range tmpl["Resources"].(map[string]any) {
			res := res.(map[string]any)
			if res["Type"] == "AWS::DynamoDB::Table" && props(res)["TableName"] == tables.PhysicalName("voiceops-"+r.Name, tables.Requests) {
				table = id
			}
		}
		if table == "" {
			t.Fatalf("%s: no requests table", name)
		}
		for _, f := range Functions {
			_, fn := functionResource(t, tmpl, f.Name)
			actions := tableActions(tmpl, getAttTarget(props(fn)["Role"]), table)
			public := slices.ContainsFunc(f.Routes, func(rt Route) bool { return !strings.HasPrefix(rt.Path, "/internal/") })
			// The rate limit's UpdateItem for every public function, the
			// Idempotency-Key's PutItem for those with create-like routes;
			// no read (a refused put returns the record).
			want := map[string]bool{"dynamodb:UpdateItem": public, "dynamodb:PutItem": public && f.Name != "conversations", "dynamodb:GetItem": false}
			for a, granted := range want {
				if granted != slices.Contains(actions, a) {
					t.Errorf("%s %s (public routes: %v): %s on the requests table: %v", name, f.Name, public, a, actions)
				}
			}
			if !public && len(actions) > 0 {
				t.Errorf("%s %s has no public route, yet actions %v on the requests table", name, f.Name, actions)
			}
		}
	}
}

// tableActions lists the DynamoDB actions the role's policies allow on the
// table with logical ID tableID.
func tableActions(tmpl map[string]any, role, tableID string) []string {
	var out []string
	for _, pol := range resources(tmpl, "AWS::IAM::Policy") {
		roles, _ := json.Marshal(props(pol)["Roles"])
		if !strings.Contains(string(roles), `{"Ref":"`+role+`"}`) {
			continue
		}
		doc, _ := props(pol)["PolicyDocument"].(map[string]any)
		for _, st := range doc["Statement"].([]any) {
			st := st.(map[string]any)
			res, _ := json.Marshal(st["Resource"])
			if st["Effect"] != "Allow" || !strings.Contains(string(res), `"`+tableID+`"`) {
				continue
			}
			for _, a := range strings1(st["Action"]) {
				if strings.HasPrefix(a, "dynamodb:") {
					out = append(out, a)
				}
			}
		}
	}
	return out
}
