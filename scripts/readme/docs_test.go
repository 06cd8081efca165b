package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTree writes files (path → content) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// The README, then the index, then the pages in the order the index
// links them (not by name), then the pages it does not link, by path.
func TestDocumentsAreInReadingOrder(t *testing.T) {
	root := writeTree(t, map[string]string{
		"README.md":             "# R\n",
		"CONTRIBUTING.md":       "# C\n",
		"docs/README.md":        "1. [Start](start.md)\n2. [Zeta](zeta.md#top), [again](start.md)\n3. [Alpha](alpha.md)\n[out](../CONTRIBUTING.md) [web](https://example.com/x.md) [pic](console/a.png)\n",
		"docs/start.md":         "# S\n",
		"docs/zeta.md":          "# Z\n",
		"docs/alpha.md":         "# A\n",
		"docs/beta.md":          "# B, linked by no one\n",
		"docs/runbooks/high.md": "# H\n",
		"docs/console/a.png":    "png",
	})
	docs, err := Documents(root, "README.md", "docs")
	if err != nil {
		t.Fatal(err)
	}
	want := "[README.md docs/README.md docs/start.md docs/zeta.md docs/alpha.md docs/beta.md docs/runbooks/high.md]"
	if fmt.Sprint(docs) != want {
		t.Errorf("order %v\nwant  %s", docs, want)
	}
	if docs, err := Documents(root, "README.md", ""); err != nil || fmt.Sprint(docs) != "[README.md]" {
		t.Errorf("-docs '': %v %v", docs, err)
	}
}

func TestDocumentsRefuseABrokenIndexLink(t *testing.T) {
	root := writeTree(t, map[string]string{
		"README.md":      "# R\n",
		"docs/README.md": "[Gone](gone.md)\n",
	})
	if _, err := Documents(root, "README.md", "docs"); err == nil || !strings.Contains(err.Error(), "gone.md") {
		t.Errorf("a link to a missing page: %v", err)
	}
}

// Without an index every page still runs, by path; without docs/ the
// README alone.
func TestDocumentsWithoutIndexOrDocs(t *testing.T) {
	root := writeTree(t, map[string]string{"README.md": "# R\n", "docs/b.md": "# B\n", "docs/a.md": "# A\n"})
	if docs, err := Documents(root, "README.md", "docs"); err != nil || fmt.Sprint(docs) != "[README.md docs/a.md docs/b.md]" {
		t.Errorf("no index: %v %v", docs, err)
	}
	root = writeTree(t, map[string]string{"README.md": "# R\n"})
	if docs, err := Documents(root, "README.md", "docs"); err != nil || fmt.Sprint(docs) != "[README.md]" {
		t.Errorf("no docs/: %v %v", docs, err)
	}
}

// Blocks of every document run in one session, in reading order, each
// command naming the page and line it came from; a page's parse error
// names the page.
func TestParseAllKeepsOrderAndNamesThePage(t *testing.T) {
	root := writeTree(t, map[string]string{
		"README.md":      "# R\n\n```sh\nA=1\n```\n",
		"docs/README.md": "[S](s.md)\n",
		"docs/s.md":      "# S\n\n<!-- readme: skip needs AWS -->\n```sh\naws s3 ls\n```\n\n```sh\necho $A   #> 1\n```\n",
	})
	docs, err := Documents(root, "README.md", "docs")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := ParseAll(root, docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 || blocks[0].File != "README.md" || blocks[2].File != "docs/s.md" || blocks[1].Skip == "" {
		t.Fatalf("blocks: %+v", blocks)
	}
	_, cmds := Script(blocks, nil)
	if len(cmds) != 2 || cmds[1].File != "docs/s.md" || cmds[1].Line != 9 || cmds[0].Text != "A=1" {
		t.Errorf("commands: %+v", cmds)
	}
	sum := Summary(docs, blocks, map[string]int{"docs/s.md": 1}, 3*time.Second)
	for _, want := range []string{
		"readme: README.md: 1 blocks run (1 commands, 0 outputs checked), 0 skipped\n",
		"readme: docs/README.md: no sh blocks\n",
		"readme: docs/s.md: 1 blocks run (1 commands, 1 outputs checked), 1 skipped\n",
		"readme: 3 documents: 2 blocks run (2 commands, 1 outputs checked), 1 skipped, in 3s\n",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}

	bad := writeTree(t, map[string]string{"README.md": "# R\n", "docs/x.md": "```sh\necho 'open\n```\n"})
	docs, _ = Documents(bad, "README.md", "docs")
	if _, err := ParseAll(bad, docs); err == nil || !strings.HasPrefix(err.Error(), "docs/x.md: ") {
		t.Errorf("a page's parse error: %v", err)
	}
}

// The whole runner over a README and a page: variables carry from the
// README to the page, and a wrong output is reported at the page's line.
func TestRunRunsTheDocsAfterTheREADME(t *testing.T) {
	root := writeTree(t, map[string]string{
		"README.md":      "# R\n\n```sh\nGREETING=hello\n```\n",
		"docs/README.md": "[P](p.md)\n",
		"docs/p.md":      "# P\n\n```sh\necho \"$GREETING\"   #> hello\n```\n",
	})
	var out strings.Builder
	if err := run([]string{"-readme", filepath.Join(root, "README.md")}, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "readme: docs/p.md: 1 blocks run (1 commands, 1 outputs checked), 0 skipped") {
		t.Errorf("summary:\n%s", out.String())
	}
	if err := os.WriteFile(filepath.Join(root, "docs/p.md"), []byte("# P\n\n```sh\necho \"$GREETING\"   #> bye\n```\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := run([]string{"-readme", filepath.Join(root, "README.md")}, &out, &out)
	if err == nil || !strings.HasPrefix(err.Error(), "docs/p.md:4: the output is not what the page shows") {
		t.Errorf("a wrong output on a page: %v", err)
	}
}
