package rhai

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Kind is the dynamic type of a Value.
type Kind uint8

// The value kinds of the supported subset.
const (
	KindUnit Kind = iota
	KindBool
	KindInt
	KindFloat
	KindChar
	KindString
	KindArray
	KindMap
	KindFn
	KindRange
)

// String returns the name type_of reports for the kind.
func (k Kind) String() string {
	switch k {
	case KindUnit:
		return "()"
	case KindBool:
		return "bool"
	case KindInt:
		return "i64"
	case KindFloat:
		return "f64"
	case KindChar:
		return "char"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	case KindMap:
		return "map"
	case KindFn:
		return "Fn"
	case KindRange:
		return "range"
	}
	return "unknown"
}

// Value is one Rhai value. The zero Value is unit, `()`.
//
// Arrays and maps are reference types inside the interpreter but have value
// semantics in the language: a value read from a variable, element or
// property and stored elsewhere shares its storage copy-on-write.
type Value struct {
	k Kind
	n int64 // bool (0/1), int, char, float bits, range start
	s string
	p any // *Array, *Map, *FnPtr, *Range
}

// Array is the storage of an array value. Shared storage (see share) must
// not be changed: the interpreter copies it first.
type Array struct {
	Elems  []Value
	shared bool
}

// Map is the storage of an object map value; shared like Array.
type Map struct {
	M      map[string]Value
	shared bool
}

// Range is an integer range value, exclusive or inclusive of End.
type Range struct {
	Start, End int64
	Inclusive  bool
}

// FnPtr is a function pointer: a named script function, or a closure, with
// curried arguments.
type FnPtr struct {
	Name    string
	closure *closureDef
	shared  []*Value // captured cells, bound in order of closure.captures
	curried []Value
}

// Constructors.

// Unit returns `()`.
func Unit() Value { return Value{} }

// Bool returns a boolean value.
func Bool(b bool) Value {
	if b {
		return Value{k: KindBool, n: 1}
	}
	return Value{k: KindBool}
}

// Int returns an integer value.
func Int(i int64) Value { return Value{k: KindInt, n: i} }

// Float returns a floating-point value.
func Float(f float64) Value { return Value{k: KindFloat, n: int64(math.Float64bits(f))} }

// Char returns a character value.
func Char(r rune) Value { return Value{k: KindChar, n: int64(r)} }

// String returns a string value.
func String(s string) Value { return Value{k: KindString, s: s} }

// NewArray returns an array value holding elems (not copied).
func NewArray(elems []Value) Value { return Value{k: KindArray, p: &Array{Elems: elems}} }

// NewMap returns a map value holding m (not copied).
func NewMap(m map[string]Value) Value {
	if m == nil {
		m = map[string]Value{}
	}
	return Value{k: KindMap, p: &Map{M: m}}
}

func rangeValue(start, end int64, inclusive bool) Value {
	return Value{k: KindRange, p: &Range{Start: start, End: end, Inclusive: inclusive}}
}

func fnValue(f *FnPtr) Value { return Value{k: KindFn, p: f} }

// Accessors.

// Kind returns the value's dynamic type.
func (v Value) Kind() Kind { return v.k }

// IsUnit reports whether v is `()`.
func (v Value) IsUnit() bool { return v.k == KindUnit }

// AsBool returns the boolean and whether v is one.
func (v Value) AsBool() (bool, bool) { return v.n != 0, v.k == KindBool }

// AsInt returns the integer and whether v is one.
func (v Value) AsInt() (int64, bool) { return v.n, v.k == KindInt }

// AsFloat returns the float and whether v is one.
func (v Value) AsFloat() (float64, bool) { return v.float(), v.k == KindFloat }

// AsChar returns the character and whether v is one.
func (v Value) AsChar() (rune, bool) { return rune(v.n), v.k == KindChar }

// AsString returns the string and whether v is one.
func (v Value) AsString() (string, bool) { return v.s, v.k == KindString }

