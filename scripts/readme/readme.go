package main

import (
	"fmt"
	"regexp"
	"strings"
)

// A Block is one fenced ```sh block of a document.
type Block struct {
	File     string // the document's path, as the runner names it
	Line     int    // of the opening fence, 1-based
	Heading  string // the section it is in
	Skip     string // why it is not run ("" when it runs)
	Commands []Command
}

// A Command is one shell command of a block (continuation lines and
// multi-line quotes included) and the output the README shows for it.
type Command struct {
	File   string // the document's path
	Line   int    // 1-based
	Text   string
	Expect []string // the "#> " lines, without the marker; nil: not checked
}

// skipMarker, on the line just before a fence (blank lines allowed
// between), keeps the block from being run: <!-- readme: skip REASON -->.
var skipMarker = regexp.MustCompile(`^<!--\s*readme:\s*skip\b\s*(.*?)\s*-->\s*$`)

// Parse returns the ```sh blocks of a Markdown document. Other fences
// (```, ```json, ```bash ...) are never run.
func Parse(doc string) ([]Block, error) {
	lines := strings.Split(doc, "\n")
	var blocks []Block
	heading, marker := "", ""
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t\r")
		switch {
		case strings.HasPrefix(l, "#"):
			heading, marker = strings.TrimSpace(strings.TrimLeft(l, "#")), ""
			continue
		case strings.HasPrefix(l, "```"):
			info := strings.TrimSpace(strings.TrimPrefix(l, "```"))
			start := i
			var body []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				body = append(body, strings.TrimRight(lines[i], "\r"))
			}
			if i == len(lines) {
				return nil, fmt.Errorf("line %d: a fence that is never closed", start+1)
			}
			if info != "sh" {
				if marker != "" {
					return nil, fmt.Errorf("line %d: a readme marker before a ```%s block (only ```sh blocks run)", start+1, info)
				}
				continue
			}
			cmds, err := splitCommands(body, start+2)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, Block{Line: start + 1, Heading: heading, Skip: marker, Commands: cmds})
			marker = ""
			continue
		}
		if m := skipMarker.FindStringSubmatch(l); m != nil {
			marker = m[1]
			if marker == "" {
				return nil, fmt.Errorf("line %d: say why a block is skipped: <!-- readme: skip REASON -->", i+1)
			}
		} else if strings.HasPrefix(l, "<!-- readme") {
			return nil, fmt.Errorf("line %d: unknown readme marker %q", i+1, l)
		} else if l != "" {
			marker = "" // a marker holds only for the fence right after it
		}
	}
	return blocks, nil
}

// splitCommands cuts a block's lines into commands: a command goes on
// while a line ends with a backslash, a pipe or &&/||, or a quote is open.
// Comment lines between commands belong to none, except "#> " lines, the
// output of the command just before them. A command may also end with an
// inline "#> OUTPUT" comment.
func splitCommands(lines []string, firstLine int) ([]Command, error) {
	var cmds []Command
	var cur *Command
	var q quoteState
	depth := 0 // of compound commands (while ... done, if ... fi) still open
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if cur == nil {
			if strings.HasPrefix(trimmed, "#>") {
				if len(cmds) == 0 {
					return nil, fmt.Errorf("line %d: expected output before any command", firstLine+i)
				}
				last := &cmds[len(cmds)-1]
				last.Expect = append(last.Expect, expectText(trimmed))
				continue
			}
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			cmds = append(cmds, Command{Line: firstLine + i})
			cur = &cmds[len(cmds)-1]
		} else {
			cur.Text += "\n"
		}
		cur.Text += l
		comment := q.scan(l)
		if comment >= 0 {
			if c := strings.TrimSpace(l[comment:]); strings.HasPrefix(c, "#>") {
				cur.Expect = append(cur.Expect, expectText(c))
			}
		}
		code := l
		if comment >= 0 {
			code = l[:comment]
		}
		code = strings.TrimSpace(code)
		depth += nesting(code)
		if q.closed() && depth <= 0 && !strings.HasSuffix(code, `\`) && !strings.HasSuffix(code, "|") &&
			!strings.HasSuffix(code, "&&") && !strings.HasSuffix(code, "||") {
			cur = nil
		}
	}
	if cur != nil && !q.closed() {
		return nil, fmt.Errorf("line %d: a quote that is never closed", cur.Line)
	}
	return cmds, nil
}

var separators = regexp.MustCompile(`[;&|()]`)

// nesting is how many compound commands a line opens (while, until, for,
// if, case, "{") less those it closes (done, fi, esac, "}"), counting the
// words outside quotes: a loop spanning lines is one command.
func nesting(code string) int {
	var q quoteState
	var plain strings.Builder
	for i := 0; i < len(code); i++ {
		was := q.in
		q.scan(code[i : i+1])
		if was == 0 && q.in == 0 {
			plain.WriteByte(code[i])
		} else {
			plain.WriteByte(' ')
		}
	}
	n := 0
	// Only a word in command position opens or closes: the first of each
	// part between ; & | ( ), so "echo for" opens nothing.
	for _, part := range separators.Split(plain.String(), -1) {
		f := strings.Fields(part)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "while", "until", "for", "if", "case", "{":
			n++
		case "done", "fi", "esac", "}":
			n--
		}
	}
	return n
}

func expectText(c string) string {
	c = strings.TrimPrefix(c, "#>")
	return strings.TrimPrefix(c, " ")
}

// quoteState follows single and double quotes across lines, enough for
// the README's commands (no here-documents).
type quoteState struct{ in byte }

func (q *quoteState) closed() bool { return q.in == 0 }

// scan moves through a line and returns where an unquoted comment starts
// (-1: none).
func (q *quoteState) scan(l string) int {
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch q.in {
		case '\'':
			if c == '\'' {
				q.in = 0
			}
		case '"':
			if c == '\\' {
				i++
			} else if c == '"' {
				q.in = 0
			}
		default:
			switch {
			case c == '\\':
				i++
			case c == '\'' || c == '"':
				q.in = c
			case c == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
				return i
			}
		}
	}
	return -1
}

// Matcher is the expected output of a command as a pattern: "…" (or
// "...") matches any run of characters within a line, and a line that is
// only "…" matches any number of lines, none included. Everything else is
// literal. Trailing spaces and blank lines at the end are ignored.
func Matcher(expect []string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^`)
	for i, l := range expect {
		l = strings.TrimRight(l, " ")
		if isWild(l) {
			if i == len(expect)-1 {
				b.WriteString(`(?s:.*)`)
			} else {
				b.WriteString(`(?:[^\n]*\n)*?`)
			}
			continue
		}
		for j, part := range splitWild(l) {
			if j > 0 {
				b.WriteString(`[^\n]*?`)
			}
			b.WriteString(regexp.QuoteMeta(part))
		}
		switch {
		case i == len(expect)-2 && isWild(expect[i+1]):
			b.WriteString(`(?:\n|$)`)
		case i < len(expect)-1:
			b.WriteString(`\n`)
		}
	}
	b.WriteString(`\n?$`)
	return regexp.MustCompile(b.String())
}

func isWild(l string) bool {
	l = strings.TrimSpace(l)
	return l == "…" || l == "..."
}

func splitWild(l string) []string {
	return strings.Split(strings.ReplaceAll(l, "...", "…"), "…")
}

// Normalize is the output as compared: trailing spaces of each line and
// trailing blank lines dropped.
func Normalize(out string) string {
	lines := strings.Split(out, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " \t\r")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}
