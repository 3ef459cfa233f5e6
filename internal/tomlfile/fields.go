package tomlfile

import (
	"encoding"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// field is a key a Go type accepts, and how it is written in TOML.
type field struct {
	name  string
	table bool // a struct: [name]
	array bool // a slice of structs: [[name]]
}

func (f field) decorated(top bool) string {
	switch {
	case top && f.array:
		return "[[" + f.name + "]]"
	case top && f.table:
		return "[" + f.name + "]"
	}
	return f.name
}

var (
	unmarshalerType     = reflect.TypeFor[toml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// knownKeys returns the keys that v's type accepts inside the table at path,
// in field order; nil when that is not a plain struct (a map, or a type that
// decodes itself), whose keys cannot be listed.
func knownKeys(v any, path toml.Key) []field {
	t := reflect.TypeOf(v)
	for _, part := range path {
		t = element(t)
		if t == nil || t.Kind() != reflect.Struct || decodesItself(t) {
			return nil
		}
		f, ok := lookup(t, part)
		if !ok {
			return nil
		}
		t = f
	}
	t = element(t)
	if t == nil || t.Kind() != reflect.Struct || decodesItself(t) {
		return nil
	}
	return fields(t, nil)
}

// takesAny reports whether key k lies inside a value of v's type that is an
// interface: whatever is there was decoded as a whole, though BurntSushi/toml
// lists its keys as undecoded.
func takesAny(v any, k toml.Key) bool {
	t := reflect.TypeOf(v)
	for _, part := range k {
		t = element(t)
		if t == nil {
			return false
		}
		if t.Kind() == reflect.Interface {
			return true
		}
		if t.Kind() != reflect.Struct || decodesItself(t) {
			return false
		}
		f, ok := lookup(t, part)
		if !ok {
			return false
		}
		t = f
	}
	return false
}

// element strips pointers, slices and arrays (a [[table]] key has no index),
// and maps (whose values are tables keyed by any name).
func element(t reflect.Type) reflect.Type {
	for t != nil {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			if decodesItself(t) {
				return t
			}
			t = t.Elem()
		case reflect.Map:
			if t.Key().Kind() != reflect.String {
				return nil
			}
			t = t.Elem()
		default:
			return t
		}
	}
	return nil
}

func decodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(unmarshalerType) || pt.Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

// tomlName returns the key a struct field decodes from, as BurntSushi/toml
// sees it, and false for a field it skips.
func tomlName(f reflect.StructField) (string, bool) {
	if !f.IsExported() && !f.Anonymous {
		return "", false
	}
	tag := f.Tag.Get("toml")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true
}

// fields lists t's keys; embedded structs without a name contribute theirs.
func fields(t reflect.Type, out []field) []field {
	for i := range t.NumField() {
		sf := t.Field(i)
		name, ok := tomlName(sf)
		if !ok {
			continue
		}
		ft := sf.Type
		if sf.Anonymous && sf.Tag.Get("toml") == "" {
			if et := derefPtr(ft); et.Kind() == reflect.Struct {
				out = fields(et, out)
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		f := field{name: name}
		if et := derefPtr(ft); !decodesItself(et) {
			switch et.Kind() {
			case reflect.Struct, reflect.Map:
				f.table = true
			case reflect.Slice, reflect.Array:
				if el := derefPtr(et.Elem()); el.Kind() == reflect.Struct && !decodesItself(el) {
					f.array = true
				}
			}
		}
		out = append(out, f)
	}
	return out
}

func derefPtr(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// lookup returns the type of t's field for key: an exact match first, then
// a case-insensitive one, as BurntSushi/toml matches.
func lookup(t reflect.Type, key string) (reflect.Type, bool) {
	var fold reflect.Type
	var walk func(t reflect.Type) reflect.Type
	walk = func(t reflect.Type) reflect.Type {
		for i := range t.NumField() {
			sf := t.Field(i)
			name, ok := tomlName(sf)
			if !ok {
				continue
			}
			if sf.Anonymous && sf.Tag.Get("toml") == "" {
				if et := derefPtr(sf.Type); et.Kind() == reflect.Struct {
					if ft := walk(et); ft != nil {
						return ft
					}
				}
				continue
			}
			if name == key {
				return sf.Type
			}
			if fold == nil && strings.EqualFold(name, key) {
				fold = sf.Type
			}
		}
		return nil
	}
	if ft := walk(t); ft != nil {
		return ft, true
	}
	return fold, fold != nil
}
