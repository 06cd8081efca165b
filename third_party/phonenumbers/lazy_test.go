package phonenumbers

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

// Every region and non-geographical entity read lazily is the one the
// eagerly decoded collection holds.
func TestLazyMetadataMatchesCollection(t *testing.T) {
	coll, err := MetadataCollection()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range coll.GetMetadata() {
		var got *PhoneMetadata
		var ok bool
		if want.GetId() == REGION_CODE_FOR_NON_GEO_ENTITY {
			got, ok = readFromCountryCodeToNonGeographicalMetadataMap(int(want.GetCountryCode()))
		} else {
			got, ok = readFromRegionToMetadataMap(want.GetId())
		}
		if !ok || !proto.Equal(got, want) {
			t.Errorf("region %s (+%d): lazily read metadata differs", want.GetId(), want.GetCountryCode())
		}
	}
	if _, ok := readFromRegionToMetadataMap("QQ"); ok {
		t.Error("an unknown region has metadata")
	}
	if _, ok := readFromRegionToMetadataMap(REGION_CODE_FOR_NON_GEO_ENTITY); ok {
		t.Error(`"001" has region metadata`)
	}
	for region := range GetSupportedRegions() {
		if _, ok := readFromRegionToMetadataMap(region); !ok {
			t.Errorf("supported region %s has no metadata", region)
		}
	}
}