// AsArray returns the elements and whether v is an array. The slice may be
// shared with other values (copy-on-write): treat it as read-only.
func (v Value) AsArray() ([]Value, bool) {
	if v.k != KindArray {
		return nil, false
	}
	return v.p.(*Array).Elems, true
}

// AsMap returns the map and whether v is a map. It may be shared with other
// values (copy-on-write): treat it as read-only.
func (v Value) AsMap() (map[string]Value, bool) {
	if v.k != KindMap {
		return nil, false
	}
	return v.p.(*Map).M, true
}

func (v Value) float() float64 { return math.Float64frombits(uint64(v.n)) }
func (v Value) arr() *Array    { return v.p.(*Array) }
func (v Value) mp() *Map       { return v.p.(*Map) }
func (v Value) fn() *FnPtr     { return v.p.(*FnPtr) }
func (v Value) rng() *Range    { return v.p.(*Range) }

// TypeName is what type_of returns for v.
func (v Value) TypeName() string {
	if v.k == KindRange && v.rng().Inclusive {
		return "range="
	}
	return v.k.String()
}

// share marks an array's or map's storage as shared and returns v: copying
// a container is O(1) (copy-on-write). Whoever changes shared storage next
// takes a private copy of one level first (unshared); the storage itself is
// never changed again.
func (v Value) share() Value {
	switch v.k {
	case KindArray:
		v.arr().shared = true
	case KindMap:
		v.mp().shared = true
	}
	return v
}

// isShared reports whether v is a container whose storage is shared.
func (v Value) isShared() bool {
	switch v.k {
	case KindArray:
		return v.arr().shared
	case KindMap:
		return v.mp().shared
	}
	return false
}

// unshared returns a private copy of one level of a container; the elements
// are now held by both copies, so they become shared in turn.
func (v Value) unshared() Value {
	switch v.k {
	case KindArray:
		src := v.arr().Elems
		dst := make([]Value, len(src), len(src)+len(src)/4+1)
		for i, e := range src {
			dst[i] = e.share()
		}
		return NewArray(dst)
	case KindMap:
		src := v.mp().M
		dst := make(map[string]Value, len(src))
		for k, e := range src {
			dst[k] = e.share()
		}
		return NewMap(dst)
	}
	return v
}

// countNodes counts the arrays and maps inside v, stopping at limit.
func countNodes(v Value, limit int) int {
	n := 0
	var walk func(Value)
	walk = func(v Value) {
		if n > limit {
			return
		}
		switch v.k {
		case KindArray:
			n++
			for _, e := range v.arr().Elems {
				walk(e)
			}
		case KindMap:
			n++
			for _, e := range v.mp().M {
				walk(e)
			}
		}
	}
	walk(v)
	return n
}

