// Port of metadata/source/* + MetadataLoader from google/libphonenumber.
// Functions are kept in upstream source order to ease syncing.
// Last reconciled against: v9.0.32
package phonenumbers

import (
	"fmt"
	"strconv"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// metadataContainer bundles all of the metadata-derived lookup state used by
// the library. The package keeps a single active container (currentMetadata),
// built from the embedded metadata during init. Bundling the state behind one
// swappable value is the seam that lets tests run against alternate metadata
// (e.g. upstream's synthetic PhoneNumberMetadataForTesting data) without
// changing the public, package-level API.
type metadataContainer struct {
	// The parsed metadata collection this container was built from.
	metadataCollection *PhoneMetadataCollection

	// A map from country code (as integer) to two letter region codes.
	countryCodeToRegion map[int][]string

	// A mapping from a region code to the PhoneMetadata for that region.
	regionToMetadataMap map[string]*PhoneMetadata

	// A mapping from a country calling code for a non-geographical entity to
	// the PhoneMetadata for that country calling code. Examples of the country
	// calling codes include 800 (International Toll Free Service) and 808
	// (International Shared Cost Service).
	countryCodeToNonGeographicalMetadataMap map[int]*PhoneMetadata

	// The set of regions that share country calling code 1.
	nanpaRegions map[string]struct{}

	// The set of regions the library supports.
	supportedRegions map[string]bool

	// All the calling codes we support.
	supportedCallingCodes map[int]bool

	// The set of calling codes that map to the non-geo entity region ("001").
	countryCodesForNonGeographicalRegion map[int]bool

	// lazy, when set, holds the regions' metadata still encoded: a region
	// is decoded the first time it is read (regionToMetadataMap and
	// countryCodeToNonGeographicalMetadataMap are then unused).
	lazy *lazyMetadata
}

// currentMetadata is the active metadata container, built on first use by
// metadata() (not at package init: decoding every region costs milliseconds
// and megabytes that a program reading a few regions need not pay at
// start). Tests may swap it via useMetadata.
var (
	currentMetadata *metadataContainer
	metadataOnce    sync.Once
)

// metadata returns the active container, building it on first use.
func metadata() *metadataContainer {
	metadataOnce.Do(initMetadata)
	return currentMetadata
}

func initMetadata() {
	// load our regions
	regionMap, err := loadIntArrayMap(regionData)
	if err != nil {
		panic(err)
	}
	mc := &metadataContainer{
		countryCodeToRegion:                  regionMap.Map,
		nanpaRegions:                         make(map[string]struct{}),
		supportedRegions:                     make(map[string]bool, 320),
		supportedCallingCodes:                make(map[int]bool, 320),
		countryCodesForNonGeographicalRegion: make(map[int]bool, 16),
		lazy:                                 &lazyMetadata{data: numberData},
	}
	mc.deriveRegionSets()
	currentMetadata = mc
}

// lazyMetadata decodes the embedded metadata collection one region at a
// time: the collection is only split into its regions' encodings (a scan of
// the wire format) when a region is first read, and each region is
// unmarshalled when it is first read.
type lazyMetadata struct {
	data []byte // the encoded PhoneMetadataCollection

	mu      sync.Mutex
	encoded map[string][]byte         // by region id; by "+<code>" for non-geographical entities
	decoded map[string]*PhoneMetadata // what has been read, by the same key
}

func (l *lazyMetadata) get(key string) (*PhoneMetadata, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.encoded == nil {
		if err := l.split(); err != nil {
			panic(err)
		}
	}
	if m, ok := l.decoded[key]; ok {
		return m, m != nil
	}
	b, ok := l.encoded[key]
	var m *PhoneMetadata
	if ok {
		m = &PhoneMetadata{}
		if err := proto.Unmarshal(b, m); err != nil {
			panic(err)
		}
	}
	l.decoded[key] = m
	return m, m != nil
}

// split indexes the collection's repeated metadata (field 1) by each
// element's id (field 9) or, for the non-geographical entity "001", its
// country code (field 10).
func (l *lazyMetadata) split() error {
	raw := l.data
	l.encoded = make(map[string][]byte, 256)
	l.decoded = make(map[string]*PhoneMetadata, 16)
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return protowire.ParseError(n)
		}
		raw = raw[n:]
		if num != 1 || typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, raw)
			if n < 0 {
				return protowire.ParseError(n)
			}
			raw = raw[n:]
			continue
		}
		elem, n := protowire.ConsumeBytes(raw)
		if n < 0 {
			return protowire.ParseError(n)
		}
		raw = raw[n:]
		id, code, err := metadataKey(elem)
		if err != nil {
			return err
		}
		if id == REGION_CODE_FOR_NON_GEO_ENTITY {
			id = fmt.Sprintf("+%d", code)
		}
		l.encoded[id] = elem
	}
	return nil
}

