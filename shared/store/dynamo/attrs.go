package dynamo

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// attr is one attribute of a record's item: its name, how the record's
// field is written to it and read from it. A record whose item is the list
// of its attrs (rules) is encoded and decoded from that one list, so a new
// field is one entry: it cannot be written and not read, or read and not
// written.
type attr[R any] struct {
	name string
	// enc returns the attribute's value, or nil to leave it out.
	enc func(*R) types.AttributeValue
	dec func(*reader, *R)
}

// encodeAttrs puts every attribute of rec in it.
func encodeAttrs[R any](it item, rec *R, attrs []attr[R]) {
	for _, a := range attrs {
		if v := a.enc(rec); v != nil {
			it[a.name] = v
		}
	}
}

// decodeAttrs reads every attribute of rec from r.
func decodeAttrs[R any](r *reader, rec *R, attrs []attr[R]) {
	for _, a := range attrs {
		a.dec(r, rec)
	}
}

// The kinds of attribute. The required ones (numField, boolField,
// timeField) fail a read of an item without them, so a field added since a
// record's first shape takes an optional kind (opt*Field, strField,
// countField): older items lack its attribute, and it reads as the zero
// value (TestOldItems).

// strField is a string, absent read as "".
func strField[R any, T ~string](name string, f func(*R) *T) attr[R] {
	return attr[R]{name,
		func(r *R) types.AttributeValue { return avS(string(*f(r))) },
		func(rd *reader, r *R) { *f(r) = T(rd.str(name)) }}
}

// nonEmptyStrField is a string left out when "", absent read as "".
func nonEmptyStrField[R any, T ~string](name string, f func(*R) *T) attr[R] {
	return attr[R]{name,
		func(r *R) types.AttributeValue {
			if *f(r) == "" {
				return nil
			}
			return avS(string(*f(r)))
		},
		func(rd *reader, r *R) { *f(r) = T(rd.str(name)) }}
}

// optStrField is an optional string, left out when nil.
func optStrField[R any](name string, f func(*R) **string) attr[R] {
	return attr[R]{name,
		func(r *R) types.AttributeValue { return optAV(*f(r), avS) },
		func(rd *reader, r *R) { *f(r) = rd.optStr(name) }}
}

// numField is a required number.
func numField[R any](name string, f func(*R) *int64) attr[R] {
	return attr[R]{name,
		func(r *R) types.AttributeValue { return avN(*f(r)) },
		func(rd *reader, r *R) { *f(r) = rd.num(name) }}
}

// countField is a number left out when 0, absent read as 0.
func countField[R any](name string, f func(*R) *int64) attr[R] {
	return attr[R]{name,
		func(r *R) types.AttributeValue {
			if *f(r) == 0 {
				return nil
			}
			return avN(*f(r))
		},
		func(rd *reader, r *R) {
			if n := rd.optNum(name); n != nil {
				*f(r) = *n
			}
		}}
}

// optNumField is an optional number, left out when nil.
func optNumField[R any](name string, f func(*R) **int64) attr[R] {
	return attr[R]{name,
		func(r *R) types.AttributeValue { return optAV(*f(r), avN) },
		func(rd *reader, r *R) { *f(r) = rd.optNum(name) }}
}

// boolField is a required boolean.
func boolField[R any](name string, f func(*R) *bool) attr[R] {
	return attr[R]{name,
		func(r *R) types.AttributeValue { return avB(*f(r)) },
		func(rd *reader, r *R) { *f(r) = rd.boolean(name) }}
}

// timeField is a required time (avT).
func timeField[R any](name string, f func(*R) *time.Time) attr[R] {
	return attr[R]{name,
		func(r *R) types.AttributeValue { return avT(*f(r)) },
		func(rd *reader, r *R) { *f(r) = rd.time(name) }}
}

// optTimeField is an optional time, left out when nil.
func optTimeField[R any](name string, f func(*R) **time.Time) attr[R] {
	return attr[R]{name,
		func(r *R) types.AttributeValue { return optAV(*f(r), avT) },
		func(rd *reader, r *R) { *f(r) = rd.optTime(name) }}
}

func optAV[T any](p *T, enc func(T) types.AttributeValue) types.AttributeValue {
	if p == nil {
		return nil
	}
	return enc(*p)
}
