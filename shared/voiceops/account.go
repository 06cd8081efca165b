package voiceops

import "time"

// Region is a deployment region of the studio host (`us`, `uk`, `eu`).
type Region string

const (
	RegionUS Region = "us"
	RegionUK Region = "uk"
	RegionEU Region = "eu"
)

// Regions lists every region with its base-host name and AWS region.
var Regions = []RegionInfo{
	{Region: RegionUS, BaseName: "us-1", AWSRegion: "us-east-1"},
	{Region: RegionUK, BaseName: "uk-1", AWSRegion: "eu-west-2"},
	{Region: RegionEU, BaseName: "euw-1", AWSRegion: "eu-west-1"},
}

// RegionInfo names a region on both hosts and in AWS.
type RegionInfo struct {
	Region    Region
	BaseName  string
	AWSRegion string
}

// LookupRegion returns the region named r.
func LookupRegion(r string) (RegionInfo, bool) {
	for _, ri := range Regions {
		if string(ri.Region) == r {
			return ri, true
		}
	}
	return RegionInfo{}, false
}

// Account is a customer. Every resource belongs to exactly one account.
type Account struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// Project is a voice or chat agent project of an account.
type Project struct {
	ID        string
	AccountID string
	Name      string
	CreatedAt time.Time
}

// KeyKind is what a key may be used for (docs/api.md, "The two hosts").
type KeyKind string

const (
	KeyAPI     KeyKind = "api"     // x-api-key
	KeyAgent   KeyKind = "agent"   // X-TOKEN, one per project connector
	KeyService KeyKind = "service" // X-Service-Auth-Token
	KeyEvents  KeyKind = "events"  // X-Api-Key on external events and bridge-ended
)

// KeyKinds lists every kind.
var KeyKinds = []KeyKind{KeyAPI, KeyAgent, KeyService, KeyEvents}

// Key is the stored form of a key: never the key itself, only its digest.
type Key struct {
	ID        string
	Digest    string // hex SHA-256 of the full key
	Prefix    string // the first characters, enough to recognise it in a list
	Kind      KeyKind
	Region    Region
	AccountID string
	ProjectID string // empty: account-scoped
	// Environment binds an agent token to one environment of its project
	// (a connector's); empty for other kinds, and read as live.
	Environment string
	CreatedAt   time.Time
	RevokedAt   *time.Time
}

// Principal is who a request authenticated as.
type Principal struct {
	KeyID     string
	Kind      KeyKind
	AccountID string
	ProjectID string // empty: account-scoped
	// Environment is the agent token's environment (agent keys only).
	Environment string
}
