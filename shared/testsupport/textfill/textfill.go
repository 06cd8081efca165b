// Package textfill gives a record's empty text fields values naming them,
// so that tests comparing whole records (round trips, patches, bodies)
// cover a text field added to the record with no edit of their fixtures.
package textfill

import (
	"reflect"
)

// Fill sets every empty string field of the struct *rec, and every nil
// *string field, to its name and suffix. Fields tagged `store:"-"` (never
// stored) are left alone.
func Fill(rec any, suffix string) {
	v := reflect.ValueOf(rec).Elem()
	for i := range v.NumField() {
		sf, f := v.Type().Field(i), v.Field(i)
		if sf.Tag.Get("store") == "-" || !sf.IsExported() {
			continue
		}
		text := sf.Name + " " + suffix
		switch {
		case f.Kind() == reflect.String && f.String() == "":
			f.SetString(text)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.String && f.IsNil():
			p := reflect.New(f.Type().Elem())
			p.Elem().SetString(text)
			f.Set(p)
		}
	}
}
