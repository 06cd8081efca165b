package studioapi

import (
	"context"
	"net/http"
	"sort"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Projects reads the account's projects: one to check a rule's or a
// silence's scope, all of them for GET /v1/account.
type Projects interface {
	httpapi.ProjectReader
	ListProjects(ctx context.Context, accountID string) ([]voiceops.Project, error)
}

// accountJSON is the key's account and its projects (our addition): what
// a client needs to build the base host's paths without asking the user.
type accountJSON struct {
	AccountID string        `json:"account_id"`
	Projects  []projectJSON `json:"projects"`
}

type projectJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
}

func (a *Alerts) getAccount(w http.ResponseWriter, r *http.Request, p httpapi.Caller) error {
	ps, err := a.Projects.ListProjects(r.Context(), p.AccountID)
	if err != nil {
		return err
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
	out := accountJSON{AccountID: p.AccountID, Projects: make([]projectJSON, 0, len(ps))}
	for _, pr := range ps {
		out.Projects = append(out.Projects, projectJSON{ID: pr.ID, Name: pr.Name, CreatedAt: httpapi.Time(pr.CreatedAt)})
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}
