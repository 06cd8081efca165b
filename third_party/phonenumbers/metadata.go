package phonenumbers

import _ "embed"

//go:embed data/countrycode_to_region.xml.gz
var regionData []byte

// numberData is the encoded PhoneMetadataCollection, v1.8.1's
// data/metadata.xml.gz uncompressed: gunzipping it took about 2 ms of the
// first read, for 140 KB more binary.
//
//go:embed data/metadata.pb
var numberData []byte
