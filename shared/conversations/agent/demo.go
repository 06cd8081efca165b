package agent

import (
	_ "embed"
	"fmt"

	"github.com/voiceops/opsapi/shared/voiceops"
)

//go:embed testdata/demo.json
var demoJSON []byte

// DemoJSON returns the demo configuration file (testdata/demo.json): the
// example of the configuration format.
func DemoJSON() []byte { return append([]byte(nil), demoJSON...) }

// DemoConfig returns the demo agent configuration for a project: a small
// IVR-style scripted agent (greeting; "balance" or 1; "agent"/"human" or 2,
// a handoff to "support-queue"; "bye", the end; an order number by regular
// expression; silence; a fallback that is out-of-domain), with a second,
// terser variant "express". The dev server seeds it.
func DemoConfig(accountID, projectID string) Config {
	c, err := ParseConfig(demoJSON, voiceops.URLPolicy{})
	if err != nil {
		panic(fmt.Sprintf("agent: the embedded demo configuration is invalid: %v", err))
	}
	c.AccountID, c.ProjectID = accountID, projectID
	return c
}
