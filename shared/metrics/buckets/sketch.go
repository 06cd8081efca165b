package buckets

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceops/opsapi/shared/metrics"
)

// Sketch is a DDSketch of turn latencies (ms): DDSketch's logarithmic index
// mapping with metrics.RelativeAccuracy, dense bins, a zero count, and
// DDSketch's protobuf format on the wire. It is the part of
// github.com/DataDog/sketches-go this product uses (add, merge, quantile,
// encode, decode), computed exactly as that library computes it; the tests
// hold the two to identical answers and bytes. It exists because the
// library links the protobuf runtime and its descriptor registry (about
// 3 MB of every function that records a latency, and init time); this
// writes and reads the same bytes with protowire alone.
type Sketch struct {
	zero   float64   // values too small for the mapping (0 ms)
	offset int       // index of bins[0]
	bins   []float64 // counts of indexes offset .. offset+len(bins)-1
}

// The mapping: gamma = (1+α)/(1-α); a value v > 0 falls in bin
// floor(log(v)/log(gamma)); bin i stands for the value
// gamma^i * (1 + α') where α' = 1 - 2/(1+gamma), as in sketches-go's
// LogarithmicMapping with index offset 0.
var (
	sketchGamma      = (1 + metrics.RelativeAccuracy) / (1 - metrics.RelativeAccuracy)
	sketchMultiplier = 1 / math.Log(sketchGamma)
	sketchAccuracy   = 1 - 2/(1+sketchGamma)
	// minIndexable: smaller values count as zero (the library's bound).
	minIndexable = math.Max(math.Exp(math.MinInt32/sketchMultiplier+1), 0x1p-1022*sketchGamma)
)

func sketchIndex(v float64) int {
	i := math.Log(v) * sketchMultiplier
	if i >= 0 {
		return int(i)
	}
	return int(i) - 1
}

func sketchValue(i int) float64 { return math.Exp(float64(i)/sketchMultiplier) * (1 + sketchAccuracy) }

// The range of bin indexes a stored sketch may hold: latencies from
// minLatencyMS to metrics.MaxLatencyMS, with a bin of margin either side.
var (
	minBinIndex = sketchIndex(minLatencyMS) - 1
	maxBinIndex = sketchIndex(metrics.MaxLatencyMS) + 1
)

// NewSketch returns an empty latency sketch.
func NewSketch() *Sketch { return &Sketch{} }

// Add counts one value: 0 up to metrics.MaxLatencyMS.
func (s *Sketch) Add(v float64) error {
	switch {
	case math.IsNaN(v) || v < 0:
		return fmt.Errorf("buckets: latency %v", v)
	case v <= minIndexable:
		s.zero++
		return nil
	case v > metrics.MaxLatencyMS:
		return fmt.Errorf("buckets: latency %v ms is more than %d", v, metrics.MaxLatencyMS)
	}
	s.addBin(sketchIndex(v), 1)
	return nil
}

func (s *Sketch) addBin(i int, n float64) {
	if len(s.bins) == 0 {
		s.offset = i
		s.bins = []float64{0}
	}
	if i < s.offset {
		grown := make([]float64, len(s.bins)+s.offset-i)
		copy(grown[s.offset-i:], s.bins)
		s.bins, s.offset = grown, i
	}
	if last := s.offset + len(s.bins) - 1; i > last {
		s.bins = append(s.bins, make([]float64, i-last)...)
	}
	s.bins[i-s.offset] += n
}

// GetCount returns how many values the sketch counts.
func (s *Sketch) GetCount() float64 {
	n := s.zero
	for _, c := range s.bins {
		n += c
	}
	return n
}

// IsEmpty reports whether the sketch counts nothing.
func (s *Sketch) IsEmpty() bool { return s.GetCount() == 0 }

// Copy returns a deep copy.
func (s *Sketch) Copy() *Sketch {
	c := *s
	c.bins = append([]float64(nil), s.bins...)
	return &c
}

// MergeWith adds o's counts to s.
func (s *Sketch) MergeWith(o *Sketch) error {
	s.zero += o.zero
	for i, c := range o.bins {
		if c != 0 {
			s.addBin(o.offset+i, c)
		}
	}
	return nil
}

