package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// The one place where a route's scheme becomes a Caller (docs/api.md, "The two hosts"). Every answer here is the route family's
// error; nothing of the handler runs before it.

var (
	errOtherAccount       = voiceops.Errorf(voiceops.KindForbidden, "the API key is not valid for this account")
	errOtherProject       = voiceops.Errorf(voiceops.KindForbidden, "the API key is not valid for this project")
	errNoProject          = voiceops.Errorf(voiceops.KindNotFound, "account or project not found")
	errAccountKeyRequired = voiceops.Errorf(voiceops.KindForbidden, "this endpoint needs an account-scoped API key; the key is scoped to one project")
	errProjectKeyRequired = voiceops.Errorf(voiceops.KindForbidden, "a project-scoped key is required")
	errAgentOtherProject  = voiceops.Errorf(voiceops.KindForbidden, "the X-TOKEN belongs to another project")
	errInternalKey        = voiceops.Errorf(voiceops.KindUnauthorized, "missing or invalid X-Internal-Key")
	errServiceKey         = voiceops.Errorf(voiceops.KindUnauthorized, "missing or invalid X-Service-Auth-Token (a service key is required)")
	errEventsKey          = voiceops.Errorf(voiceops.KindUnauthorized, "missing or invalid X-Api-Key (an events key is required)")
)

// unauthorized is the 401 of a missing or unknown key in header.
func unauthorized(header string) *voiceops.Error {
	return &voiceops.Error{Kind: voiceops.KindUnauthorized, Message: "missing or invalid " + header}
}

// The 401s of the x-api-key schemes, made once (not on every request).
var (
	errAPIKey   = unauthorized("API key")
	errXAPIKey  = unauthorized("X-API-KEY")
	errAgentKey = unauthorized("X-TOKEN")
)

func (s *server) authenticate(r *http.Request, scheme Scheme) (Caller, error) {
	ctx := r.Context()
	switch scheme {
	case Public:
		return Caller{}, nil
	case InternalKey:
		return Caller{}, s.checkInternalKey(ctx, r.Header.Get("X-Internal-Key"))
	case AccountKey:
		p, err := s.key(ctx, r.Header.Get("x-api-key"), voiceops.KeyAPI, errAPIKey)
		if err != nil {
			return Caller{}, err
		}
		c := Caller{AccountID: p.AccountID, Key: p}
		if p.ProjectID != "" {
			return c, errAccountKeyRequired
		}
		return c, nil
	case ProjectScopedKey:
		p, err := s.key(ctx, r.Header.Get("x-api-key"), voiceops.KeyAPI, errAPIKey)
		if err != nil {
			return Caller{}, err
		}
		if p.ProjectID == "" {
			return Caller{}, errProjectKeyRequired
		}
		return Caller{AccountID: p.AccountID, ProjectID: p.ProjectID, Key: p}, nil
	case ServiceKey:
		p, err := s.key(ctx, r.Header.Get("X-Service-Auth-Token"), voiceops.KeyService, errServiceKey)
		if err != nil {
			return Caller{}, err
		}
		if p.ProjectID == "" {
			return Caller{}, errServiceKey
		}
		return Caller{AccountID: p.AccountID, ProjectID: p.ProjectID, Key: p}, nil
	case EventsKey:
		p, err := s.key(ctx, r.Header.Get("X-Api-Key"), voiceops.KeyEvents, errEventsKey)
		if err != nil {
			return Caller{}, err
		}
		return Caller{AccountID: p.AccountID, ProjectID: p.ProjectID, Key: p}, nil
	case ProjectKey:
		return s.pathProject(ctx, r, errAPIKey)
	case ChatKeys:
		c, err := s.pathProject(ctx, r, errXAPIKey)
		if err != nil {
			return c, err
		}
		a, err := s.key(ctx, r.Header.Get("X-TOKEN"), voiceops.KeyAgent, errAgentKey)
		if err != nil {
			return c, err
		}
		if a.AccountID != c.AccountID || a.ProjectID != c.ProjectID {
			return c, errAgentOtherProject
		}
		c.Agent = a
		return c, nil
	}
	return Caller{}, voiceops.Errorf(voiceops.KindInternal, "route has no authentication scheme")
}

// key authenticates a key of a kind; a missing, unknown or revoked key is
// answered with unauth (the other errors, such as a store failure, as they
// are).
func (s *server) key(ctx context.Context, key string, kind voiceops.KeyKind, unauth error) (voiceops.Principal, error) {
	p, err := s.Keys.Authenticate(ctx, key, kind)
	if err != nil {
		if voiceops.KindOf(err) == voiceops.KindUnauthorized {
			return p, unauth
		}
		return p, err
	}
	return p, nil
}

// pathProject authenticates the x-api-key of a request against the path's
// {account_id}/{project_id}: a key of another account or project is 403; an
// unknown project, for an account-scoped key, 404. A project-scoped key
// proves its project exists.
func (s *server) pathProject(ctx context.Context, r *http.Request, unauth error) (Caller, error) {
	c := Caller{AccountID: r.PathValue("account_id"), ProjectID: r.PathValue("project_id")}
	p, err := s.key(ctx, r.Header.Get("x-api-key"), voiceops.KeyAPI, unauth)
	if err != nil {
		return Caller{}, err
	}
	c.Key = p
	switch {
	case p.AccountID != c.AccountID:
		return Caller{AccountID: p.AccountID, Key: p}, errOtherAccount
	case p.ProjectID != "" && p.ProjectID != c.ProjectID:
		return Caller{AccountID: p.AccountID, Key: p}, errOtherProject
	case p.ProjectID == "":
		if err := s.projects.exists(ctx, s.Projects, c.AccountID, c.ProjectID, s.Now()); err != nil {
			return Caller{AccountID: p.AccountID, Key: p}, err
		}
	}
	return c, nil
}

// checkInternalKey compares the key with the configured digest in constant
// time; with no digest configured every key is refused.
func (s *server) checkInternalKey(ctx context.Context, key string) error {
	if key == "" || s.InternalKey == nil {
		return errInternalKey
	}
	digest, err := s.InternalKey(ctx)
	if err != nil {
		return voiceops.Internal(err)
	}
	want, err := hex.DecodeString(digest)
	if err != nil || len(want) != sha256.Size {
		return errInternalKey
	}
	got := sha256.Sum256([]byte(key))
	if subtle.ConstantTimeCompare(got[:], want) != 1 {
		return errInternalKey
	}
	return nil
}

// projectCache remembers projects that exist, briefly: projects are never
// deleted, so a warm function checks an account-scoped key's project
// without reading it on every request.
type projectCache struct {
	mu   sync.Mutex
	seen map[[2]string]time.Time
}

const projectCacheTTL = 5 * time.Minute

func (c *projectCache) exists(ctx context.Context, projects ProjectReader, accountID, projectID string, now time.Time) error {
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
	if projects == nil {
		return voiceops.Errorf(voiceops.KindInternal, "no project store")
	}
	if _, err := projects.GetProject(ctx, accountID, projectID); err != nil {
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
