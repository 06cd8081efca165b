package cfn

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestResolve(t *testing.T) {
	v := NewValues("123456789012", "us-east-1", "VoiceOps-us")
	v.Set("Table", "voiceops-us-config", map[string]string{"Arn": "arn:aws:dynamodb:us-east-1:123456789012:table/voiceops-us-config"})
	v.Set("Queue", "http://moto/123456789012/q", map[string]string{"Arn": "arn:aws:sqs:us-east-1:123456789012:q"})
	var in any
	if err := json.Unmarshal([]byte(`{
		"a": {"Ref": "Queue"},
		"b": {"Fn::Join": ["", [{"Fn::GetAtt": ["Table", "Arn"]}, "/index/*"]]},
		"c": {"Fn::Sub": "arn:${AWS::Partition}:lambda:${AWS::Region}:*:function:x-${Table}"},
		"d": {"Fn::Select": [1, {"Fn::Split": ["/", {"Ref": "Queue"}]}]},
		"e": [{"Fn::GetAtt": "Queue.Arn"}, 3, true],
		"f": {"Fn::Sub": ["${X}-${Queue.Arn}", {"X": {"Ref": "AWS::AccountId"}}]}
	}`), &in); err != nil {
		t.Fatal(err)
	}
	got, err := v.Resolve(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a": "http://moto/123456789012/q",
		"b": "arn:aws:dynamodb:us-east-1:123456789012:table/voiceops-us-config/index/*",
		"c": "arn:aws:lambda:us-east-1:*:function:x-voiceops-us-config",
		"d": "",
		"e": []any{"arn:aws:sqs:us-east-1:123456789012:q", 3.0, true},
		"f": "123456789012-arn:aws:sqs:us-east-1:123456789012:q",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve =\n%v\nwant\n%v", got, want)
	}
	if _, err := v.Resolve(map[string]any{"Ref": "NotYet"}); !errors.Is(err, ErrUnresolved) {
		t.Errorf("an unknown Ref: %v, want ErrUnresolved", err)
	}
	if _, err := v.Resolve(map[string]any{"Fn::GetAtt": []any{"Table", "StreamArn"}}); err == nil || errors.Is(err, ErrUnresolved) {
		t.Errorf("an attribute the runner does not know: %v, want a plain error", err)
	}
	if _, err := v.Resolve(map[string]any{"Fn::If": []any{"c", 1, 2}}); err == nil {
		t.Error("Fn::If resolved")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("manifest.json", `{"artifacts":{"VoiceOps-us":{"type":"aws:cloudformation:stack","properties":{"templateFile":"VoiceOps-us.template.json"}}}}`)
	write("VoiceOps-us.template.json", `{"Resources":{"B":{"Type":"AWS::SQS::Queue"},"A":{"Type":"AWS::SQS::Queue","Metadata":{"voiceops:function":"x"}}}}`)
	tmpl, err := Load(dir, "VoiceOps-us")
	if err != nil {
		t.Fatal(err)
	}
	if got := tmpl.OfType("AWS::SQS::Queue"); !reflect.DeepEqual(got, []string{"A", "B"}) {
		t.Errorf("OfType = %v", got)
	}
	if _, err := Load(dir, "VoiceOps-uk"); err == nil {
		t.Error("a stack the assembly does not have loaded")
	}
}