// metadataKey reads the id and country code of one encoded PhoneMetadata.
func metadataKey(b []byte) (id string, code uint64, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", 0, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == 9 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return "", 0, protowire.ParseError(n)
			}
			id = string(v)
			b = b[n:]
		case num == 10 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return "", 0, protowire.ParseError(n)
			}
			code = v
			b = b[n:]
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return "", 0, protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return id, code, nil
}

// newMetadataContainer builds a fully populated metadataContainer from a parsed
// metadata collection and a country-code-to-region map. This is the same
// derivation the library has always performed at init, now factored out so it
// can run against any metadata source, not just the embedded one.
func newMetadataContainer(coll *PhoneMetadataCollection, countryCodeToRegion map[int][]string) (*metadataContainer, error) {
	metadataList := coll.GetMetadata()
	if len(metadataList) == 0 {
		return nil, ErrEmptyMetadata
	}

	mc := &metadataContainer{
		metadataCollection:                      coll,
		countryCodeToRegion:                     countryCodeToRegion,
		regionToMetadataMap:                     make(map[string]*PhoneMetadata),
		countryCodeToNonGeographicalMetadataMap: make(map[int]*PhoneMetadata),
		nanpaRegions:                            make(map[string]struct{}),
		supportedRegions:                        make(map[string]bool, 320),
		supportedCallingCodes:                   make(map[int]bool, 320),
		countryCodesForNonGeographicalRegion:    make(map[int]bool, 16),
	}

	for _, meta := range metadataList {
		region := meta.GetId()
		if region == "001" {
			// it's a non geographical entity
			mc.countryCodeToNonGeographicalMetadataMap[int(meta.GetCountryCode())] = meta
		} else {
			mc.regionToMetadataMap[region] = meta
		}
	}

	mc.deriveRegionSets()

	return mc, nil
}

// deriveRegionSets fills the sets derived from countryCodeToRegion.
func (mc *metadataContainer) deriveRegionSets() {
	for eKey, regionCodes := range mc.countryCodeToRegion {
		// We can assume that if the county calling code maps to the
		// non-geo entity region code then that's the only region code
		// it maps to.
		if len(regionCodes) == 1 && REGION_CODE_FOR_NON_GEO_ENTITY == regionCodes[0] {
			// This is the subset of all country codes that map to the
			// non-geo entity region code.
			mc.countryCodesForNonGeographicalRegion[eKey] = true
		} else {
			// The supported regions set does not include the "001"
			// non-geo entity region code.
			for _, val := range regionCodes {
				mc.supportedRegions[val] = true
			}
		}

		mc.supportedCallingCodes[eKey] = true
	}
	// If the non-geo entity still got added to the set of supported regions it
	// must be because there are entries that list the non-geo entity alongside
	// normal regions (which is wrong). If we discover this, remove the non-geo
	// entity from the set of supported regions.
	delete(mc.supportedRegions, REGION_CODE_FOR_NON_GEO_ENTITY)

	for _, val := range mc.countryCodeToRegion[NANPA_COUNTRY_CODE] {
		mc.nanpaRegions[val] = struct{}{}
	}

}

// useMetadata swaps the active metadata container, returning a function that
// restores the previously active container. It is intended for tests that need
// to run against alternate (e.g. synthetic) metadata; callers must invoke the
// returned restore function (typically via t.Cleanup) and must not run such
// tests in parallel, since the active container is process-global.
func useMetadata(mc *metadataContainer) (restore func()) {
	prev := metadata()
	currentMetadata = mc
	return func() { currentMetadata = prev }
}

func readFromNanpaRegions(key string) (struct{}, bool) {
	v, ok := metadata().nanpaRegions[key]
	return v, ok
}

func readFromRegionToMetadataMap(key string) (*PhoneMetadata, bool) {
	mc := metadata()
	if mc.lazy != nil {
		return mc.lazy.get(key)
	}
	v, ok := mc.regionToMetadataMap[key]
	return v, ok
}

func readFromCountryCodeToNonGeographicalMetadataMap(key int) (*PhoneMetadata, bool) {
	mc := metadata()
	if mc.lazy != nil {
		return mc.lazy.get("+" + strconv.Itoa(key))
	}
	v, ok := mc.countryCodeToNonGeographicalMetadataMap[key]
	return v, ok
}

var (
	currMetadataColl *PhoneMetadataCollection
	reloadMetadata   = true
)

// MetadataCollection returns the embedded territory metadata collection. The
// result is parsed once and cached; it always reflects the embedded data and
// is independent of any container swapped in via useMetadata.
func MetadataCollection() (*PhoneMetadataCollection, error) {
	if !reloadMetadata {
		return currMetadataColl, nil
	}

	metadataCollection := &PhoneMetadataCollection{}
	if err := proto.Unmarshal(numberData, metadataCollection); err != nil {
		return nil, err
	}
	currMetadataColl = metadataCollection
	reloadMetadata = false
	return metadataCollection, nil
}
