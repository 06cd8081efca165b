package api

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/auth"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// doc2Func is a doc-2 handler for a path carrying {account_id}/{project_id}:
// it runs once the caller may act on that project, and returns errors for
// writeError to answer in doc 2's shape.
type doc2Func func(w http.ResponseWriter, r *http.Request, t target) error

// target is the project a doc-2 request acts on, and who asks.
type target struct {
	AccountID string
	ProjectID string
	Key       voiceops.Principal // the x-api-key's principal
	Agent     voiceops.Principal // the X-TOKEN's principal (chat only)
}

var (
	errOtherAccount = voiceops.Errorf(voiceops.KindForbidden, "the API key is not valid for this account")
	errOtherProject = voiceops.Errorf(voiceops.KindForbidden, "the API key is not valid for this project")
	errNoProject    = voiceops.Errorf(voiceops.KindNotFound, "account or project not found")
)

// doc2Project authenticates the x-api-key of a doc-2 request against the
// path's account and project (DECISIONS.md, "Accounts, projects and keys"):
// a key of another account or project is 403; an unknown project, for an
// account-scoped key, 404. A project-scoped key proves its project exists.
func (s *server) doc2Project(h doc2Func) http.Handler {
	return s.doc2(func(w http.ResponseWriter, r *http.Request) error {
		t, err := s.authorizeProject(r.Context(), r, auth.Unauthorized("API key"))
		if err != nil {
			return err
		}
		return h(w, r, t)
	})
}

// doc2Chat is doc2Project plus the agent token (X-TOKEN) of a connector of
// the same project.
func (s *server) doc2Chat(h doc2Func) http.Handler {
	return s.doc2(func(w http.ResponseWriter, r *http.Request) error {
		t, err := s.authorizeProject(r.Context(), r, auth.Unauthorized("X-API-KEY"))
		if err != nil {
			return err
		}
		a, err := s.Auth.Authenticate(r.Context(), r.Header.Get("X-TOKEN"), voiceops.KeyAgent)
		if err != nil {
			if voiceops.KindOf(err) == voiceops.KindUnauthorized {
				return auth.Unauthorized("X-TOKEN")
			}
			return err
		}
		if a.AccountID != t.AccountID || a.ProjectID != t.ProjectID {
			return voiceops.Errorf(voiceops.KindForbidden, "the X-TOKEN belongs to another project")
		}
		t.Agent = a
		return h(w, r, t)
	})
}

func (s *server) authorizeProject(ctx context.Context, r *http.Request, unauthorized error) (target, error) {
	t := target{AccountID: r.PathValue("account_id"), ProjectID: r.PathValue("project_id")}
	p, err := s.Auth.Authenticate(ctx, r.Header.Get("x-api-key"), voiceops.KeyAPI)
	if err != nil {
		if voiceops.KindOf(err) == voiceops.KindUnauthorized {
			return t, unauthorized
		}
		return t, err
	}
	t.Key = p
	switch {
	case p.AccountID != t.AccountID:
		return t, errOtherAccount
	case p.ProjectID != "" && p.ProjectID != t.ProjectID:
		return t, errOtherProject
	case p.ProjectID == "":
		if err := s.projects.exists(ctx, s.Stores.Accounts, t.AccountID, t.ProjectID, s.Now()); err != nil {
			return t, err
		}
	}
	return t, nil
}

// doc2 answers the errors of a doc-2 handler in doc 2's shape.
func (s *server) doc2(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			writeError(w, r, s.Log, doc2, err)
		}
	})
}

// projectCache remembers projects that exist, briefly: projects are never
// deleted, so a warm function checks an account-scoped key's project
// without reading it on every request.
type projectCache struct {
	mu   sync.Mutex
	seen map[[2]string]time.Time
}

const projectCacheTTL = 5 * time.Minute

func (c *projectCache) exists(ctx context.Context, accounts voiceops.AccountStore, accountID, projectID string, now time.Time) error {
	k := [2]string{accountID, projectID}
	c.mu.Lock()
	until, ok := c.seen[k]
	c.mu.Unlock()
	if ok && now.Before(until) {
		return nil
	}
	if !voiceops.ValidTenantID(projectID) {
		return errNoProject
	}
	if _, err := accounts.GetProject(ctx, accountID, projectID); err != nil {
		if errors.Is(err, voiceops.ErrNotFound) {
			return errNoProject
		}
		return err
	}
	c.mu.Lock()
	if c.seen == nil || len(c.seen) > 10000 {
		c.seen = map[[2]string]time.Time{}
	}
	c.seen[k] = now.Add(projectCacheTTL)
	c.mu.Unlock()
	return nil
}
