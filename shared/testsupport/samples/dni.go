package samples

import (
	"context"
	"time"

	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The DNI sample (events/calls-dni-reservation.json).
const (
	// ProjectAPIKey is a project-scoped x-api-key of ProjectID: the DNI
	// reservation path names no project, so it needs one.
	ProjectAPIKey = "vo_api_us_RwpaJEUpZgov8OMctz8VDijDGsVkmjv2eVeVjHNc4DN4sb"
)

// DNINumbers is the DNI pool of ProjectID (fictional UK numbers).
var DNINumbers = []string{"+441632960100", "+441632960101", "+441632960102"}

// SeedDNI stores ProjectAPIKey and the DNI pool of ProjectID (default hold);
// Seed must have run.
func SeedDNI(ctx context.Context, s voiceops.Stores, dni voiceops.DNIStore, now time.Time) error {
	k := voiceops.Key{ID: "key_sample_dni", Digest: keys.Digest(ProjectAPIKey), Prefix: keys.Prefix(ProjectAPIKey), Kind: voiceops.KeyAPI,
		Region: voiceops.RegionUS, AccountID: AccountID, ProjectID: ProjectID, CreatedAt: now}
	if err := s.Accounts.CreateKey(ctx, k); err != nil {
		return err
	}
	return dni.AddNumbers(ctx, AccountID, ProjectID, DNINumbers, 0)
}
