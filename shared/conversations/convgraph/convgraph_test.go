package convgraph

import (
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/store/memory"
)

// TestNew: the engine records metrics only with a store (no recorder over
// a nil one), and reaches loopback addresses only when allowed.
func TestNew(t *testing.T) {
	mem := memory.New()
	d := Deps{Conversations: mem.Stores().Conversations, Configs: mem.AgentConfigs(), Now: time.Now}
	e := New(d)
	if e.Metrics != nil || e.Functions == nil || e.AgentDeps.HTTPClient == nil || e.AgentDeps.Policy.AllowLoopback {
		t.Errorf("engine without metrics: Metrics %v, Functions %v, agents' client %v, loopback %v",
			e.Metrics, e.Functions, e.AgentDeps.HTTPClient, e.AgentDeps.Policy.AllowLoopback)
	}
	d.Metrics, d.AllowLoopback, d.ChatIdleTimeout = memory.NewMetrics(), true, time.Minute
	if e := New(d); e.Metrics == nil || !e.AgentDeps.Policy.AllowLoopback || e.ChatIdleTimeout != time.Minute || e.Store != d.Conversations {
		t.Errorf("engine with metrics and loopback: %+v", e)
	}
}
