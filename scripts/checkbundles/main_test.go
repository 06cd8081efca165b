package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// binaryKind is what a test bootstrap holds.
type binaryKind int

const (
	arm64Static binaryKind = iota
	arm64Dynamic
	amd64Static
	shellScript
	noBootstrap
)

// fakeELF returns the headers of a 64-bit little-endian ELF executable for
// machine, with a PT_INTERP program header when dynamic: all that
// debug/elf reads.
func fakeELF(machine elf.Machine, dynamic bool) []byte {
	var hdr elf.Header64
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	hdr.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	hdr.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	hdr.Type = uint16(elf.ET_EXEC)
	hdr.Machine = uint16(machine)
	hdr.Version = uint32(elf.EV_CURRENT)
	hdr.Ehsize = 64
	hdr.Phentsize = 56
	var progs []elf.Prog64
	if dynamic {
		progs = append(progs, elf.Prog64{Type: uint32(elf.PT_INTERP), Off: 64 + 56, Filesz: 1, Memsz: 1})
		hdr.Phoff = 64
		hdr.Phnum = 1
	}
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, hdr)
	for _, p := range progs {
		_ = binary.Write(&b, binary.LittleEndian, p)
	}
	b.WriteByte(0)
	return b.Bytes()
}

// fn is one function of a test cloud assembly.
type fn struct {
	name string
	kind binaryKind
	size int64 // the bootstrap's size (sparse padding)
}

