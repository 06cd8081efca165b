package main

import (
	"context"
	"fmt"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// seedDNI gives every demo project a DNI pool of three numbers
// (+44163296<account><project><n>, fictional UK numbers) with the default
// hold, so that POST /v1/conversations/dni-reservation works at once.
func seedDNI(ctx context.Context, dni voiceops.DNIStore, c Credentials) error {
	for i, a := range c.Accounts {
		for j, p := range a.Projects {
			var numbers []string
			for n := range 3 {
				numbers = append(numbers, fmt.Sprintf("+44163296%d%d%02d", i+1, j, n))
			}
			if err := dni.AddNumbers(ctx, a.AccountID, p.ProjectID, numbers, 0); err != nil {
				return err
			}
		}
	}
	return nil
}
