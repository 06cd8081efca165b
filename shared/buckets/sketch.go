package buckets

import (
	"errors"
	"fmt"
	"math"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/pb/sketchpb"
	"github.com/DataDog/sketches-go/ddsketch/store"
	"google.golang.org/protobuf/proto"

	"github.com/voiceops/opsapi/shared/metrics"
)

// sketchMapping is the index mapping of every sketch: logarithmic, with
// metrics.RelativeAccuracy. Sketches merge only when their mappings are equal.
var sketchMapping = func() mapping.IndexMapping {
	m, err := mapping.NewLogarithmicMapping(metrics.RelativeAccuracy)
	if err != nil {
		panic(err) // metrics.RelativeAccuracy is a constant in (0, 1)
	}
	return m
}()

// The range of bin indexes a stored sketch may hold: latencies from
// minLatencyMS to metrics.MaxLatencyMS, with a bin of margin either side.
var (
	minBinIndex = sketchMapping.Index(minLatencyMS) - 1
	maxBinIndex = sketchMapping.Index(metrics.MaxLatencyMS) + 1
)

// NewSketch returns an empty latency sketch with this package's accuracy.
func NewSketch() *ddsketch.DDSketch {
	return ddsketch.NewDDSketch(sketchMapping, store.NewDenseStore(), store.NewDenseStore())
}

// EncodeSketch returns the protobuf encoding of a sketch (DDSketch's
// portable format), as the DynamoDB store keeps it.
func EncodeSketch(s *ddsketch.DDSketch) ([]byte, error) {
	if s == nil {
		return nil, errors.New("metrics: no sketch to encode")
	}
	return proto.Marshal(s.ToProto())
}

// DecodeSketch decodes what EncodeSketch wrote. It refuses, without
// allocating in proportion to them, sketches that this package cannot have
// written: another mapping, negative or non-finite counts, negative values,
// bins outside the range of latencies.
func DecodeSketch(b []byte) (*ddsketch.DDSketch, error) {
	var pb sketchpb.DDSketch
	if err := proto.Unmarshal(b, &pb); err != nil {
		return nil, fmt.Errorf("metrics: decoding a sketch: %w", err)
	}
	m, err := mapping.FromProto(pb.Mapping)
	if err != nil {
		return nil, fmt.Errorf("metrics: decoding a sketch: %w", err)
	}
	if !sketchMapping.Equals(m) {
		return nil, errors.New("metrics: decoding a sketch: another index mapping")
	}
	if !validCount(pb.ZeroCount) {
		return nil, fmt.Errorf("metrics: decoding a sketch: zero count %v", pb.ZeroCount)
	}
	if err := checkStore(pb.NegativeValues, true); err != nil {
		return nil, fmt.Errorf("metrics: decoding a sketch: negative values: %w", err)
	}
	if err := checkStore(pb.PositiveValues, false); err != nil {
		return nil, fmt.Errorf("metrics: decoding a sketch: positive values: %w", err)
	}
	pb.NegativeValues = nil
	s, err := ddsketch.FromProto(&pb)
	if err != nil {
		return nil, fmt.Errorf("metrics: decoding a sketch: %w", err)
	}
	// FromProto built its own mapping; use the shared one (equal to it).
	s.IndexMapping = sketchMapping
	return s, nil
}

// checkSketch reports whether s is a sketch this package could have made:
// its mapping, no negative values, bins within the range of latencies. Only
// such sketches are stored, so every stored sketch decodes.
func checkSketch(s *ddsketch.DDSketch) error {
	if !sketchMapping.Equals(s.IndexMapping) {
		return errors.New("another index mapping")
	}
	if !s.GetNegativeValueStore().IsEmpty() {
		return errors.New("negative values")
	}
	pos := s.GetPositiveValueStore()
	if pos.IsEmpty() {
		return nil
	}
	lo, _ := pos.MinIndex()
	hi, _ := pos.MaxIndex()
	if lo < minBinIndex || hi > maxBinIndex {
		return fmt.Errorf("values outside %v to %d ms", minLatencyMS, metrics.MaxLatencyMS)
	}
	return nil
}

func validCount(c float64) bool { return c >= 0 && !math.IsInf(c, 1) }

// checkStore checks the bins of a store: indexes within range, counts
// finite and non-negative; when empty is set, every count must be zero.
func checkStore(st *sketchpb.Store, empty bool) error {
	if st == nil {
		return nil
	}
	check := func(index int64, count float64) error {
		switch {
		case !validCount(count):
			return fmt.Errorf("bin %d has count %v", index, count)
		case empty && count != 0:
			return fmt.Errorf("bin %d is not empty", index)
		case count != 0 && (index < int64(minBinIndex) || index > int64(maxBinIndex)):
			return fmt.Errorf("bin %d is outside %d to %d", index, minBinIndex, maxBinIndex)
		}
		return nil
	}
	for i, c := range st.BinCounts {
		if err := check(int64(i), c); err != nil {
			return err
		}
	}
	if len(st.ContiguousBinCounts) > maxBinIndex-minBinIndex+1 {
		return fmt.Errorf("%d contiguous bins, at most %d", len(st.ContiguousBinCounts), maxBinIndex-minBinIndex+1)
	}
	for i, c := range st.ContiguousBinCounts {
		if err := check(int64(st.ContiguousBinIndexOffset)+int64(i), c); err != nil {
			return err
		}
	}
	return nil
}
