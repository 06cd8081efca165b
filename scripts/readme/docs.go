package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Documents is the reading order of the documents whose blocks run: the
// README, then the docs directory's index (docs/README.md), then the
// pages the index links, in the order it first links them, then any
// other page under docs/ by path, so that no sh block of docs/ escapes
// the run. Paths are relative to root. A page the index links but that
// does not exist is an error: a reader would meet a broken link.
func Documents(root, readme, docsDir string) ([]string, error) {
	docs := []string{readme}
	if docsDir == "" {
		return docs, nil
	}
	seen := map[string]bool{filepath.Clean(readme): true}
	add := func(p string) {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			docs = append(docs, p)
		}
	}
	index := filepath.Join(docsDir, "README.md")
	b, err := os.ReadFile(filepath.Join(root, index))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if err == nil {
		add(index)
	}
	for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
		target, _, _ := strings.Cut(m[1], "#")
		if target == "" || strings.Contains(target, "://") || !strings.HasSuffix(target, ".md") {
			continue
		}
		p := filepath.Join(docsDir, filepath.FromSlash(path.Clean(target)))
		if rel, err := filepath.Rel(docsDir, p); err != nil || strings.HasPrefix(rel, "..") {
			continue // a page outside docs/ (CONTRIBUTING.md, say) has no blocks of its own
		}
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			return nil, fmt.Errorf("%s links %s, which does not exist", index, target)
		}
		add(p)
	}
	var rest []string
	err = filepath.WalkDir(filepath.Join(root, docsDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == filepath.Join(root, docsDir) {
				return fs.SkipAll // no docs/ at all: the README alone
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			rest = append(rest, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(rest)
	for _, p := range rest {
		add(p)
	}
	return docs, nil
}

// ParseAll parses each document (paths relative to root) and returns
// their blocks in order, each naming its document.
func ParseAll(root string, docs []string) ([]Block, error) {
	var all []Block
	for _, d := range docs {
		b, err := os.ReadFile(filepath.Join(root, d))
		if err != nil {
			return nil, err
		}
		blocks, err := Parse(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		for i := range blocks {
			blocks[i].File = d
			for j := range blocks[i].Commands {
				blocks[i].Commands[j].File = d
			}
		}
		all = append(all, blocks...)
	}
	return all, nil
}
