package calls_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	callsvc "github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestServiceIsBuiltByNew: no program or test outside shared/calls writes
// a calls.Service literal, so that every one gets New's defaults and a new
// part of the service is added in one place.
func TestServiceIsBuiltByNew(t *testing.T) {
	const path = "github.com/voiceops/opsapi/shared/calls"
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name != ".." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "cdk.out") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || filepath.Dir(p) == "." {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		name := ""
		for _, imp := range f.Imports {
			if v, _ := strconv.Unquote(imp.Path.Value); v == path {
				name = "calls"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if sel, ok := lit.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Service" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == name {
					t.Errorf("%s: a %s.Service literal; build it with calls.New", fset.Position(lit.Pos()), name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOutcome: every provider status the adapters report maps onto one of
// ours, a failure always with one of the failure reasons.
func TestOutcome(t *testing.T) {
	for st, want := range map[telephony.Status]struct {
		to     voiceops.CallStatus
		reason string
	}{
		telephony.StatusQueued:     {voiceops.CallCalling, ""},
		telephony.StatusInitiated:  {voiceops.CallCalling, ""},
		telephony.StatusRinging:    {voiceops.CallCalling, ""},
		telephony.StatusInProgress: {voiceops.CallCalling, ""},
		telephony.StatusCompleted:  {voiceops.CallSuccess, ""},
		telephony.StatusBusy:       {voiceops.CallFailure, voiceops.ReasonBusy},
		telephony.StatusNoAnswer:   {voiceops.CallFailure, voiceops.ReasonNoAnswer},
		telephony.StatusFailed:     {voiceops.CallFailure, voiceops.ReasonFailed},
		telephony.StatusCanceled:   {voiceops.CallFailure, voiceops.ReasonCanceled},
	} {
		to, reason, ok := callsvc.Outcome(st)
		if !ok || to != want.to || reason != want.reason {
			t.Errorf("Outcome(%s) = %s, %q, %v; want %s, %q", st, to, reason, ok, want.to, want.reason)
		}
	}
	if _, _, ok := callsvc.Outcome("answered"); ok {
		t.Error("an unknown provider status is not ignored")
	}
}
