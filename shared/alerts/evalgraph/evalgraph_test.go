package evalgraph

import (
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/store/memory"
)

// TestNew: the evaluator writes its marks, and rolls up only with a store
// of roll-ups.
func TestNew(t *testing.T) {
	stores := memory.New().Stores()
	d := Deps{Stores: stores, Metrics: memory.NewMetrics(), Now: time.Now}
	e := New(d)
	if e.Marks == nil || e.Rules != stores.Rules || e.Events != stores.Events || e.Rollup != nil {
		t.Errorf("evaluator without roll-ups: marks %v, rollup set %v", e.Marks, e.Rollup != nil)
	}
	d.Rollups = memory.NewRollups()
	if e := New(d); e.Rollup == nil {
		t.Error("evaluator with roll-ups has no Rollup")
	}
}