// FromGo converts a Go value to a Value: nil, bool, all integer kinds,
// float32/64, rune is an int32 and so an int (use Char for characters), string,
// []any, []string, []int, []int64, map[string]any, map[string]string and Value.
// Anything else is an error.
func FromGo(x any) (Value, error) {
	switch t := x.(type) {
	case nil:
		return Unit(), nil
	case Value:
		return t, nil
	case bool:
		return Bool(t), nil
	case int:
		return Int(int64(t)), nil
	case int8:
		return Int(int64(t)), nil
	case int16:
		return Int(int64(t)), nil
	case int32:
		return Int(int64(t)), nil
	case int64:
		return Int(t), nil
	case uint8:
		return Int(int64(t)), nil
	case uint16:
		return Int(int64(t)), nil
	case uint32:
		return Int(int64(t)), nil
	case uint:
		if uint64(t) > math.MaxInt64 {
			return Value{}, fmt.Errorf("integer %d overflows i64", t)
		}
		return Int(int64(t)), nil
	case uint64:
		if t > math.MaxInt64 {
			return Value{}, fmt.Errorf("integer %d overflows i64", t)
		}
		return Int(int64(t)), nil
	case float32:
		return Float(float64(t)), nil
	case float64:
		return Float(t), nil
	case string:
		return String(t), nil
	case []string:
		out := make([]Value, len(t))
		for i, s := range t {
			out[i] = String(s)
		}
		return NewArray(out), nil
	case []int:
		out := make([]Value, len(t))
		for i, n := range t {
			out[i] = Int(int64(n))
		}
		return NewArray(out), nil
	case []int64:
		out := make([]Value, len(t))
		for i, n := range t {
			out[i] = Int(n)
		}
		return NewArray(out), nil
	case []any:
		out := make([]Value, len(t))
		for i, e := range t {
			v, err := FromGo(e)
			if err != nil {
				return Value{}, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = v
		}
		return NewArray(out), nil
	case map[string]string:
		m := make(map[string]Value, len(t))
		for k, s := range t {
			m[k] = String(s)
		}
		return NewMap(m), nil
	case map[string]any:
		m := make(map[string]Value, len(t))
		for k, e := range t {
			v, err := FromGo(e)
			if err != nil {
				return Value{}, fmt.Errorf("%s: %w", k, err)
			}
			m[k] = v
		}
		return NewMap(m), nil
	}
	return Value{}, fmt.Errorf("cannot convert Go %T to a rhai value", x)
}

// MustFromGo is FromGo for values known to convert; it panics otherwise, so
// use it only on literals in tests and examples.
func MustFromGo(x any) Value {
	v, err := FromGo(x)
	if err != nil {
		panic(err)
	}
	return v
}

// Go converts v to plain Go: nil, bool, int64, float64, rune (char), string,
// []any, map[string]any; a function pointer becomes its name, a range a
// [2]int64 of its bounds with End exclusive.
func (v Value) Go() any {
	switch v.k {
	case KindUnit:
		return nil
	case KindBool:
		return v.n != 0
	case KindInt:
		return v.n
	case KindFloat:
		return v.float()
	case KindChar:
		return rune(v.n)
	case KindString:
		return v.s
	case KindArray:
		src := v.arr().Elems
		out := make([]any, len(src))
		for i, e := range src {
			out[i] = e.Go()
		}
		return out
	case KindMap:
		out := make(map[string]any, len(v.mp().M))
		for k, e := range v.mp().M {
			out[k] = e.Go()
		}
		return out
	case KindFn:
		return v.fn().Name
	case KindRange:
		r := v.rng()
		end := r.End
		if r.Inclusive {
			end++
		}
		return [2]int64{r.Start, end}
	}
	return nil
}

// String renders v as to_string / print do: strings and chars bare, unit empty.
func (v Value) String() string {
	var b strings.Builder
	v.write(&b, false, math.MaxInt)
	return b.String()
}

// DebugString renders v as debug does: strings quoted, unit as ().
func (v Value) DebugString() string {
	var b strings.Builder
	v.write(&b, true, math.MaxInt)
	return b.String()
}

// write renders v into b; it stops, reporting false, once b holds more than
// limit bytes (shared storage can make a small value print enormously).
func (v Value) write(b *strings.Builder, debug bool, limit int) bool {
	if b.Len() > limit {
		return false
	}
	switch v.k {
	case KindUnit:
		if debug {
			b.WriteString("()")
		}
	case KindBool:
		b.WriteString(strconv.FormatBool(v.n != 0))
	case KindInt:
		b.WriteString(strconv.FormatInt(v.n, 10))
	case KindFloat:
		if debug {
			b.WriteString(debugFloat(v.float()))
		} else {
			b.WriteString(formatFloat(v.float()))
		}
	case KindChar:
		if debug {
			b.WriteString(strconv.QuoteRune(rune(v.n)))
		} else {
			b.WriteRune(rune(v.n))
		}
	case KindString:
		if debug {
			b.WriteString(strconv.Quote(v.s))
		} else {
			b.WriteString(v.s)
		}
	case KindArray:
		b.WriteByte('[')
		for i, e := range v.arr().Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			if !e.write(b, true, limit) {
				return false
			}
		}
		b.WriteByte(']')
	case KindMap:
		b.WriteString("#{")
		for i, k := range sortedKeys(v.mp().M) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(k))
			b.WriteString(": ")
			e := v.mp().M[k]
			if !e.write(b, true, limit) {
				return false
			}
		}
		b.WriteByte('}')
	case KindFn:
		fmt.Fprintf(b, "Fn(%s)", v.fn().Name)
	case KindRange:
		r := v.rng()
		if r.Inclusive {
			fmt.Fprintf(b, "%d..=%d", r.Start, r.End)
		} else {
			fmt.Fprintf(b, "%d..%d", r.Start, r.End)
		}
	}
	return b.Len() <= limit
}

