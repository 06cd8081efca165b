package memory

import (
	"context"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
)

// Touch stores nothing and notifies the OnAdd listener of the scope, as if
// data had come: the in-process equivalent of the touch item a wake-up
// writes in DynamoDB's metrics table, whose insert the table's stream
// turns into an evaluation of the scope (a rule just created or changed
// is evaluated at once). The memory store's wake-ups call it
// (Store.WakeWith).
func (m *Metrics) Touch(_ context.Context, accountID, projectID string, _ time.Time) error {
	m.mu.Lock()
	notify := m.onAdd
	m.mu.Unlock()
	if notify != nil {
		notify([]metrics.Scope{{AccountID: accountID, ProjectID: projectID}})
	}
	return nil
}
