// Package operatorapi is the dev server's operator endpoint and its client:
// the stores opsctl works on (accounts, projects, keys, agent configurations,
// DNI pools, rate limits, outbound rates, destination policies), served over
// HTTP so that opsctl runs the very same command code against the dev
// server's in-memory stores as against DynamoDB.
//
// Only the dev server serves it (deployed stacks have no such route). A
// request is refused unless it comes from a loopback address and carries
// the dev server's internal key (X-Internal-Key, from its credentials file,
// which is mode 0600): loopback alone would let any local user's process
// write keys. The endpoint is one POST per store method, at Path+method,
// with the arguments as a JSON object; errors keep their domain kind, so
// "no such account" reads the same from either backend.
package operatorapi

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Path is where the dev server serves the endpoint.
const Path = "/_dev/operator/"

// KeyHeader carries the dev server's internal key.
const KeyHeader = "X-Internal-Key"

// maxBody bounds a request: an agent configuration is the largest argument.
const maxBody = 1 << 20

// DNIAdder adds numbers to a project's DNI pool (voiceops.DNIStore).
type DNIAdder interface {
	AddNumbers(ctx context.Context, accountID, projectID string, numbers []string, hold time.Duration) error
}

// LimitStore keeps the accounts' rate limit overrides (ratelimit.Store).
type LimitStore interface {
	AccountLimit(ctx context.Context, accountID string) (ratelimit.Limit, error)
	SetAccountLimit(ctx context.Context, accountID string, l *ratelimit.Limit) error
}

// RateSetter sets an account's outbound rate (dynamo.Pacer, memory.Pacer).
type RateSetter interface {
	SetRate(ctx context.Context, accountID string, rate float64) error
}

// Stores are what the endpoint serves and the client reaches.
type Stores struct {
	Accounts     voiceops.AccountStore
	Agents       voiceops.AgentConfigStore
	DNI          DNIAdder
	Limits       LimitStore
	Pacer        RateSetter
	Destinations destination.Store
}

// args are the arguments of every method; each method reads its own.
type args struct {
	AccountID string              `json:"account_id,omitempty"`
	ProjectID string              `json:"project_id,omitempty"`
	KeyID     string              `json:"key_id,omitempty"`
	Digest    string              `json:"digest,omitempty"`
	Account   *voiceops.Account   `json:"account,omitempty"`
	Project   *voiceops.Project   `json:"project,omitempty"`
	Key       *voiceops.Key       `json:"key,omitempty"`
	At        time.Time           `json:"at,omitzero"`
	Doc       []byte              `json:"doc,omitempty"`
	Numbers   []string            `json:"numbers,omitempty"`
	Hold      time.Duration       `json:"hold,omitempty"`
	Limit     *ratelimit.Limit    `json:"limit,omitempty"`
	Rate      float64             `json:"rate,omitempty"`
	Policy    *destination.Policy `json:"policy,omitempty"`
}

// wireError is an error as it crosses the endpoint.
type wireError struct {
	Kind    voiceops.Kind         `json:"kind"`
	Message string                `json:"message"`
	Fields  []voiceops.FieldError `json:"fields,omitempty"`
	// Sentinel names the store sentinel the error is, so the client
	// returns the same value (callers compare with errors.Is).
	Sentinel string `json:"sentinel,omitempty"`
	// Domain is false for errors that are not *voiceops.Error.
	Domain bool `json:"domain,omitempty"`
}

type response struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *wireError      `json:"error,omitempty"`
}

var sentinels = map[string]*voiceops.Error{
	"not_found":       voiceops.ErrNotFound,
	"already_exists":  voiceops.ErrAlreadyExists,
	"project_missing": voiceops.ErrProjectNotFound,
}

func toWire(err error) *wireError {
	for name, s := range sentinels {
		if errors.Is(err, s) {
			return &wireError{Kind: s.Kind, Message: s.Message, Fields: s.Fields, Sentinel: name, Domain: true}
		}
	}
	var ve *voiceops.Error
	if errors.As(err, &ve) {
		return &wireError{Kind: ve.Kind, Message: err.Error(), Fields: ve.Fields, Domain: true}
	}
	return &wireError{Kind: voiceops.KindInternal, Message: err.Error()}
}