// GetValueAtQuantile returns the value at quantile q (0 to 1), with
// sketches-go's rank: q*(count-1), the bin whose cumulated count first
// exceeds it.
func (s *Sketch) GetValueAtQuantile(q float64) (float64, error) {
	if q < 0 || q > 1 {
		return math.NaN(), errors.New("buckets: the quantile must be between 0 and 1")
	}
	count := s.GetCount()
	if count == 0 {
		return math.NaN(), errors.New("buckets: no value in the sketch")
	}
	rank := float64(q * (count - 1)) // no fused multiply-add, as in the library
	if rank < s.zero {
		return 0, nil
	}
	rank -= s.zero
	var n float64
	last := s.offset
	for i, c := range s.bins {
		n += c
		if c != 0 {
			last = s.offset + i
		}
		if n > rank {
			return sketchValue(s.offset + i), nil
		}
	}
	return sketchValue(last), nil
}

// bounds returns the lowest and highest bins holding a count.
func (s *Sketch) bounds() (lo, hi int, ok bool) {
	lo, hi = math.MaxInt, math.MinInt
	for i, c := range s.bins {
		if c != 0 {
			lo, hi = min(lo, s.offset+i), max(hi, s.offset+i)
		}
	}
	return lo, hi, lo <= hi
}

// EncodeSketch returns DDSketch's protobuf encoding of a sketch (the
// portable format), as the DynamoDB store keeps it: the bytes sketches-go's
// proto.Marshal(s.ToProto()) writes for the same sketch.
func EncodeSketch(s *Sketch) ([]byte, error) {
	if s == nil {
		return nil, errors.New("buckets: no sketch to encode")
	}
	var mapping []byte
	mapping = protowire.AppendTag(mapping, 1, protowire.Fixed64Type) // gamma
	mapping = protowire.AppendFixed64(mapping, math.Float64bits(sketchGamma))
	var pos []byte
	if lo, hi, ok := s.bounds(); ok {
		var packed []byte
		for i := lo; i <= hi; i++ {
			packed = protowire.AppendFixed64(packed, math.Float64bits(s.bins[i-s.offset]))
		}
		pos = protowire.AppendTag(pos, 2, protowire.BytesType) // contiguousBinCounts
		pos = protowire.AppendBytes(pos, packed)
		if lo != 0 {
			pos = protowire.AppendTag(pos, 3, protowire.VarintType) // contiguousBinIndexOffset (sint32)
			pos = protowire.AppendVarint(pos, protowire.EncodeZigZag(int64(lo)))
		}
	}
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, mapping)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, pos)
	b = protowire.AppendTag(b, 3, protowire.BytesType) // negativeValues: empty
	b = protowire.AppendBytes(b, nil)
	if s.zero != 0 {
		b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(s.zero))
	}
	return b, nil
}

// DecodeSketch decodes DDSketch's protobuf encoding. It refuses, without
// allocating in proportion to them, sketches that this package cannot have
// written: another mapping, negative or non-finite counts, negative values,
// bins outside the range of latencies.
func DecodeSketch(b []byte) (*Sketch, error) {
	s := &Sketch{}
	gamma, interpolation, offset := 0.0, uint64(0), 0.0
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType: // mapping
			return eachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				switch {
				case num == 1 && typ == protowire.Fixed64Type:
					gamma = math.Float64frombits(x)
				case num == 2 && typ == protowire.Fixed64Type:
					offset = math.Float64frombits(x)
				case num == 3 && typ == protowire.VarintType:
					interpolation = x
				}
				return nil
			})
		case num == 2 && typ == protowire.BytesType:
			return decodeStore(v, s, false)
		case num == 3 && typ == protowire.BytesType:
			return decodeStore(v, s, true)
		case num == 4 && typ == protowire.Fixed64Type:
			s.zero = math.Float64frombits(x)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("buckets: decoding a sketch: %w", err)
	}
	if interpolation != 0 || offset != 0 || math.Abs(gamma-sketchGamma) > 1e-12*sketchGamma {
		return nil, errors.New("buckets: decoding a sketch: another index mapping")
	}
	if !validCount(s.zero) {
		return nil, fmt.Errorf("buckets: decoding a sketch: zero count %v", s.zero)
	}
	return s, nil
}