// writeAssembly writes a cloud assembly laid out as CDK does: a template
// per stack whose functions point at S3 keys, an assets manifest mapping
// them to asset.<hash> directories, and a bootstrap in each.
func writeAssembly(t *testing.T, stacks map[string][]fn) string {
	t.Helper()
	dir := t.TempDir()
	for stack, fns := range stacks {
		resources := map[string]any{}
		files := map[string]any{}
		for i, f := range fns {
			hash := fmt.Sprintf("%064x", len(f.name)*1000+int(f.kind)*100+int(f.size%97)+i)
			resources[fmt.Sprintf("Fn%d", i)] = map[string]any{
				"Type": "AWS::Lambda::Function",
				"Properties": map[string]any{
					"Code": map[string]any{"S3Bucket": "b", "S3Key": hash + ".zip"},
					"Tags": []any{map[string]any{"Key": "project", "Value": "voiceops"}, map[string]any{"Key": functionTag, "Value": f.name}},
				},
			}
			files[hash] = map[string]any{
				"source":       map[string]any{"path": "asset." + hash, "packaging": "zip"},
				"destinations": map[string]any{"d": map[string]any{"bucketName": "b", "objectKey": hash + ".zip"}},
			}
			asset := filepath.Join(dir, "asset."+hash)
			if err := os.MkdirAll(asset, 0o755); err != nil {
				t.Fatal(err)
			}
			var content []byte
			switch f.kind {
			case arm64Static:
				content = fakeELF(elf.EM_AARCH64, false)
			case arm64Dynamic:
				content = fakeELF(elf.EM_AARCH64, true)
			case amd64Static:
				content = fakeELF(elf.EM_X86_64, false)
			case shellScript:
				content = []byte("#!/bin/sh\n")
			case noBootstrap:
				continue
			}
			path := filepath.Join(asset, "bootstrap")
			if err := os.WriteFile(path, content, 0o755); err != nil {
				t.Fatal(err)
			}
			if f.size > int64(len(content)) {
				if err := os.Truncate(path, f.size); err != nil {
					t.Fatal(err)
				}
			}
		}
		writeJSON(t, filepath.Join(dir, stack+".template.json"), map[string]any{"Resources": resources})
		writeJSON(t, filepath.Join(dir, stack+".assets.json"), map[string]any{"version": "53.0.0", "files": files})
	}
	return dir
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheck(t *testing.T) {
	const small = 6 * mib
	defaults := config{MaxMiB: 10, Limits: limits{"calls": 16}, Mode: "fail"}
	warn := defaults
	warn.Mode = "warn"
	for _, tc := range []struct {
		name    string
		stacks  map[string][]fn
		cfg     config
		wantErr string // "" for success
		wantOut []string
	}{
		{
			name: "hello-world sized bundles pass",
			stacks: map[string][]fn{
				"A": {{"alerts", arm64Static, small}, {"calls", arm64Static, small}},
				"B": {{"alerts", arm64Static, small}},
			},
			cfg:     defaults,
			wantOut: []string{"alerts", "calls", "2 bundles for 2 functions", "6.0 MiB"},
		},
		{
			name:    "over 10 MiB fails",
			stacks:  map[string][]fn{"A": {{"alerts", arm64Static, 11 * mib}, {"chat", arm64Static, small}}},
			cfg:     defaults,
			wantErr: "alerts is 11.0 MiB, over its 10 MiB limit",
		},
		{
			name:   "calls may reach 16 MiB",
			stacks: map[string][]fn{"A": {{"calls", arm64Static, 15 * mib}}},
			cfg:    defaults,
		},
		{
			name:    "calls over 16 MiB fails",
			stacks:  map[string][]fn{"A": {{"calls", arm64Static, 17 * mib}}},
			cfg:     defaults,
			wantErr: "calls is 17.0 MiB, over its 16 MiB limit",
		},
		{
			name:    "warn mode reports oversized bundles and passes",
			stacks:  map[string][]fn{"A": {{"alerts", arm64Static, 20 * mib}, {"calls", arm64Static, 21 * mib}}},
			cfg:     warn,
			wantOut: []string{"WARNING", "alerts is 20.0 MiB", "calls is 21.0 MiB, over its 16 MiB limit"},
		},
		{
			name:    "warn mode still fails a foreign binary",
			stacks:  map[string][]fn{"A": {{"alerts", amd64Static, small}}},
			cfg:     warn,
			wantErr: "not a 64-bit arm64 executable",
		},
		{
			name:    "dynamically linked",
			stacks:  map[string][]fn{"A": {{"alerts", arm64Dynamic, small}}},
			cfg:     defaults,
			wantErr: "dynamically linked",
		},
		{
			name:    "a script is not a bootstrap",
			stacks:  map[string][]fn{"A": {{"alerts", shellScript, 0}}},
			cfg:     defaults,
			wantErr: "not an ELF binary",
		},
		{
			name:    "missing bootstrap",
			stacks:  map[string][]fn{"A": {{"alerts", arm64Static, small}, {"chat", noBootstrap, 0}}},
			cfg:     warn,
			wantErr: "no bootstrap",
		},
		{
			name:    "no functions",
			stacks:  map[string][]fn{"A": {}},
			cfg:     defaults,
			wantErr: "no AWS::Lambda::Function",
		},
		{
			name:    "bad mode",
			stacks:  map[string][]fn{"A": {{"alerts", arm64Static, small}}},
			cfg:     config{MaxMiB: 10, Mode: "maybe"},
			wantErr: "want fail or warn",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeAssembly(t, tc.stacks)
			var out bytes.Buffer
			err := run(dir, tc.cfg, &out)
			t.Logf("report:\n%s", out.String())
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(out.String(), want) {
					t.Errorf("report lacks %q", want)
				}
			}
		})
	}
}

func TestUntaggedFunctionFails(t *testing.T) {
	dir := writeAssembly(t, map[string][]fn{"A": {{"alerts", arm64Static, 1000}}})
	writeJSON(t, filepath.Join(dir, "B.template.json"), map[string]any{"Resources": map[string]any{
		"Inline": map[string]any{"Type": "AWS::Lambda::Function", "Properties": map[string]any{"Code": map[string]any{"ZipFile": "x"}}},
	}})
	if err := run(dir, config{MaxMiB: 10, Mode: "fail"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no "+functionTag+" tag") {
		t.Errorf("err = %v", err)
	}
}

func TestNotAnAssembly(t *testing.T) {
	if err := run(t.TempDir(), config{MaxMiB: 10, Mode: "fail"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "cloud assembly") {
		t.Errorf("err = %v", err)
	}
}

func TestLimitsFlag(t *testing.T) {
	l := limits{}
	if err := l.Set("calls=16"); err != nil || l["calls"] != 16 {
		t.Errorf("calls=16: %v %v", err, l)
	}
	for _, bad := range []string{"calls", "=3", "calls=x", "calls=0", "calls=-1"} {
		if err := l.Set(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