func (w *wireError) err() error {
	if s, ok := sentinels[w.Sentinel]; ok {
		return s
	}
	if w.Domain {
		return &voiceops.Error{Kind: w.Kind, Message: w.Message, Fields: w.Fields}
	}
	return errors.New(w.Message)
}

// method runs one store method with its arguments; the result is encoded
// as JSON.
type method func(ctx context.Context, st Stores, a args) (any, error)

// methods are every method of the endpoint, by name.
var methods = map[string]method{
	"CreateAccount": func(ctx context.Context, st Stores, a args) (any, error) {
		if a.Account == nil {
			return nil, voiceops.Errorf(voiceops.KindBadRequest, "account is required")
		}
		return nil, st.Accounts.CreateAccount(ctx, *a.Account)
	},
	"GetAccount": func(ctx context.Context, st Stores, a args) (any, error) {
		return st.Accounts.GetAccount(ctx, a.AccountID)
	},
	"ListAccounts": func(ctx context.Context, st Stores, _ args) (any, error) {
		return st.Accounts.ListAccounts(ctx)
	},
	"CreateProject": func(ctx context.Context, st Stores, a args) (any, error) {
		if a.Project == nil {
			return nil, voiceops.Errorf(voiceops.KindBadRequest, "project is required")
		}
		return nil, st.Accounts.CreateProject(ctx, *a.Project)
	},
	"GetProject": func(ctx context.Context, st Stores, a args) (any, error) {
		return st.Accounts.GetProject(ctx, a.AccountID, a.ProjectID)
	},
	"ListProjects": func(ctx context.Context, st Stores, a args) (any, error) {
		return st.Accounts.ListProjects(ctx, a.AccountID)
	},
	"CreateKey": func(ctx context.Context, st Stores, a args) (any, error) {
		if a.Key == nil {
			return nil, voiceops.Errorf(voiceops.KindBadRequest, "key is required")
		}
		return nil, st.Accounts.CreateKey(ctx, *a.Key)
	},
	"KeyByDigest": func(ctx context.Context, st Stores, a args) (any, error) {
		return st.Accounts.KeyByDigest(ctx, a.Digest)
	},
	"ListKeys": func(ctx context.Context, st Stores, a args) (any, error) {
		return st.Accounts.ListKeys(ctx, a.AccountID)
	},
	"RevokeKey": func(ctx context.Context, st Stores, a args) (any, error) {
		return st.Accounts.RevokeKey(ctx, a.AccountID, a.KeyID, a.At)
	},
	"PutAgentConfig": func(ctx context.Context, st Stores, a args) (any, error) {
		return nil, st.Agents.PutAgentConfig(ctx, a.AccountID, a.ProjectID, a.Doc)
	},
	"GetAgentConfig": func(ctx context.Context, st Stores, a args) (any, error) {
		return st.Agents.GetAgentConfig(ctx, a.AccountID, a.ProjectID)
	},
	"AddNumbers": func(ctx context.Context, st Stores, a args) (any, error) {
		return nil, st.DNI.AddNumbers(ctx, a.AccountID, a.ProjectID, a.Numbers, a.Hold)
	},
	"AccountLimit": func(ctx context.Context, st Stores, a args) (any, error) {
		return st.Limits.AccountLimit(ctx, a.AccountID)
	},
	"SetAccountLimit": func(ctx context.Context, st Stores, a args) (any, error) {
		return nil, st.Limits.SetAccountLimit(ctx, a.AccountID, a.Limit)
	},
	"SetRate": func(ctx context.Context, st Stores, a args) (any, error) {
		if st.Pacer == nil {
			return nil, voiceops.Errorf(voiceops.KindUnimplemented, "this server's pacer cannot set rates")
		}
		return nil, st.Pacer.SetRate(ctx, a.AccountID, a.Rate)
	},
	"DestinationPolicy": func(ctx context.Context, st Stores, a args) (any, error) {
		return st.Destinations.DestinationPolicy(ctx, a.AccountID)
	},
	"SetDestinationPolicy": func(ctx context.Context, st Stores, a args) (any, error) {
		return nil, st.Destinations.SetDestinationPolicy(ctx, a.AccountID, a.Policy)
	},
}

