package buckets_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/pb/sketchpb"
	"github.com/DataDog/sketches-go/ddsketch/store"
	"google.golang.org/protobuf/proto"

	"github.com/voiceops/opsapi/shared/buckets"
	"github.com/voiceops/opsapi/shared/metrics"
)

// mustEncode encodes a sketch or fails the test.
func mustEncode(tb testing.TB, s *ddsketch.DDSketch) []byte {
	tb.Helper()
	b, err := buckets.EncodeSketch(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func mustEncodeProto(tb testing.TB, pb *sketchpb.DDSketch) []byte {
	tb.Helper()
	b, err := proto.Marshal(pb)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// sameSketch reports whether two sketches hold the same bins.
func sameSketch(a, b *ddsketch.DDSketch) bool {
	if a.GetCount() != b.GetCount() || a.GetZeroCount() != b.GetZeroCount() {
		return false
	}
	bins := map[float64]float64{}
	a.ForEach(func(v, c float64) bool { bins[v] += c; return false })
	b.ForEach(func(v, c float64) bool { bins[v] -= c; return false })
	for _, c := range bins {
		if c != 0 {
			return false
		}
	}
	return true
}

func TestSketchRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []float64
	}{
		{"empty", nil},
		{"one", []float64{812}},
		{"zeros", []float64{0, 0, 0}},
		{"range", []float64{0.001, 1, 10, 100, 1000, 10_000, metrics.MaxLatencyMS}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := buckets.NewSketch()
			for _, v := range tc.values {
				if err := s.Add(v); err != nil {
					t.Fatal(err)
				}
			}
			got, err := buckets.DecodeSketch(mustEncode(t, s))
			if err != nil {
				t.Fatal(err)
			}
			if !sameSketch(s, got) {
				t.Errorf("decoded sketch differs")
			}
			// The decoded sketch merges with fresh ones.
			if err := got.MergeWith(buckets.NewSketch()); err != nil {
				t.Errorf("MergeWith: %v", err)
			}
		})
	}
}

func TestDecodeSketchRefuses(t *testing.T) {
	other, _ := ddsketch.NewDefaultDDSketch(0.05)
	_ = other.Add(10)
	negative := buckets.NewSketch()
	_ = negative.Add(-10)
	huge := buckets.NewSketch()
	_ = huge.Add(1e12)
	tiny := buckets.NewSketch()
	_ = tiny.Add(1e-200)
	m, _ := mapping.NewLogarithmicMapping(metrics.RelativeAccuracy)
	negCount := ddsketch.NewDDSketch(m, store.NewDenseStore(), store.NewDenseStore())
	_ = negCount.AddWithCount(10, 1)
	pb := negCount.ToProto()
	pb.PositiveValues.ContiguousBinCounts[0] = -1
	negPB := mustEncodeProto(t, pb)
	for name, b := range map[string][]byte{
		"not protobuf":         []byte("\xff\xff\xff"),
		"no mapping":           {},
		"another accuracy":     mustEncode(t, other),
		"a negative value":     mustEncode(t, negative),
		"a value out of range": mustEncode(t, huge),
		"a tiny value":         mustEncode(t, tiny),
		"a negative count":     negPB,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := buckets.DecodeSketch(b); err == nil {
				t.Errorf("DecodeSketch accepted it")
			}
		})
	}
}

// FuzzSketchRoundTrip: any latencies the intake accepts survive an encode
// and decode unchanged, and DecodeSketch never panics on any input.
func FuzzSketchRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add(binary.LittleEndian.AppendUint64(nil, math.Float64bits(812.5)))
	f.Add(mustEncode(f, buckets.NewSketch()))
	f.Fuzz(func(t *testing.T, data []byte) {
		// As encoded bytes: decoding must not panic; what decodes
		// re-encodes to a sketch that decodes to the same.
		if s, err := buckets.DecodeSketch(data); err == nil {
			again, err := buckets.DecodeSketch(mustEncode(t, s))
			if err != nil || !sameSketch(s, again) {
				t.Fatalf("a decoded sketch does not round-trip: %v", err)
			}
		}
		// As latencies: every 8 bytes one value, folded into the range.
		s := buckets.NewSketch()
		for len(data) >= 8 {
			v := math.Float64frombits(binary.LittleEndian.Uint64(data))
			data = data[8:]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			v = math.Mod(math.Abs(v), metrics.MaxLatencyMS)
			if v < 0.001 {
				v = 0
			}
			if err := s.Add(v); err != nil {
				t.Fatalf("Add(%v): %v", v, err)
			}
		}
		got, err := buckets.DecodeSketch(mustEncode(t, s))
		if err != nil {
			t.Fatalf("DecodeSketch: %v", err)
		}
		if !sameSketch(s, got) {
			t.Fatal("decoded sketch differs")
		}
	})
}
