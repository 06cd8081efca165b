// Command gen writes each host's part of shared/platform/apispec/openapi.json into
// shared/platform/apidocs (studio.json, base.json). Run by go generate in
// shared/platform/apidocs; a test there fails when the parts are stale.
package main

import (
	"fmt"
	"os"

	"github.com/voiceops/opsapi/shared/platform/apidocs"
	"github.com/voiceops/opsapi/shared/platform/apispec"
)

func main() {
	for _, h := range []apidocs.Host{apidocs.Studio, apidocs.Base} {
		b, err := apidocs.Split(apispec.Document(), h)
		if err == nil {
			err = os.WriteFile(string(h)+".json", append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
