package memory

import (
	"bytes"
	"context"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// AgentConfigs returns the store of the projects' agent configurations,
// kept with the rest of the Store's data (and behind the same lock, so a
// configuration is only stored for a project that exists).
func (s *Store) AgentConfigs() voiceops.AgentConfigStore { return agentConfigs{s} }

type agentConfigs struct{ s *Store }

var _ voiceops.AgentConfigStore = agentConfigs{}

func (a agentConfigs) PutAgentConfig(_ context.Context, accountID, projectID string, doc []byte) error {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.projects[accountID][projectID]; !ok {
		return voiceops.ErrNotFound
	}
	if s.agentConfigs == nil {
		s.agentConfigs = map[string]map[string][]byte{}
	}
	if s.agentConfigs[accountID] == nil {
		s.agentConfigs[accountID] = map[string][]byte{}
	}
	s.agentConfigs[accountID][projectID] = bytes.Clone(doc)
	return nil
}

func (a agentConfigs) GetAgentConfig(_ context.Context, accountID, projectID string) ([]byte, error) {
	s := a.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	doc, ok := s.agentConfigs[accountID][projectID]
	if !ok {
		return nil, voiceops.ErrNotFound
	}
	return bytes.Clone(doc), nil
}