// Handler serves the endpoint over st to loopback callers that send the
// internal key whose digest is internalKeyDigest (keys.Digest).
func Handler(st Stores, internalKeyDigest string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail := func(status int, kind voiceops.Kind, format string, a ...any) {
			writeJSON(w, status, response{Error: &wireError{Kind: kind, Message: fmt.Sprintf(format, a...), Domain: true}})
		}
		if !fromLoopback(r.RemoteAddr) {
			fail(http.StatusForbidden, voiceops.KindForbidden, "the operator endpoint serves loopback callers only; run opsctl on the dev server's machine")
			return
		}
		got := keys.Digest(r.Header.Get(KeyHeader))
		if r.Header.Get(KeyHeader) == "" || subtle.ConstantTimeCompare([]byte(got), []byte(internalKeyDigest)) != 1 {
			fail(http.StatusUnauthorized, voiceops.KindUnauthorized, "missing or wrong %s: send the internal_key of the dev server's credentials file", KeyHeader)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, Path)
		m, ok := methods[name]
		if !ok {
			// Percent-encoded: no markup of the request comes back.
			fail(http.StatusNotFound, voiceops.KindNotFound, "no operator method %q", url.PathEscape(name))
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			fail(http.StatusMethodNotAllowed, voiceops.KindBadRequest, "use POST")
			return
		}
		var a args
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			fail(http.StatusBadRequest, voiceops.KindBadRequest, "arguments: %v", err)
			return
		}
		out, err := m(r.Context(), st, a)
		if err != nil {
			// 200: the call was carried; the store's answer is the error.
			writeJSON(w, http.StatusOK, response{Error: toWire(err)})
			return
		}
		b, err := json.Marshal(out)
		if err != nil {
			fail(http.StatusInternalServerError, voiceops.KindInternal, "encoding the result: %v", err)
			return
		}
		writeJSON(w, http.StatusOK, response{Result: b})
	})
}

func fromLoopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Client reaches the endpoint of the dev server at BaseURL (its
// agent_studio_url) with its internal key.
type Client struct {
	BaseURL     string
	InternalKey string
	HTTP        *http.Client // nil: a client with a 30 s timeout
	// Source names where BaseURL and InternalKey came from (a credentials
	// file), for errors.
	Source string
}

// Stores returns the stores of the dev server, reached through c.
func (c *Client) Stores() Stores {
	return Stores{Accounts: accounts{c}, Agents: agents{c}, DNI: dni{c}, Limits: limits{c}, Pacer: pacer{c}, Destinations: destinations{c}}
}

// call runs method with a; out, when not nil, receives the result.
func (c *Client) call(ctx context.Context, method string, a args, out any) error {
	body, err := json.Marshal(a)
	if err != nil {
		return err
	}
	url := strings.TrimRight(c.BaseURL, "/") + Path + method
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return fmt.Errorf("agent_studio_url %q of %s: %w", c.BaseURL, c.Source, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(KeyHeader, c.InternalKey)
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("nothing answers at %s (agent_studio_url of %s): start the dev server, e.g. go run ./scripts/dev -credentials %s, "+
			"or give the credentials file of the one running (%w)", c.BaseURL, c.Source, c.Source, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	var r response
	if jerr := json.Unmarshal(b, &r); jerr != nil || (r.Error == nil && resp.StatusCode != http.StatusOK) {
		return fmt.Errorf("%s does not serve the operator endpoint (HTTP %d on %s): only the dev server (go run ./scripts/dev) serves it; "+
			"for a deployed stack run opsctl without -credentials, on DynamoDB", c.BaseURL, resp.StatusCode, Path)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return fmt.Errorf("the dev server at %s refused the internal_key of %s: the file is not this server's "+
			"(was it restarted with -fresh or another -credentials file?); give the file it writes", c.BaseURL, c.Source)
	default:
		return fmt.Errorf("the dev server at %s: %s", c.BaseURL, r.Error.Message)
	}
	if r.Error != nil {
		return r.Error.err()
	}
	if out != nil {
		return json.Unmarshal(r.Result, out)
	}
	return nil
}

// get runs method and returns its result.
func get[T any](ctx context.Context, c *Client, method string, a args) (T, error) {
	var out T
	err := c.call(ctx, method, a, &out)
	return out, err
}

type accounts struct{ c *Client }

func (s accounts) CreateAccount(ctx context.Context, a voiceops.Account) error {
	return s.c.call(ctx, "CreateAccount", args{Account: &a}, nil)
}

func (s accounts) GetAccount(ctx context.Context, accountID string) (voiceops.Account, error) {
	return get[voiceops.Account](ctx, s.c, "GetAccount", args{AccountID: accountID})
}

func (s accounts) ListAccounts(ctx context.Context) ([]voiceops.Account, error) {
	return get[[]voiceops.Account](ctx, s.c, "ListAccounts", args{})
}

func (s accounts) CreateProject(ctx context.Context, p voiceops.Project) error {
	return s.c.call(ctx, "CreateProject", args{Project: &p}, nil)
}

func (s accounts) GetProject(ctx context.Context, accountID, projectID string) (voiceops.Project, error) {
	return get[voiceops.Project](ctx, s.c, "GetProject", args{AccountID: accountID, ProjectID: projectID})
}

func (s accounts) ListProjects(ctx context.Context, accountID string) ([]voiceops.Project, error) {
	return get[[]voiceops.Project](ctx, s.c, "ListProjects", args{AccountID: accountID})
}

func (s accounts) CreateKey(ctx context.Context, k voiceops.Key) error {
	return s.c.call(ctx, "CreateKey", args{Key: &k}, nil)
}

func (s accounts) KeyByDigest(ctx context.Context, digest string) (voiceops.Key, error) {
	return get[voiceops.Key](ctx, s.c, "KeyByDigest", args{Digest: digest})
}

func (s accounts) ListKeys(ctx context.Context, accountID string) ([]voiceops.Key, error) {
	return get[[]voiceops.Key](ctx, s.c, "ListKeys", args{AccountID: accountID})
}

func (s accounts) RevokeKey(ctx context.Context, accountID, keyID string, at time.Time) (voiceops.Key, error) {
	return get[voiceops.Key](ctx, s.c, "RevokeKey", args{AccountID: accountID, KeyID: keyID, At: at})
}

type agents struct{ c *Client }

func (s agents) PutAgentConfig(ctx context.Context, accountID, projectID string, doc []byte) error {
	return s.c.call(ctx, "PutAgentConfig", args{AccountID: accountID, ProjectID: projectID, Doc: doc}, nil)
}

func (s agents) GetAgentConfig(ctx context.Context, accountID, projectID string) ([]byte, error) {
	return get[[]byte](ctx, s.c, "GetAgentConfig", args{AccountID: accountID, ProjectID: projectID})
}

type dni struct{ c *Client }

func (s dni) AddNumbers(ctx context.Context, accountID, projectID string, numbers []string, hold time.Duration) error {
	return s.c.call(ctx, "AddNumbers", args{AccountID: accountID, ProjectID: projectID, Numbers: numbers, Hold: hold}, nil)
}

type limits struct{ c *Client }

func (s limits) AccountLimit(ctx context.Context, accountID string) (ratelimit.Limit, error) {
	return get[ratelimit.Limit](ctx, s.c, "AccountLimit", args{AccountID: accountID})
}

func (s limits) SetAccountLimit(ctx context.Context, accountID string, l *ratelimit.Limit) error {
	return s.c.call(ctx, "SetAccountLimit", args{AccountID: accountID, Limit: l}, nil)
}

type pacer struct{ c *Client }

func (s pacer) SetRate(ctx context.Context, accountID string, rate float64) error {
	return s.c.call(ctx, "SetRate", args{AccountID: accountID, Rate: rate}, nil)
}

type destinations struct{ c *Client }

func (s destinations) DestinationPolicy(ctx context.Context, accountID string) (destination.Policy, error) {
	return get[destination.Policy](ctx, s.c, "DestinationPolicy", args{AccountID: accountID})
}

func (s destinations) SetDestinationPolicy(ctx context.Context, accountID string, p *destination.Policy) error {
	return s.c.call(ctx, "SetDestinationPolicy", args{AccountID: accountID, Policy: p}, nil)
}