// eachField calls f with each field of a message: its number, type, and
// its bytes (length-delimited) or value (varint, fixed).
func eachField(b []byte, f func(protowire.Number, protowire.Type, []byte, uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// decodeStore adds a store's bins to s: the binCounts map and the
// contiguous counts; a negative store must hold nothing.
func decodeStore(b []byte, s *Sketch, negative bool) error {
	add := func(index int64, count float64) error {
		switch {
		case !validCount(count):
			return fmt.Errorf("bin %d has count %v", index, count)
		case count == 0:
			return nil
		case negative:
			return fmt.Errorf("negative values: bin %d is not empty", index)
		case index < int64(minBinIndex) || index > int64(maxBinIndex):
			return fmt.Errorf("bin %d is outside %d to %d", index, minBinIndex, maxBinIndex)
		}
		s.addBin(int(index), count)
		return nil
	}
	var contiguous []byte
	var start int64
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType: // binCounts map entry
			var key int64
			var count float64
			if err := eachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				switch {
				case num == 1 && typ == protowire.VarintType:
					key = protowire.DecodeZigZag(x & math.MaxUint32)
				case num == 2 && typ == protowire.Fixed64Type:
					count = math.Float64frombits(x)
				}
				return nil
			}); err != nil {
				return err
			}
			return add(key, count)
		case num == 2 && typ == protowire.BytesType:
			contiguous = append(contiguous, v...)
		case num == 2 && typ == protowire.Fixed64Type: // unpacked
			contiguous = protowire.AppendFixed64(contiguous, x)
		case num == 3 && typ == protowire.VarintType:
			start = protowire.DecodeZigZag(x & math.MaxUint32)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(contiguous)%8 != 0 {
		return errors.New("contiguous bins: truncated")
	}
	if n := len(contiguous) / 8; n > maxBinIndex-minBinIndex+1 {
		return fmt.Errorf("%d contiguous bins, at most %d", n, maxBinIndex-minBinIndex+1)
	}
	for i := 0; i < len(contiguous); i += 8 {
		x, _ := protowire.ConsumeFixed64(contiguous[i:])
		if err := add(start+int64(i/8), math.Float64frombits(x)); err != nil {
			return err
		}
	}
	return nil
}

// checkSketch reports whether s is a sketch this package could have made:
// bins within the range of latencies, counts finite and non-negative. Only
// such sketches are stored, so every stored sketch decodes.
func checkSketch(s *Sketch) error {
	if !validCount(s.zero) {
		return fmt.Errorf("zero count %v", s.zero)
	}
	for _, c := range s.bins {
		if !validCount(c) {
			return fmt.Errorf("count %v", c)
		}
	}
	if lo, hi, ok := s.bounds(); ok && (lo < minBinIndex || hi > maxBinIndex) {
		return fmt.Errorf("values outside %v to %d ms", minLatencyMS, metrics.MaxLatencyMS)
	}
	return nil
}

func validCount(c float64) bool { return c >= 0 && !math.IsInf(c, 1) && !math.IsNaN(c) }

// EachBin calls f with the index and count of every non-empty bin, in
// ascending order of index. With ZeroCount and AddBinCount it lets a store
// keep a sketch as one number per bin, which DynamoDB can add to in place
// (shared/store/dynamo/metriclayout.go).
func (s *Sketch) EachBin(f func(index int, count float64)) {
	for i, c := range s.bins {
		if c != 0 {
			f(s.offset+i, c)
		}
	}
}

// ZeroCount returns the count of values too small for the mapping (0 ms).
func (s *Sketch) ZeroCount() float64 { return s.zero }

// AddBinCount adds count to bin index, or with zero to the zero count. It
// refuses what this package cannot have written (as DecodeSketch does):
// a negative or non-finite count, a bin outside the range of latencies.
func (s *Sketch) AddBinCount(index int, zero bool, count float64) error {
	switch {
	case !validCount(count):
		return fmt.Errorf("buckets: bin count %v", count)
	case count == 0:
		return nil
	case zero:
		s.zero += count
		return nil
	case index < minBinIndex || index > maxBinIndex:
		return fmt.Errorf("buckets: bin %d is outside %d to %d", index, minBinIndex, maxBinIndex)
	}
	s.addBin(index, count)
	return nil
}
