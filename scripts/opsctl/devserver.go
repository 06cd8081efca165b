package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/voiceops/opsapi/shared/ops/operatorapi"
)

// devCredentials is what opsctl reads of the dev server's credentials file
// (scripts/dev writes it with -credentials).
type devCredentials struct {
	AgentStudioURL string `json:"agent_studio_url"`
	Region         string `json:"region"`
	InternalKey    string `json:"internal_key"`
}

// devStores reaches the stores of the dev server whose credentials file is
// path, through its operator endpoint (shared/ops/operatorapi). The region is
// the file's.
func devStores(path string) (*stores, string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("-credentials %s: no such file; start the dev server with go run ./scripts/dev -credentials %s (it writes the file once it serves)", path, path)
	} else if err != nil {
		return nil, "", fmt.Errorf("-credentials: %w", err)
	}
	var c devCredentials
	if err := json.Unmarshal(b, &c); err != nil || c.AgentStudioURL == "" || c.InternalKey == "" || c.Region == "" {
		return nil, "", fmt.Errorf("-credentials %s is not a credentials file of the dev server (agent_studio_url, internal_key and region are required)", path)
	}
	cl := &operatorapi.Client{BaseURL: c.AgentStudioURL, InternalKey: c.InternalKey, Source: path}
	s := cl.Stores()
	return &stores{accounts: s.Accounts, agents: s.Agents, dni: s.DNI, limits: s.Limits, pacer: s.Pacer, destinations: s.Destinations}, c.Region, nil
}
