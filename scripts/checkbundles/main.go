// Command checkbundles checks the Lambda bundles of a cloud assembly (the
// output directory of `cdk synth`): every AWS::Lambda::Function of every
// template has a `bootstrap` in its code asset, a static 64-bit linux/arm64
// ELF executable, no larger than its limit. It prints each function's
// bundle and size. scripts/synth-lint.sh runs it.
//
//	go run ./scripts/checkbundles [-max-mib 10] [-limit outbound=16] [-mode fail|warn] cdk.out
//
// A missing or foreign bootstrap always fails; an oversized one fails with
// -mode fail (the default) and is only reported with -mode warn. Functions
// are named by their voiceops-function tag (infra/functions.go).
package main

import (
	"debug/elf"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// functionTag names a function's directory under functions/ (infra.FunctionTag).
const functionTag = "voiceops-function"

const mib = 1 << 20

func main() {
	fs := flag.NewFlagSet("checkbundles", flag.ExitOnError)
	cfg := config{Limits: limits{}}
	fs.Float64Var(&cfg.MaxMiB, "max-mib", 10, "largest `size` of a bootstrap, in MiB")
	fs.Var(cfg.Limits, "limit", "`name=MiB`: another limit for one function (repeatable)")
	fs.StringVar(&cfg.Mode, "mode", "fail", "what an oversized bootstrap does: fail or warn")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: go run ./scripts/checkbundles [flags] CLOUD_ASSEMBLY_DIR

Checks every function's bootstrap in a cloud assembly (cdk synth's output):
present, a static linux/arm64 ELF, and at most -max-mib MiB (or its -limit);
prints the sizes. scripts/synth-lint.sh runs it after the synth.

Example:
  go run ./scripts/checkbundles -limit outbound=16 cdk.out

Flags:
`)
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])
	if fs.NArg() != 1 {
		fs.Usage()
		os.Exit(2)
	}
	if err := run(fs.Arg(0), cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "checkbundles:", err)
		os.Exit(1)
	}
}

type config struct {
	MaxMiB float64
	Limits limits // by function name
	Mode   string
}

// limits is the -limit flag: name=MiB, repeatable.
type limits map[string]float64

func (l limits) String() string {
	var parts []string
	for k, v := range l {
		parts = append(parts, fmt.Sprintf("%s=%g", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (l limits) Set(s string) error {
	name, size, ok := strings.Cut(s, "=")
	v, err := strconv.ParseFloat(size, 64)
	if !ok || name == "" || err != nil || v <= 0 {
		return fmt.Errorf("%q is not name=MiB", s)
	}
	l[name] = v
	return nil
}

// bundle is one function's code asset, as found in the templates.
type bundle struct {
	Function string
	Dir      string   // relative to the assembly
	Stacks   []string // the templates that use it
}

// run checks every bundle of the assembly in dir and writes a report to w.
func run(dir string, cfg config, w io.Writer) error {
	if cfg.Mode != "fail" && cfg.Mode != "warn" {
		return fmt.Errorf("mode %q: want fail or warn", cfg.Mode)
	}
	bundles, err := findBundles(dir)
	if err != nil {
		return err
	}
	var problems, oversized []string
	for _, b := range bundles {
		path := filepath.Join(dir, b.Dir, "bootstrap")
		limit := cfg.MaxMiB
		if l, ok := cfg.Limits[b.Function]; ok {
			limit = l
		}
		size, err := checkBootstrap(path)
		status := "ok"
		switch {
		case err != nil:
			status = "FAIL: " + err.Error()
			problems = append(problems, fmt.Sprintf("%s (%s): %v", b.Function, path, err))
		case float64(size) > limit*mib:
			status = fmt.Sprintf("over its %g MiB limit", limit)
			oversized = append(oversized, fmt.Sprintf("%s is %.1f MiB, over its %g MiB limit", b.Function, float64(size)/mib, limit))
		}
		fmt.Fprintf(w, "%-16s %6.1f MiB %10d bytes  %s/bootstrap  %s\n", b.Function, float64(size)/mib, size, b.Dir, status)
	}
	fmt.Fprintf(w, "%d bundles for %d functions, each a static linux/arm64 ELF unless reported\n", len(bundles), countFunctions(bundles))
	if len(oversized) > 0 {
		msg := fmt.Sprintf("%d bundles over their size limit (-mode %s):\n  %s", len(oversized), cfg.Mode, strings.Join(oversized, "\n  "))
		if cfg.Mode == "fail" {
			problems = append(problems, msg)
		} else {
			fmt.Fprintln(w, "WARNING:", msg)
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

func countFunctions(bs []bundle) int {
	names := map[string]bool{}
	for _, b := range bs {
		names[b.Function] = true
	}
	return len(names)
}

// findBundles reads every template of the assembly and returns the bundle
// of each function, once per function and asset.
func findBundles(dir string) ([]bundle, error) {
	templates, err := filepath.Glob(filepath.Join(dir, "*.template.json"))
	if err != nil {
		return nil, err
	}
	if len(templates) == 0 {
		return nil, fmt.Errorf("no *.template.json in %s: is it a cloud assembly (cdk synth -o)?", dir)
	}
	sources, err := assetSources(dir)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*bundle{}
	var errs []error
	for _, t := range templates {
		stack := strings.TrimSuffix(filepath.Base(t), ".template.json")
		var tmpl struct {
			Resources map[string]struct {
				Type       string
				Properties json.RawMessage
			}
		}
		raw, err := os.ReadFile(t)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &tmpl); err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		for id, res := range tmpl.Resources {
			if res.Type != "AWS::Lambda::Function" {
				continue
			}
			var r struct {
				Properties struct {
					Code struct {
						S3Key any
					}
					Tags []struct{ Key, Value string }
				}
			}
			if err := json.Unmarshal(res.Properties, &r.Properties); err != nil {
				return nil, fmt.Errorf("%s %s: %w", t, id, err)
			}
			name := ""
			for _, tag := range r.Properties.Tags {
				if tag.Key == functionTag {
					name = tag.Value
				}
			}
			key, _ := r.Properties.Code.S3Key.(string)
			src, ok := sources[key]
			switch {
			case name == "":
				errs = append(errs, fmt.Errorf("%s %s: no %s tag", stack, id, functionTag))
				continue
			case !ok:
				errs = append(errs, fmt.Errorf("%s %s (%s): code %v is not a file asset of the assembly", stack, id, name, r.Properties.Code.S3Key))
				continue
			}
			k := name + "\x00" + src
			if byKey[k] == nil {
				byKey[k] = &bundle{Function: name, Dir: src}
			}
			byKey[k].Stacks = append(byKey[k].Stacks, stack)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(byKey) == 0 {
		return nil, fmt.Errorf("no AWS::Lambda::Function in the templates of %s", dir)
	}
	var out []bundle
	for _, b := range byKey {
		sort.Strings(b.Stacks)
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Function != out[j].Function {
			return out[i].Function < out[j].Function
		}
		return out[i].Dir < out[j].Dir
	})
	return out, nil
}

// assetSources maps each file asset's S3 object key to its directory in the
// assembly, from the *.assets.json manifests.
func assetSources(dir string) (map[string]string, error) {
	manifests, err := filepath.Glob(filepath.Join(dir, "*.assets.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, m := range manifests {
		var doc struct {
			Files map[string]struct {
				Source struct {
					Path      string
					Packaging string
				}
				Destinations map[string]struct {
					ObjectKey string
				}
			}
		}
		raw, err := os.ReadFile(m)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		for _, f := range doc.Files {
			if f.Source.Packaging != "zip" {
				continue // templates and single files
			}
			for _, d := range f.Destinations {
				out[d.ObjectKey] = f.Source.Path
			}
		}
	}
	return out, nil
}

// checkBootstrap returns the size of the bootstrap at path, or why it cannot
// run on provided.al2023 arm64.
func checkBootstrap(path string) (int64, error) {
	info, err := os.Stat(path)
	if err != nil {
		return 0, errors.New("no bootstrap")
	}
	if !info.Mode().IsRegular() {
		return 0, errors.New("bootstrap is not a regular file")
	}
	size := info.Size()
	if info.Mode().Perm()&0o111 == 0 {
		return size, fmt.Errorf("bootstrap is not executable (%v)", info.Mode())
	}
	f, err := elf.Open(path)
	if err != nil {
		return size, fmt.Errorf("bootstrap is not an ELF binary (%v)", err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_AARCH64 || f.Type != elf.ET_EXEC {
		return size, fmt.Errorf("bootstrap is %v %v %v, not a 64-bit arm64 executable", f.Class, f.Machine, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return size, errors.New("bootstrap is dynamically linked (build with CGO_ENABLED=0)")
		}
	}
	return size, nil
}
