package alarms

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// The part of CloudWatch's metric math an alarm's expression uses here:
// numbers, query IDs, + - * /, the comparisons (1 true, 0 false), AND, OR,
// parentheses and the functions FILL(x, v), IF(c, a, b), IF(c, a), ABS,
// MIN(a, b) and MAX(a, b), over one period's values. A missing value is
// NaN: arithmetic on it is missing, FILL replaces it, IF without an else
// is missing when false (as CloudWatch drops the datapoint).
type expr interface {
	eval(vars map[string]float64) float64
}

type (
	num    float64
	ident  string
	unary  struct{ x expr }
	binary struct {
		op   string
		l, r expr
	}
	call struct {
		fn   string
		args []expr
	}
)

func (n num) eval(map[string]float64) float64 { return float64(n) }

func (i ident) eval(vars map[string]float64) float64 {
	if v, ok := vars[string(i)]; ok {
		return v
	}
	return math.NaN()
}

func (u unary) eval(vars map[string]float64) float64 { return -u.x.eval(vars) }

func truth(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (b binary) eval(vars map[string]float64) float64 {
	l, r := b.l.eval(vars), b.r.eval(vars)
	if math.IsNaN(l) || math.IsNaN(r) {
		return math.NaN()
	}
	switch b.op {
	case "+":
		return l + r
	case "-":
		return l - r
	case "*":
		return l * r
	case "/":
		if r == 0 {
			return math.NaN() // CloudWatch drops a division by zero's datapoint
		}
		return l / r
	case ">":
		return truth(l > r)
	case ">=":
		return truth(l >= r)
	case "<":
		return truth(l < r)
	case "<=":
		return truth(l <= r)
	case "==":
		return truth(l == r)
	case "!=":
		return truth(l != r)
	case "AND":
		return truth(l != 0 && r != 0)
	case "OR":
		return truth(l != 0 || r != 0)
	}
	return math.NaN()
}

func (c call) eval(vars map[string]float64) float64 {
	switch c.fn {
	case "FILL":
		if v := c.args[0].eval(vars); !math.IsNaN(v) {
			return v
		}
		return c.args[1].eval(vars)
	case "IF":
		cond := c.args[0].eval(vars)
		switch {
		case math.IsNaN(cond):
			return math.NaN()
		case cond != 0:
			return c.args[1].eval(vars)
		case len(c.args) == 3:
			return c.args[2].eval(vars)
		}
		return math.NaN()
	case "ABS":
		return math.Abs(c.args[0].eval(vars))
	case "MIN", "MAX":
		a, b := c.args[0].eval(vars), c.args[1].eval(vars)
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		if c.fn == "MIN" {
			return math.Min(a, b)
		}
		return math.Max(a, b)
	}
	return math.NaN()
}

var arity = map[string][2]int{"FILL": {2, 2}, "IF": {2, 3}, "ABS": {1, 1}, "MIN": {2, 2}, "MAX": {2, 2}}

// parseExpr parses an expression.
func parseExpr(s string) (expr, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	e, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	return e, nil
}

func tokenize(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := rune(s[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case strings.ContainsRune("+-*/(),", c):
			toks = append(toks, string(c))
			i++
		case strings.ContainsRune("<>=!", c):
			if i+1 < len(s) && s[i+1] == '=' {
				toks = append(toks, s[i:i+2])
				i += 2
			} else if c == '=' || c == '!' {
				return nil, fmt.Errorf("unexpected %q", c)
			} else {
				toks = append(toks, string(c))
				i++
			}
		case unicode.IsDigit(c) || c == '.':
			j := i
			for j < len(s) && (unicode.IsDigit(rune(s[j])) || s[j] == '.') {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		case unicode.IsLetter(c) || c == '_':
			j := i
			for j < len(s) && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])) || s[j] == '_') {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			return nil, fmt.Errorf("unexpected %q", c)
		}
	}
	return toks, nil
}

type parser struct {
	toks []string
	pos  int
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

// precedence of the binary operators, lowest first.
var precedence = map[string]int{"OR": 1, "AND": 2, ">": 3, ">=": 3, "<": 3, "<=": 3, "==": 3, "!=": 3, "+": 4, "-": 4, "*": 5, "/": 5}

func (p *parser) binary(minPrec int) (expr, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		op := p.peek()
		prec, ok := precedence[op]
		if !ok || prec <= minPrec {
			return l, nil
		}
		p.pos++
		r, err := p.binary(prec)
		if err != nil {
			return nil, err
		}
		l = binary{op: op, l: l, r: r}
	}
}

func (p *parser) unary() (expr, error) {
	t := p.peek()
	p.pos++
	switch {
	case t == "":
		return nil, fmt.Errorf("unexpected end")
	case t == "-":
		x, err := p.unary()
		return unary{x}, err
	case t == "(":
		e, err := p.binary(0)
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, fmt.Errorf("missing )")
		}
		p.pos++
		return e, nil
	case t[0] >= '0' && t[0] <= '9' || t[0] == '.':
		f, err := strconv.ParseFloat(t, 64)
		return num(f), err
	case p.peek() == "(":
		n, ok := arity[t]
		if !ok {
			return nil, fmt.Errorf("function %s is not supported", t)
		}
		p.pos++
		var args []expr
		for p.peek() != ")" {
			a, err := p.binary(0)
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			if p.peek() == "," {
				p.pos++
			} else if p.peek() != ")" {
				return nil, fmt.Errorf("%s: expected , or )", t)
			}
		}
		p.pos++
		if len(args) < n[0] || len(args) > n[1] {
			return nil, fmt.Errorf("%s takes %d to %d arguments, not %d", t, n[0], n[1], len(args))
		}
		return call{fn: t, args: args}, nil
	case unicode.IsLetter(rune(t[0])) || t[0] == '_':
		return ident(t), nil
	}
	return nil, fmt.Errorf("unexpected %q", t)
}

// ids returns the query IDs an expression names.
func ids(e expr, out map[string]bool) {
	switch x := e.(type) {
	case ident:
		out[string(x)] = true
	case unary:
		ids(x.x, out)
	case binary:
		ids(x.l, out)
		ids(x.r, out)
	case call:
		for _, a := range x.args {
			ids(a, out)
		}
	}
}