// Rhai prints floats naturally between these bounds (f32 constants in
// Rhai, hence the conversion) and in scientific notation outside them.
var (
	maxNaturalFloat = float64(float32(1e13))
	minNaturalFloat = float64(float32(1e-13))
)

// formatFloat prints a float as Rhai's to_string and print do.
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "NaN"
	case f == 0:
		return "0.0"
	}
	if a := math.Abs(f); a > maxNaturalFloat || a < minNaturalFloat {
		return rustExp(f)
	}
	return naturalFloat(f)
}

// debugFloat prints a float as debug does (Rust's {:?}).
func debugFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) || f == 0 {
		return formatFloat(f)
	}
	if a := math.Abs(f); a >= 1e16 || a < 1e-4 {
		return rustExp(f)
	}
	return naturalFloat(f)
}

func naturalFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// rustExp is Rust's {:e}: shortest mantissa, exponent without sign padding.
func rustExp(f float64) string {
	s := strconv.FormatFloat(f, 'e', -1, 64)
	i := strings.IndexByte(s, 'e')
	exp, _ := strconv.Atoi(s[i+1:])
	return s[:i] + "e" + strconv.Itoa(exp)
}

func sortedKeys(m map[string]Value) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Equal reports whether a and b are equal under Rhai's `==`: numbers compare
// across int and float, a char equals the one-character string, arrays and
// maps compare element-wise, and values of unrelated types are unequal.
func Equal(a, b Value) bool {
	budget := math.MaxInt
	return equalBudget(a, b, &budget)
}

// equalBudget is Equal that spends one unit of *budget per container pair
// compared, and reports false once it runs out (callers check the budget).
func equalBudget(a, b Value, budget *int) bool {
	switch {
	case a.k == b.k:
		switch a.k {
		case KindUnit:
			return true
		case KindFloat:
			return a.float() == b.float()
		case KindString:
			return a.s == b.s
		case KindArray:
			*budget--
			if *budget < 0 {
				return false
			}
			x, y := a.arr().Elems, b.arr().Elems
			if len(x) != len(y) {
				return false
			}
			for i := range x {
				if !equalBudget(x[i], y[i], budget) {
					return false
				}
			}
			return true
		case KindMap:
			*budget--
			if *budget < 0 {
				return false
			}
			x, y := a.mp().M, b.mp().M
			if len(x) != len(y) {
				return false
			}
			for k, xv := range x {
				yv, ok := y[k]
				if !ok || !equalBudget(xv, yv, budget) {
					return false
				}
			}
			return true
		case KindFn:
			return a.fn() == b.fn() || (a.fn().closure == nil && b.fn().closure == nil && a.fn().Name == b.fn().Name && len(a.fn().curried) == 0 && len(b.fn().curried) == 0)
		case KindRange:
			return *a.rng() == *b.rng()
		}
		return a.n == b.n
	case a.k == KindInt && b.k == KindFloat:
		return float64(a.n) == b.float()
	case a.k == KindFloat && b.k == KindInt:
		return a.float() == float64(b.n)
	case a.k == KindChar && b.k == KindString:
		return string(rune(a.n)) == b.s
	case a.k == KindString && b.k == KindChar:
		return a.s == string(rune(b.n))
	}
	return false
}

// strictEqual is switch matching: same type and same value, no numeric or
// char/string coercion (Rhai's switch matches by hash).
func strictEqual(a, b Value) bool {
	if a.k != b.k {
		return false
	}
	return Equal(a, b)
}
