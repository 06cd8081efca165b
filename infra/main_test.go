package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// testBundler builds every function, real and test-only, with fakeBuild
// from a stand-in module whose functions/<name>/main.go are empty: the
// assertions are about the templates, not the binaries. The real builds are
// checked by TestRealBuild* (bundle_test.go) and by scripts/synth-lint.sh,
// on every function of the cloud assembly.
var testBundler *Bundler

// fakeBuild writes a stand-in bootstrap that names the function, so that
// bundles differ by function as real ones do.
func fakeBuild(name, outDir string) error {
	return os.WriteFile(filepath.Join(outDir, "bootstrap"), []byte("#!/bin/sh\n# "+name+"\n"), 0o755)
}

func TestMain(m *testing.M) {
	os.Exit(func() int {
		defer jsii.Close()
		root, err := os.MkdirTemp("", "voiceops-functions-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(root)
		names := []string{MisdirectedFunction}
		for _, f := range append(append([]Function{}, Functions...), testFunctions...) {
			names = append(names, f.Name)
		}
		for _, name := range names {
			dir := filepath.Join(root, "functions", name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		testBundler = NewBundler(root, fakeBuild)
		return m.Run()
	}())
}

// synthesized is an app's stacks and their templates, by stack name.
type synthesized struct {
	stacks    map[string]awscdk.Stack
	templates map[string]assertions.Template
	json      map[string]map[string]any
}

// cdkJSONContext returns the context of ../cdk.json, so the tests synthesize
// with the same feature flags and defaults as the CDK CLI.
func cdkJSONContext(tb testing.TB) map[string]any {
	tb.Helper()
	raw, err := os.ReadFile("../cdk.json")
	if err != nil {
		tb.Fatal(err)
	}
	var doc struct {
		App     string         `json:"app"`
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		tb.Fatalf("cdk.json: %v", err)
	}
	if doc.App != "go run ./infra" {
		tb.Errorf("cdk.json app = %q, want go run ./infra", doc.App)
	}
	return doc.Context
}

// trySynth builds an app from cdk.json's context plus overrides and a
// function list, then synthesizes every stack.
func trySynth(tb testing.TB, overrides map[string]any, fns []Function) (*synthesized, error) {
	tb.Helper()
	return trySynthWith(tb, overrides, fns, testBundler, tb.TempDir())
}

// trySynthWith is trySynth with a bundler and the cloud assembly's directory.
func trySynthWith(tb testing.TB, overrides map[string]any, fns []Function, b *Bundler, outdir string) (*synthesized, error) {
	tb.Helper()
	ctx := cdkJSONContext(tb)
	for k, v := range overrides {
		ctx[k] = v
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(outdir)})
	stacks, err := build(app, fns, func(string) string { return "" }, b)
	if err != nil {
		return nil, err
	}
	s := &synthesized{
		stacks:    map[string]awscdk.Stack{},
		templates: map[string]assertions.Template{},
		json:      map[string]map[string]any{},
	}
	for _, st := range stacks {
		name := *st.StackName()
		s.stacks[name] = st
		s.templates[name] = assertions.Template_FromStack(st, nil)
		s.json[name] = *s.templates[name].ToJSON()
	}
	return s, nil
}

// mustSynth is trySynth that fails the test on error.
func mustSynth(tb testing.TB, overrides map[string]any, fns []Function) *synthesized {
	tb.Helper()
	s, err := trySynth(tb, overrides, fns)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

var (
	defaultOnce sync.Once
	defaultApp  *synthesized
	defaultErr  error
)

// defaultSynth is the app as `cdk synth` builds it from cdk.json (all
// regions), synthesized once for the whole test binary.
func defaultSynth(tb testing.TB) *synthesized {
	tb.Helper()
	defaultOnce.Do(func() {
		defaultErr = catch(func() { defaultApp, defaultErr = trySynth(tb, nil, Functions) })
	})
	if defaultErr != nil {
		tb.Fatal(defaultErr)
	}
	return defaultApp
}

// catch turns a panic of the jsii runtime (how a failed assertion or a
// synth error surfaces in Go) into an error.
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// check runs one assertion and reports its failure without stopping the test.
func check(tb testing.TB, what string, assertion func()) {
	tb.Helper()
	if err := catch(assertion); err != nil {
		tb.Errorf("%s: %v", what, err)
	}
}

// obj and arr shorten the matcher literals.
type obj = map[string]any

func arr(items ...any) *[]any { return &items }

func objectLike(m obj) assertions.Matcher { return assertions.Match_ObjectLike(&m) }

func arrayWith(items ...any) assertions.Matcher { return assertions.Match_ArrayWith(&items) }

// resources returns a template's resources of one type.
func resources(tmpl map[string]any, typ string) []map[string]any {
	var out []map[string]any
	all, _ := tmpl["Resources"].(map[string]any)
	for _, r := range all {
		res, _ := r.(map[string]any)
		if res["Type"] == typ {
			out = append(out, res)
		}
	}
	return out
}

// props returns a resource's Properties.
func props(res map[string]any) map[string]any {
	p, _ := res["Properties"].(map[string]any)
	return p
}

// regionalNames are the regional stack names.
func regionalNames() []string {
	var names []string
	for _, r := range Regions {
		names = append(names, "VoiceOps-"+r.Name)
	}
	return names
}
