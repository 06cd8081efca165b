package main

import (
	"debug/elf"
	"errors"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// realBundler builds this module's functions with the go command, as `cdk
// synth` does.
func realBundler(tb testing.TB) *Bundler {
	tb.Helper()
	root, err := moduleRoot(".")
	if err != nil {
		tb.Fatal(err)
	}
	return NewBundler(root, GoBuilder(root))
}

// assetOf returns the directory of a function's code asset in a cloud
// assembly: the asset's hash is the S3 key without .zip, and CDK stages it
// as asset.<hash>.
func assetOf(tb testing.TB, s *synthesized, outdir, stack string) (dir, key string) {
	tb.Helper()
	fns := resources(s.json[stack], "AWS::Lambda::Function")
	if len(fns) != 1 {
		tb.Fatalf("%s: %d functions, want 1", stack, len(fns))
	}
	code, _ := props(fns[0])["Code"].(map[string]any)
	key, _ = code["S3Key"].(string)
	if !strings.HasSuffix(key, ".zip") {
		tb.Fatalf("%s: Code %v has no S3Key <hash>.zip", stack, code)
	}
	return filepath.Join(outdir, "asset."+strings.TrimSuffix(key, ".zip")), key
}

// TestRealBuildOfTheGlobalFunction synthesizes VoiceOps-global with the real
// go build: its asset holds a static linux/arm64 bootstrap, and building
// again (another cloud assembly) gives the same asset hash, so unchanged
// code is not redeployed.
func TestRealBuildOfTheGlobalFunction(t *testing.T) {
	var keys []string
	for i := range 2 {
		outdir := t.TempDir()
		start := time.Now()
		s, err := trySynthWith(t, map[string]any{"region": "global"}, Functions, realBundler(t), outdir)
		if err != nil {
			t.Fatal(err)
		}
		dir, key := assetOf(t, s, outdir, "VoiceOps-global")
		keys = append(keys, key)
		bootstrap := filepath.Join(dir, "bootstrap")
		info, err := os.Stat(bootstrap)
		if err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
		if info.Mode().Perm()&0o111 == 0 {
			t.Errorf("%s is not executable: %v", bootstrap, info.Mode())
		}
		checkLambdaELF(t, bootstrap)
		t.Logf("build %d: %s bootstrap %d bytes (%.1f MiB), %s, in %s", i, MisdirectedFunction, info.Size(),
			float64(info.Size())/(1<<20), key, time.Since(start).Round(time.Millisecond))
		// It answers 421 and nothing else: a hello world's size.
		if info.Size() > 10<<20 {
			t.Errorf("%s bootstrap is %d bytes, over 10 MiB", MisdirectedFunction, info.Size())
		}
	}
	if keys[0] != keys[1] {
		t.Errorf("two builds of the same code gave different assets %s and %s: the build is not reproducible", keys[0], keys[1])
	}
}

// checkLambdaELF fails unless path is a static 64-bit arm64 ELF executable.
func checkLambdaELF(tb testing.TB, path string) {
	tb.Helper()
	f, err := elf.Open(path)
	if err != nil {
		tb.Fatalf("%s is not an ELF binary: %v", path, err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_AARCH64 || f.Type != elf.ET_EXEC {
		tb.Errorf("%s: %v %v %v, want a 64-bit arm64 executable", path, f.Class, f.Machine, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			tb.Errorf("%s is dynamically linked (CGO_ENABLED=0 builds static binaries)", path)
		}
	}
}

// TestBuildFailureIsAClearError: a function that does not compile fails
// the synth with an error naming the function and the compiler's message.
func TestBuildFailureIsAClearError(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/broken\n\ngo 1.22\n")
	write("functions/"+MisdirectedFunction+"/main.go", "package main\n\nfunc main() { notDefined() }\n")

	_, err := trySynthWith(t, map[string]any{"region": "global"}, Functions, NewBundler(root, GoBuilder(root)), t.TempDir())
	if err == nil {
		t.Fatal("synth of a function that does not compile succeeded")
	}
	for _, want := range []string{"building function " + MisdirectedFunction + " failed", "GOARCH=arm64", "undefined: notDefined"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to contain %q", err, want)
		}
	}
}

// TestBuilderErrorsComeBackFromTheStackConstructors: whatever the builder
// returns is the error of build(), unwrapped by jsii, for every stack kind.
func TestBuilderErrorsComeBackFromTheStackConstructors(t *testing.T) {
	boom := errors.New("boom: no Go toolchain")
	failing := NewBundler(testBundler.Root, func(name, dir string) error {
		if name == "intake" || name == MisdirectedFunction {
			return boom
		}
		return fakeBuild(name, dir)
	})
	for _, region := range []string{"us", "global"} {
		_, err := trySynthWith(t, map[string]any{"region": region}, Functions, failing, t.TempDir())
		if !errors.Is(err, boom) {
			t.Errorf("region %s: err = %v, want %v", region, err, boom)
		}
	}
}

// TestMissingFunctionDirectoryFails: an entry without functions/<name>/main.go
// fails before anything is built.
func TestMissingFunctionDirectoryFails(t *testing.T) {
	fns := append([]Function{}, Functions...)
	fns[0].Name, fns[0].Env = "no-such-function", lambdamain.Environments[fns[0].Name]
	_, err := trySynth(t, map[string]any{"region": "us"}, fns)
	want := filepath.Join(testBundler.Root, "functions", "no-such-function", "main.go")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to name %s", err, want)
	}
}

// TestEachFunctionIsBuiltOncePerApp: the regional stacks share each
// function's bundle (the same asset), so an app of every stack builds each
// function once.
func TestEachFunctionIsBuiltOncePerApp(t *testing.T) {
	var mu sync.Mutex
	builds := map[string]int{}
	counting := NewBundler(testBundler.Root, func(name, dir string) error {
		mu.Lock()
		builds[name]++
		mu.Unlock()
		return fakeBuild(name, dir)
	})
	if _, err := trySynthWith(t, map[string]any{"region": "all"}, Functions, counting, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if len(builds) != len(Functions)+1 {
		t.Errorf("built %v, want every function and %s", builds, MisdirectedFunction)
	}
	for name, n := range builds {
		if n != 1 {
			t.Errorf("%s built %d times, want once", name, n)
		}
	}
}

// TestBuildScriptUsesTheSameFlags keeps scripts/build.sh (a convenience)
// building exactly what synth builds.
func TestBuildScriptUsesTheSameFlags(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "scripts", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	script := string(raw)
	for _, want := range append(append([]string{}, goBuildEnv...), shellJoin(goBuildFlags)) {
		if !strings.Contains(script, want) {
			t.Errorf("scripts/build.sh lacks %q", want)
		}
	}
}
