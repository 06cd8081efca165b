package main

// The code of every function is Go for the provided.al2023 runtime on arm64:
// functions/<name> built into one static `bootstrap` binary.
//
// `cdk synth` and `cdk deploy` build it themselves, on this machine, with the
// Go toolchain (no Docker, no separate build step): each function's code is a
// CDK asset whose bundling is local (awscdk.ILocalBundling, implemented by
// goBundling below). Why bundling rather than running go build in main()
// before constructing the stacks:
//
//   - The CLI decides what to build: `cdk ls` and `cdk destroy` build
//     nothing, `cdk deploy --exclusively VoiceOps-us` only what that stack
//     needs; each function is built once per app, not once per stack.
//   - The asset is hashed from the bundle CDK staged (AssetHashType OUTPUT),
//     not from the sources: the builds are reproducible (-trimpath,
//     -buildvcs=false, CGO_ENABLED=0, the toolchain of go.mod), so code
//     that did not change gives the same bytes, the same S3 key and no
//     redeploy, while any change that reaches the binary (including one in
//     shared/ or go.sum) deploys.
//   - A failed build is a Go error returned by the stack constructors (see
//     newGoFunction), with the compiler's output.
//
// BundlingOptions require a Docker image; goBundling.TryBundle always builds
// (or fails), so CDK never falls back to it.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3assets"
	"github.com/aws/jsii-runtime-go"
)

// Builder builds the function functions/<name> into outDir/bootstrap.
type Builder func(name, outDir string) error

// goBuildEnv and goBuildFlags are how every function is built (scripts/build.sh
// uses the same; a test keeps the two in step).
var (
	goBuildEnv   = []string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0"}
	goBuildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-buildvcs=false", "-ldflags=-s -w"}
)

// GoBuilder builds with the go command in the module rooted at root. It
// reports each build on stderr (the CDK CLI shows it), since a first build
// of every function takes a few minutes.
func GoBuilder(root string) Builder {
	return func(name, outDir string) error {
		out := filepath.Join(outDir, "bootstrap")
		args := append(append([]string{"build"}, goBuildFlags...), "-o", out, "./functions/"+name)
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), goBuildEnv...)
		var output bytes.Buffer
		cmd.Stdout, cmd.Stderr = &output, &output
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building function %s failed: %s go %s (in %s): %v\n%s",
				name, strings.Join(goBuildEnv, " "), shellJoin(args), root, err, strings.TrimSpace(output.String()))
		}
		info, err := os.Stat(out)
		if err != nil {
			return fmt.Errorf("building function %s: %w", name, err)
		}
		fmt.Fprintf(os.Stderr, "infra: built functions/%s (%.1f MiB, %.1f s)\n",
			name, float64(info.Size())/(1<<20), time.Since(start).Seconds())
		return nil
	}
}

// shellJoin quotes the arguments that need it, for error messages.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " '\"") {
			a = "'" + a + "'"
		}
		quoted[i] = a
	}
	return strings.Join(quoted, " ")
}

// Bundler makes the code assets of the functions.
type Bundler struct {
	// Root is the Go module's root: each function is built from
	// Root/functions/<name>.
	Root  string
	Build Builder

	// bundlings holds one ILocalBundling per function, shared by every
	// stack of the app: CDK stages an asset once per app when its source
	// and bundling options are the same.
	bundlings map[string]*goBundling
}

// NewBundler returns a Bundler that builds the functions of root with build.
func NewBundler(root string, build Builder) *Bundler {
	return &Bundler{Root: root, Build: build, bundlings: map[string]*goBundling{}}
}

// check fails unless functions/<name> holds a main package to build.
func (b *Bundler) check(name string) error {
	main := filepath.Join(b.Root, "functions", name, "main.go")
	if info, err := os.Stat(main); err != nil || !info.Mode().IsRegular() {
		return fmt.Errorf("function %q: %s does not exist: every function is built from functions/<name>/main.go", name, main)
	}
	return nil
}

// code returns the function's code asset: functions/<name>, bundled by
// building it.
func (b *Bundler) code(name string) awslambda.Code {
	g, ok := b.bundlings[name]
	if !ok {
		g = &goBundling{name: name, build: b.Build}
		b.bundlings[name] = g
	}
	return awslambda.Code_FromAsset(jsii.String(filepath.Join(b.Root, "functions", name)), &awss3assets.AssetOptions{
		DisplayName:   jsii.String("function " + name),
		AssetHashType: awscdk.AssetHashType_OUTPUT,
		Bundling: &awscdk.BundlingOptions{
			Image: awscdk.DockerImage_FromRegistry(jsii.String("voiceops-functions-are-built-locally-not-in-docker")),
			Local: g,
		},
	})
}

// failure returns the build error of the function, if its last build failed.
func (b *Bundler) failure(name string) error {
	if g := b.bundlings[name]; g != nil {
		return g.err
	}
	return nil
}

// goBundling is the local bundling of one function: CDK calls TryBundle with
// an empty directory when it stages the asset.
type goBundling struct {
	name  string
	build Builder
	err   error // of the last build
}

var _ awscdk.ILocalBundling = (*goBundling)(nil)

// TryBundle builds the function into outputDir. It never returns false,
// which would make CDK try Docker. A failed build leaves outputDir empty:
// CDK then fails the asset ("Bundling did not produce any output"), the jsii
// call that creates the function panics, and newGoFunction returns g.err,
// the build's own error. (Panicking here would fail the asset too, but
// leaves the jsii runtime unable to shut down cleanly.)
func (g *goBundling) TryBundle(outputDir *string, _ *awscdk.BundlingOptions) *bool {
	if outputDir == nil || *outputDir == "" {
		g.err = fmt.Errorf("building function %s: no output directory", g.name)
		return jsii.Bool(true)
	}
	g.err = g.build(g.name, *outputDir)
	if g.err != nil {
		entries, _ := os.ReadDir(*outputDir)
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(*outputDir, e.Name())); err != nil {
				g.err = errors.Join(g.err, err)
			}
		}
	}
	return jsii.Bool(true)
}

// moduleRoot returns the directory of the go.mod enclosing dir: `go run
// ./infra` runs in the project's root, the tests in infra/.
func moduleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or above: run the CDK app from the project", dir)
		}
	}
}
