package buckets_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/pb/sketchpb"
	"github.com/DataDog/sketches-go/ddsketch/store"
	"google.golang.org/protobuf/proto"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
)

// buckets.Sketch is held to github.com/DataDog/sketches-go, the reference
// DDSketch: the same quantiles, the same bytes, each decoding the other's.

// libSketch is the library's sketch of values, configured as the product's.
func libSketch(tb testing.TB, values []float64) *ddsketch.DDSketch {
	tb.Helper()
	m, err := mapping.NewLogarithmicMapping(metrics.RelativeAccuracy)
	if err != nil {
		tb.Fatal(err)
	}
	s := ddsketch.NewDDSketch(m, store.NewDenseStore(), store.NewDenseStore())
	for _, v := range values {
		if err := s.Add(v); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

func ourSketch(tb testing.TB, values []float64) *buckets.Sketch {
	tb.Helper()
	s := buckets.NewSketch()
	for _, v := range values {
		if err := s.Add(v); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

// mustEncode encodes a sketch or fails the test.
func mustEncode(tb testing.TB, s *buckets.Sketch) []byte {
	tb.Helper()
	b, err := buckets.EncodeSketch(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func libEncode(tb testing.TB, s *ddsketch.DDSketch) []byte {
	tb.Helper()
	b, err := proto.Marshal(s.ToProto())
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

var quantiles = []float64{0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1}

// sameAnswers fails unless a (ours) and b (the library's) count and rank
// alike.
func sameAnswers(tb testing.TB, what string, a *buckets.Sketch, b *ddsketch.DDSketch) {
	tb.Helper()
	if a.GetCount() != b.GetCount() {
		tb.Fatalf("%s: count %v, library %v", what, a.GetCount(), b.GetCount())
	}
	if a.GetCount() == 0 {
		return
	}
	for _, q := range quantiles {
		got, err1 := a.GetValueAtQuantile(q)
		want, err2 := b.GetValueAtQuantile(q)
		if err1 != nil || err2 != nil || got != want {
			tb.Fatalf("%s: q%v = %v (%v), library %v (%v)", what, q, got, err1, want, err2)
		}
	}
}

func latencies(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		switch rng.IntN(10) {
		case 0:
			out[i] = 0
		case 1:
			out[i] = 0.001 + rng.Float64()
		default:
			out[i] = math.Exp(rng.Float64() * math.Log(metrics.MaxLatencyMS)) // log-uniform up to a day
		}
	}
	return out
}

func TestSketchMatchesTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := [][]float64{nil, {812}, {0, 0, 0}, {0.001, 1, 10, 100, 1000, 10_000, metrics.MaxLatencyMS}}
	for i := 0; i < 200; i++ {
		cases = append(cases, latencies(rng, 1+rng.IntN(500)))
	}
	for i, values := range cases {
		ours, lib := ourSketch(t, values), libSketch(t, values)
		sameAnswers(t, "built", ours, lib)
		b := mustEncode(t, ours)
		if want := libEncode(t, lib); !bytes.Equal(b, want) {
			t.Fatalf("case %d: encoding %x, library %x", i, b, want)
		}
		dec, err := buckets.DecodeSketch(libEncode(t, lib))
		if err != nil {
			t.Fatalf("case %d: decoding the library's bytes: %v", i, err)
		}
		sameAnswers(t, "decoded", dec, lib)
		var pb sketchpb.DDSketch
		if err := proto.Unmarshal(b, &pb); err != nil {
			t.Fatal(err)
		}
		back, err := ddsketch.FromProto(&pb)
		if err != nil {
			t.Fatalf("case %d: the library decoding ours: %v", i, err)
		}
		sameAnswers(t, "decoded by the library", ours, back)
		// Merging halves is the whole.
		half := len(values) / 2
		a, b2 := ourSketch(t, values[:half]), ourSketch(t, values[half:])
		_ = a.MergeWith(b2)
		sameAnswers(t, "merged", a, lib)
		if c := ours.Copy(); !bytes.Equal(mustEncode(t, c), mustEncode(t, ours)) {
			t.Fatal("Copy differs")
		}
	}
}

func TestSketchRefusesWhatNoLatencyIs(t *testing.T) {
	for _, v := range []float64{-1, math.NaN(), metrics.MaxLatencyMS + 1, math.Inf(1)} {
		if err := buckets.NewSketch().Add(v); err == nil {
			t.Errorf("Add(%v) accepted", v)
		}
	}
}

func TestDecodeSketchRefuses(t *testing.T) {
	other, _ := ddsketch.NewDefaultDDSketch(0.05)
	_ = other.Add(10)
	negative := libSketch(t, []float64{-10})
	huge := libSketch(t, []float64{1e12})
	tiny := libSketch(t, []float64{1e-200})
	negCount := libSketch(t, []float64{10})
	pb := negCount.ToProto()
	pb.PositiveValues.ContiguousBinCounts[0] = -1
	negPB, _ := proto.Marshal(pb)
	manyBins := libSketch(t, nil).ToProto()
	manyBins.PositiveValues = &sketchpb.Store{ContiguousBinCounts: make([]float64, 100_000), ContiguousBinIndexOffset: -50}
	manyPB, _ := proto.Marshal(manyBins)
	for name, b := range map[string][]byte{
		"not protobuf":         []byte("\xff\xff\xff"),
		"no mapping":           {},
		"another accuracy":     libEncode(t, other),
		"a negative value":     libEncode(t, negative),
		"a value out of range": libEncode(t, huge),
		"a tiny value":         libEncode(t, tiny),
		"a negative count":     negPB,
		"too many bins":        manyPB,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := buckets.DecodeSketch(b); err == nil {
				t.Errorf("DecodeSketch accepted it")
			}
		})
	}
}

// FuzzSketchRoundTrip: any latencies the intake accepts survive an encode
// and decode unchanged (and as the library reads them), and DecodeSketch
// never panics on any input.
func FuzzSketchRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add(binary.LittleEndian.AppendUint64(nil, math.Float64bits(812.5)))
	f.Add(mustEncode(f, buckets.NewSketch()))
	f.Fuzz(func(t *testing.T, data []byte) {
		// As encoded bytes: decoding must not panic; what decodes
		// re-encodes to a sketch that decodes to the same.
		if s, err := buckets.DecodeSketch(data); err == nil {
			b := mustEncode(t, s)
			again, err := buckets.DecodeSketch(b)
			if err != nil || !bytes.Equal(mustEncode(t, again), b) {
				t.Fatalf("a decoded sketch does not round-trip: %v", err)
			}
		}
		// As latencies: every 8 bytes one value, folded into the range.
		var values []float64
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
			values = append(values, v)
		}
		ours := ourSketch(t, values)
		got, err := buckets.DecodeSketch(mustEncode(t, ours))
		if err != nil {
			t.Fatalf("DecodeSketch: %v", err)
		}
		sameAnswers(t, "round trip", got, libSketch(t, values))
	})
}
