package memory

import (
	"context"

	"github.com/voiceops/opsapi/shared/agent"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// AgentConfigs returns the store of the projects' agent configurations,
// kept with the rest of the Store's data (and behind the same lock, so a
// configuration is only stored for a project that exists).
func (s *Store) AgentConfigs() agent.ConfigStore { return agentConfigs{s} }

type agentConfigs struct{ s *Store }

var _ agent.ConfigStore = agentConfigs{}

func (a agentConfigs) PutConfig(_ context.Context, c agent.Config) error {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.projects[c.AccountID][c.ProjectID]; !ok {
		return voiceops.ErrNotFound
	}
	if s.agentConfigs == nil {
		s.agentConfigs = map[string]map[string]agent.Config{}
	}
	if s.agentConfigs[c.AccountID] == nil {
		s.agentConfigs[c.AccountID] = map[string]agent.Config{}
	}
	s.agentConfigs[c.AccountID][c.ProjectID] = c.Clone()
	return nil
}

func (a agentConfigs) GetConfig(_ context.Context, accountID, projectID string) (agent.Config, error) {
	s := a.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.agentConfigs[accountID][projectID]
	if !ok {
		return agent.Config{}, voiceops.ErrNotFound
	}
	return c.Clone(), nil
}
