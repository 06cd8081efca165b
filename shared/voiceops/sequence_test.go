package voiceops

import (
	"strings"
	"testing"
	"time"
)

// Each transition's event takes the rule's next sequence number; an
// evaluation without a transition leaves it.
func TestTransitionsNumberTheirEvents(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r := AlertRule{ID: "ar_1", AccountID: "acct_1", Operator: OpGreaterEqual, Threshold: 3, Window: "5m", Enabled: true,
		State: StateOK, CreatedAt: at, UpdatedAt: at, Version: 1}
	steps := []struct {
		value int64
		seq   int64 // of the event, 0: none
	}{{5, 1}, {6, 0}, {1, 2}, {2, 0}, {9, 3}}
	for i, st := range steps {
		next, ev := r.Evaluated(Outcome{Value: st.value}, at.Add(time.Duration(i+1)*time.Minute))
		switch {
		case st.seq == 0 && (ev != nil || next.Sequence != r.Sequence):
			t.Errorf("step %d: an event or a new sequence without a transition: %v %d", i, ev, next.Sequence)
		case st.seq != 0 && (ev == nil || next.Sequence != st.seq || !strings.Contains(string(ev.Body), `"sequence":`+string(rune('0'+st.seq)))):
			t.Errorf("step %d: want event %d, got %v, rule at %d", i, st.seq, ev, next.Sequence)
		}
		r = next
	}
}
