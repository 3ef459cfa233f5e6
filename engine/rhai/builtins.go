package rhai

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// callBuiltinFn runs a global function, or a method called in function style
// (`len(x)` is `x.len()`; the first argument is passed by value).
func (in *interp) callBuiltinFn(p Pos, name string, args []Value) (Value, error) {
	switch name {
	case "print", "debug":
		text := ""
		if len(args) > 0 {
			var err error
			if text, err = in.text(p, args[0], name == "debug"); err != nil {
				return Value{}, err
			}
		}
		if len(in.out) < maxOutputs {
			in.out = append(in.out, Output{Kind: name, Text: text, Pos: p})
		} else {
			in.dropped++
		}
		return Value{}, nil
	case "type_of":
		if len(args) == 1 {
			return String(args[0].TypeName()), nil
		}
	case "Fn":
		if len(args) == 1 && args[0].k == KindString {
			n := args[0].s
			if !validIdent(n) {
				return Value{}, errAt(p, "Fn(%q): not a valid function name", n)
			}
			return fnValue(&FnPtr{Name: n}), nil
		}
	case "call":
		if len(args) >= 1 && args[0].k == KindFn {
			return in.callPtr(p, args[0].fn(), args[1:])
		}
	case "curry":
		if len(args) >= 1 && args[0].k == KindFn {
			return curry(args[0].fn(), args[1:]), nil
		}
	case "is_def_fn":
		if len(args) == 2 && args[0].k == KindString && args[1].k == KindInt {
			return Bool(in.s.findFn(args[0].s, int(args[1].n)) != nil), nil
		}
	case "is_def_var":
		if len(args) == 1 && args[0].k == KindString {
			return Bool(in.lookup(args[0].s) >= 0), nil
		}
	case "parse_int":
		if len(args) >= 1 && args[0].k == KindString {
			base := int64(10)
			if len(args) == 2 && args[1].k == KindInt {
				base = args[1].n
			} else if len(args) != 1 {
				break
			}
			if base < 2 || base > 36 {
				return Value{}, errAt(p, "parse_int: radix %d is not between 2 and 36", base)
			}
			n, err := strconv.ParseInt(strings.TrimSpace(args[0].s), int(base), 64)
			if err != nil {
				return Value{}, errAt(p, "parse_int: cannot parse %q as an integer", args[0].s)
			}
			return Int(n), nil
		}
	case "parse_float":
		if len(args) == 1 && args[0].k == KindString {
			f, err := strconv.ParseFloat(strings.TrimSpace(args[0].s), 64)
			if err != nil {
				return Value{}, errAt(p, "parse_float: cannot parse %q as a number", args[0].s)
			}
			return Float(f), nil
		}
	case "range":
		if len(args) == 2 && args[0].k == KindInt && args[1].k == KindInt {
			return rangeValue(args[0].n, args[1].n, false), nil
		}
		if len(args) == 3 && args[0].k == KindInt && args[1].k == KindInt && args[2].k == KindInt {
			// A stepped range is materialised: for loops iterate arrays.
			from, to, step := args[0].n, args[1].n, args[2].n
			if step == 0 {
				return Value{}, errAt(p, "range: step must not be zero")
			}
			var out []Value
			for x := from; (step > 0 && x < to) || (step < 0 && x > to); x += step {
				if err := in.checkArray(p, len(out)+1); err != nil {
					return Value{}, err
				}
				out = append(out, Int(x))
				if (step > 0 && x > math.MaxInt64-step) || (step < 0 && x < math.MinInt64-step) {
					break
				}
			}
			return NewArray(out), nil
		}
	case "max", "min":
		if len(args) == 2 {
			c, ok := compare(args[0], args[1])
			if ok && (args[0].k == KindInt || args[0].k == KindFloat) {
				if (c >= 0) == (name == "max") {
					return args[0], nil
				}
				return args[1], nil
			}
		}
	case "parse_json":
		if len(args) == 1 && args[0].k == KindString {
			if err := in.charge(p, len(args[0].s)/256); err != nil {
				return Value{}, err
			}
			v, err := parseJSON(args[0].s)
			if err != nil {
				return Value{}, errAt(p, "parse_json: %v", err)
			}
			return v, in.checkTree(p, v)
		}
	case "eval":
		return Value{}, errAt(p, "eval is not supported in the sandbox")
	case "timestamp", "sleep":
		return Value{}, errAt(p, "%s is not available: region scripts run in a pure-data sandbox", name)
	}
	if len(args) > 0 {
		recv := args[0]
		v, found, err := in.builtinMethod(p, name, &recv, args[1:])
		if err != nil {
			return Value{}, err
		}
		if found {
			return v, in.checkValue(p, v)
		}
	}
	return Value{}, notFound(p, name, args)
}

func validIdent(s string) bool {
	if s == "" || keywords[s] {
		return false
	}
	for i, r := range s {
		if i == 0 && !isIdentStart(r) || !isIdentRune(r) {
			return false
		}
	}
	return true
}

// builtinMethod runs a standard method on *recv, which it may modify.
func (in *interp) builtinMethod(p Pos, name string, recv *Value, args []Value) (Value, bool, error) {
	// Methods that walk their receiver pay for its size; constant-time ones
	// (and map lookups) do not, so push in a loop stays linear.
	if (recv.k == KindString && len(recv.s) >= 4096 || recv.k == KindArray && len(recv.arr().Elems) >= 32) && !constantTime[name] {
		if err := in.charge(p, sizeCost(*recv)); err != nil {
			return Value{}, true, err
		}
	}
	// Methods every value has.
	switch name {
	case "type_of":
		if len(args) == 0 {
			return String(recv.TypeName()), true, nil
		}
	case "to_string", "to_debug":
		if len(args) == 0 {
			t, err := in.text(p, *recv, name == "to_debug")
			return String(t), true, err
		}
	case "to_json":
		if len(args) == 0 {
			if err := in.charge(p, countNodes(*recv, in.lim.MaxOperations)); err != nil {
				return Value{}, true, err
			}
			raw, err := toJSON(*recv)
			if err != nil {
				return Value{}, true, errAt(p, "to_json: %v", err)
			}
			return String(string(raw)), true, nil
		}
	}
	if recv.isShared() && !pureMethods[name] {
		// A method that may change a shared receiver works on a copy.
		v, err := in.mutable(p, *recv)
		if err != nil {
			return Value{}, true, err
		}
		*recv = v
	}
	switch recv.k {
	case KindString:
		return in.stringMethod(p, name, recv, args)
	case KindArray:
		return in.arrayMethod(p, name, recv.arr(), args)
	case KindMap:
		return in.mapMethod(p, name, recv.mp(), args)
	case KindInt, KindFloat:
		return numberMethod(p, name, *recv, args)
	case KindChar:
		c := rune(recv.n)
		if len(args) == 0 {
			switch name {
			case "to_int":
				return Int(int64(c)), true, nil
			case "to_upper":
				return Char(unicode.ToUpper(c)), true, nil
			case "to_lower":
				return Char(unicode.ToLower(c)), true, nil
			case "is_digit":
				return Bool(unicode.IsDigit(c)), true, nil
			case "is_whitespace":
				return Bool(unicode.IsSpace(c)), true, nil
			}
		}
	case KindRange:
		r := recv.rng()
		switch name {
		case "contains":
			if len(args) == 1 {
				v, err := in.contains(p, *recv, args[0])
				return v, true, err
			}
		case "start", "end", "is_inclusive", "is_exclusive":
			if len(args) == 0 {
				v, err := in.property(p, *recv, name)
				return v, true, err
			}
		case "len":
			end := r.End
			if r.Inclusive {
				end++
			}
			return Int(max(0, end-r.Start)), true, nil
		}
	case KindFn:
		if name == "name" && len(args) == 0 {
			return String(recv.fn().Name), true, nil
		}
	}
	return Value{}, false, nil
}

var constantTime = map[string]bool{
	"len": true, "is_empty": true, "push": true, "pop": true, "get": true, "set": true,
	"type_of": true,
}

func intArg(args []Value, i int) (int64, bool) {
	if i < len(args) && args[i].k == KindInt {
		return args[i].n, true
	}
	return 0, false
}

func strArg(args []Value, i int) (string, bool) {
	if i < len(args) {
		switch args[i].k {
		case KindString:
			return args[i].s, true
		case KindChar:
			return string(rune(args[i].n)), true
		}
	}
	return "", false
}

func fnArg(args []Value, i int) (*FnPtr, bool) {
	if i < len(args) {
		switch args[i].k {
		case KindFn:
			return args[i].fn(), true
		case KindString:
			if validIdent(args[i].s) {
				return &FnPtr{Name: args[i].s}, true
			}
		}
	}
	return nil, false
}

// charRange turns a (start, length) pair in characters, start negative
// counting from the end, into rune offsets clamped to [0, n].
func charRange(start, length int64, n int) (int, int) {
	if start < 0 {
		start += int64(n)
		if start < 0 {
			start = 0
		}
	}
	if start > int64(n) {
		start = int64(n)
	}
	if length < 0 {
		length = 0
	}
	end := start + length
	if end > int64(n) || end < start {
		end = int64(n)
	}
	return int(start), int(end)
}

func (in *interp) stringMethod(p Pos, name string, recv *Value, args []Value) (Value, bool, error) {
	s := recv.s
	switch name {
	case "len":
		if len(args) == 0 {
			return Int(int64(utf8.RuneCountInString(s))), true, nil
		}
	case "is_empty":
		if len(args) == 0 {
			return Bool(s == ""), true, nil
		}
	case "contains":
		if sub, ok := strArg(args, 0); ok && len(args) == 1 {
			return Bool(strings.Contains(s, sub)), true, nil
		}
	case "starts_with":
		if sub, ok := strArg(args, 0); ok && len(args) == 1 {
			return Bool(strings.HasPrefix(s, sub)), true, nil
		}
	case "ends_with":
		if sub, ok := strArg(args, 0); ok && len(args) == 1 {
			return Bool(strings.HasSuffix(s, sub)), true, nil
		}
	case "index_of":
		sub, ok := strArg(args, 0)
		if !ok || len(args) > 2 {
			break
		}
		from := 0
		if len(args) == 2 {
			st, ok := intArg(args, 1)
			if !ok {
				break
			}
			from, _ = charRange(st, 0, utf8.RuneCountInString(s))
		}
		off := runeOffset(s, from)
		i := strings.Index(s[off:], sub)
		if i < 0 {
			return Int(-1), true, nil
		}
		return Int(int64(from + utf8.RuneCountInString(s[off:off+i]))), true, nil
	case "sub_string", "crop":
		st, ok := intArg(args, 0)
		if !ok || len(args) > 2 {
			break
		}
		n := utf8.RuneCountInString(s)
		length := int64(n)
		if len(args) == 2 {
			if length, ok = intArg(args, 1); !ok {
				break
			}
		}
		a, b := charRange(st, length, n)
		out := String(s[runeOffset(s, a):runeOffset(s, b)])
		if name == "crop" {
			*recv = out
			return Value{}, true, nil
		}
		return out, true, nil
	case "split":
		if len(args) == 0 {
			fields := strings.Fields(s)
			if err := in.checkArray(p, len(fields)); err != nil {
				return Value{}, true, err
			}
			return stringsArray(fields), true, nil
		}
		if at, ok := intArg(args, 0); ok && len(args) == 1 {
			n := utf8.RuneCountInString(s)
			i, _ := charRange(at, 0, n)
			off := runeOffset(s, i)
			return NewArray([]Value{String(s[:off]), String(s[off:])}), true, nil
		}
		if sep, ok := strArg(args, 0); ok && len(args) == 1 {
			parts := strings.Split(s, sep)
			if err := in.checkArray(p, len(parts)); err != nil {
				return Value{}, true, err
			}
			return stringsArray(parts), true, nil
		}
		if sep, ok := strArg(args, 0); ok && len(args) == 2 {
			if n, ok := intArg(args, 1); ok {
				if n < 1 {
					n = 1
				}
				return stringsArray(strings.SplitN(s, sep, int(min(n, math.MaxInt32)))), true, nil
			}
		}
	case "trim":
		if len(args) == 0 {
			*recv = String(strings.TrimSpace(s))
			return Value{}, true, nil
		}
	case "to_upper":
		if len(args) == 0 {
			return String(strings.ToUpper(s)), true, nil
		}
	case "to_lower":
		if len(args) == 0 {
			return String(strings.ToLower(s)), true, nil
		}
	case "make_upper":
		if len(args) == 0 {
			*recv = String(strings.ToUpper(s))
			return Value{}, true, nil
		}
	case "make_lower":
		if len(args) == 0 {
			*recv = String(strings.ToLower(s))
			return Value{}, true, nil
		}
	case "replace":
		find, ok1 := strArg(args, 0)
		sub, ok2 := strArg(args, 1)
		if ok1 && ok2 && len(args) == 2 {
			var out string
			if find == "" {
				out = s
			} else {
				out = strings.ReplaceAll(s, find, sub)
			}
			if err := in.checkString(p, out); err != nil {
				return Value{}, true, err
			}
			*recv = String(out)
			return Value{}, true, nil
		}
	case "remove":
		if sub, ok := strArg(args, 0); ok && len(args) == 1 && sub != "" {
			*recv = String(strings.ReplaceAll(s, sub, ""))
			return Value{}, true, nil
		}
	case "chars", "to_chars":
		if len(args) == 0 {
			if err := in.checkArray(p, utf8.RuneCountInString(s)); err != nil {
				return Value{}, true, err
			}
			out := make([]Value, 0, len(s))
			for _, r := range s {
				out = append(out, Char(r))
			}
			return NewArray(out), true, nil
		}
	case "get":
		if i, ok := intArg(args, 0); ok && len(args) == 1 {
			if r, ok := charAt(s, i); ok {
				return Char(r), true, nil
			}
			return Value{}, true, nil
		}
	case "pad":
		n, ok1 := intArg(args, 0)
		pad, ok2 := strArg(args, 1)
		if ok1 && ok2 && len(args) == 2 {
			if n > int64(in.lim.MaxStringLen) {
				return Value{}, true, limitErr(p, LimitStringLen, "string too long: pad to %d characters, more than %d", n, in.lim.MaxStringLen)
			}
			var b strings.Builder
			b.WriteString(s)
			cnt := utf8.RuneCountInString(s)
			for int64(cnt) < n && pad != "" {
				for _, r := range pad {
					if int64(cnt) >= n {
						break
					}
					b.WriteRune(r)
					cnt++
				}
			}
			*recv = String(b.String())
			return Value{}, true, nil
		}
	case "truncate":
		if n, ok := intArg(args, 0); ok && len(args) == 1 {
			if n < 0 {
				n = 0
			}
			if int64(utf8.RuneCountInString(s)) > n {
				*recv = String(s[:runeOffset(s, int(n))])
			}
			return Value{}, true, nil
		}
	case "clear":
		if len(args) == 0 {
			*recv = String("")
			return Value{}, true, nil
		}
	case "append":
		if len(args) == 1 {
			add, err := in.text(p, args[0], false)
			if err != nil {
				return Value{}, true, err
			}
			out := s + add
			if err := in.checkString(p, out); err != nil {
				return Value{}, true, err
			}
			*recv = String(out)
			return Value{}, true, nil
		}
	case "to_int", "parse_int":
		if len(args) == 0 {
			v, err := in.callBuiltinFn(p, "parse_int", []Value{*recv})
			return v, true, err
		}
	case "to_float", "parse_float":
		if len(args) == 0 {
			v, err := in.callBuiltinFn(p, "parse_float", []Value{*recv})
			return v, true, err
		}
	case "bytes":
		if len(args) == 0 {
			return Int(int64(len(s))), true, nil
		}
	}
	return Value{}, false, nil
}

func runeOffset(s string, n int) int {
	if n <= 0 {
		return 0
	}
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	return len(s)
}

func stringsArray(parts []string) Value {
	out := make([]Value, len(parts))
	for i, s := range parts {
		out[i] = String(s)
	}
	return NewArray(out)
}

// arrayPos resolves a start position: negative counts from the end, past the
// end clamps to the length.
func arrayPos(i int64, n int) int {
	if i < 0 {
		i += int64(n)
		if i < 0 {
			return 0
		}
	}
	if i > int64(n) {
		return n
	}
	return int(i)
}

func (in *interp) cloneAll(p Pos, src []Value) ([]Value, error) {
	out := make([]Value, len(src))
	for i, v := range src {
		c, err := in.cloneV(p, v)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

func (in *interp) arrayMethod(p Pos, name string, a *Array, args []Value) (Value, bool, error) {
	switch name {
	case "len":
		if len(args) == 0 {
			return Int(int64(len(a.Elems))), true, nil
		}
	case "is_empty":
		if len(args) == 0 {
			return Bool(len(a.Elems) == 0), true, nil
		}
	case "push":
		if len(args) == 1 {
			if err := in.checkArray(p, len(a.Elems)+1); err != nil {
				return Value{}, true, err
			}
			a.Elems = append(a.Elems, args[0])
			return Value{}, true, nil
		}
	case "append":
		if len(args) == 1 {
			add := []Value{args[0]}
			if args[0].k == KindArray {
				add = args[0].arr().Elems
			}
			if err := in.checkArray(p, len(a.Elems)+len(add)); err != nil {
				return Value{}, true, err
			}
			a.Elems = append(a.Elems, add...)
			return Value{}, true, nil
		}
	case "pop":
		if len(args) == 0 {
			if len(a.Elems) == 0 {
				return Value{}, true, nil
			}
			v := a.Elems[len(a.Elems)-1]
			a.Elems[len(a.Elems)-1] = Value{}
			a.Elems = a.Elems[:len(a.Elems)-1]
			return v, true, nil
		}
	case "shift":
		if len(args) == 0 {
			if len(a.Elems) == 0 {
				return Value{}, true, nil
			}
			v := a.Elems[0]
			a.Elems = append(a.Elems[:0:0], a.Elems[1:]...)
			return v, true, nil
		}
	case "insert":
		if i, ok := intArg(args, 0); ok && len(args) == 2 {
			if err := in.checkArray(p, len(a.Elems)+1); err != nil {
				return Value{}, true, err
			}
			at := arrayPos(i, len(a.Elems))
			a.Elems = append(a.Elems, Value{})
			copy(a.Elems[at+1:], a.Elems[at:])
			a.Elems[at] = args[1]
			return Value{}, true, nil
		}
	case "remove":
		if i, ok := intArg(args, 0); ok && len(args) == 1 {
			at, ok := normIndex(i, len(a.Elems))
			if !ok {
				return Value{}, true, nil
			}
			v := a.Elems[at]
			a.Elems = append(a.Elems[:at], a.Elems[at+1:]...)
			return v, true, nil
		}
	case "get":
		if i, ok := intArg(args, 0); ok && len(args) == 1 {
			if at, ok := normIndex(i, len(a.Elems)); ok {
				v, err := in.cloneV(p, a.Elems[at])
				return v, true, err
			}
			return Value{}, true, nil
		}
	case "set":
		if i, ok := intArg(args, 0); ok && len(args) == 2 {
			if at, ok := normIndex(i, len(a.Elems)); ok {
				a.Elems[at] = args[1]
			}
			return Value{}, true, nil
		}
	case "contains":
		if len(args) == 1 {
			v, err := in.contains(p, NewArray(a.Elems), args[0])
			return v, true, err
		}
	case "index_of", "find", "find_index":
		if len(args) < 1 || len(args) > 2 {
			break
		}
		from := 0
		if len(args) == 2 {
			st, ok := intArg(args, 1)
			if !ok {
				break
			}
			from = arrayPos(st, len(a.Elems))
		}
		fp, isFn := fnArg(args, 0)
		if args[0].k == KindString && name == "index_of" {
			isFn = false // a string is a value to find, not a function name
		}
		for i := from; i < len(a.Elems); i++ {
			if err := in.tick(p); err != nil {
				return Value{}, true, err
			}
			var hit bool
			if isFn {
				r, err := in.callback(p, fp, a.Elems[i], Int(int64(i)))
				if err != nil {
					return Value{}, true, err
				}
				hit = r.k == KindBool && r.n != 0
			} else {
				eq, err := in.equal(p, a.Elems[i], args[0])
				if err != nil {
					return Value{}, true, err
				}
				hit = eq
			}
			if hit {
				if name == "find" {
					v, err := in.cloneV(p, a.Elems[i])
					return v, true, err
				}
				return Int(int64(i)), true, nil
			}
		}
		if name == "find" {
			return Value{}, true, nil
		}
		return Int(-1), true, nil
	case "reverse":
		if len(args) == 0 {
			for i, j := 0, len(a.Elems)-1; i < j; i, j = i+1, j-1 {
				a.Elems[i], a.Elems[j] = a.Elems[j], a.Elems[i]
			}
			return Value{}, true, nil
		}
	case "sort":
		if len(args) == 0 {
			return Value{}, true, in.sortDefault(p, a)
		}
		if fp, ok := fnArg(args, 0); ok && len(args) == 1 {
			return Value{}, true, in.sortBy(p, a, fp)
		}
	case "filter", "retain", "drain":
		if fp, ok := fnArg(args, 0); ok && len(args) == 1 {
			var keep, drop []Value
			for i, v := range a.Elems {
				ok, err := in.predicate(p, name, fp, v, i)
				if err != nil {
					return Value{}, true, err
				}
				if ok {
					keep = append(keep, v)
				} else {
					drop = append(drop, v)
				}
			}
			switch name {
			case "filter":
				out, err := in.cloneAll(p, keep)
				return NewArray(out), true, err
			case "retain":
				a.Elems = keep
				return NewArray(drop), true, nil
			}
			a.Elems = drop
			return NewArray(keep), true, nil
		}
	case "map":
		if fp, ok := fnArg(args, 0); ok && len(args) == 1 {
			out := make([]Value, len(a.Elems))
			for i, v := range a.Elems {
				r, err := in.callback(p, fp, v, Int(int64(i)))
				if err != nil {
					return Value{}, true, err
				}
				out[i] = r
			}
			return NewArray(out), true, nil
		}
	case "reduce", "reduce_rev":
		if fp, ok := fnArg(args, 0); ok && len(args) <= 2 {
			var acc Value
			if len(args) == 2 {
				acc = args[1]
			}
			n := len(a.Elems)
			for k := 0; k < n; k++ {
				i := k
				if name == "reduce_rev" {
					i = n - 1 - k
				}
				// The accumulator is handed on, not copied: copying it each
				// step would make building an array with reduce quadratic.
				c, err := in.cloneV(p, a.Elems[i])
				if err != nil {
					return Value{}, true, err
				}
				args := []Value{acc, c, Int(int64(i))}
				if n := in.arityOf(fp, 3); n >= 0 && n < 3 {
					args = args[:n]
				}
				r, err := in.callPtr(p, fp, args)
				if err != nil {
					return Value{}, true, err
				}
				acc = r
			}
			return acc, true, nil
		}
	case "some", "all":
		if fp, ok := fnArg(args, 0); ok && len(args) == 1 {
			for i, v := range a.Elems {
				ok, err := in.predicate(p, name, fp, v, i)
				if err != nil {
					return Value{}, true, err
				}
				if ok == (name == "some") {
					return Bool(name == "some"), true, nil
				}
			}
			return Bool(name == "all"), true, nil
		}
	case "join":
		if len(args) <= 1 {
			sep := ""
			if len(args) == 1 {
				var ok bool
				if sep, ok = strArg(args, 0); !ok {
					break
				}
			}
			var b strings.Builder
			for i, v := range a.Elems {
				if i > 0 {
					b.WriteString(sep)
				}
				if !v.write(&b, false, in.lim.MaxStringLen) || b.Len() > in.lim.MaxStringLen {
					return Value{}, true, in.checkString(p, b.String())
				}
			}
			return String(b.String()), true, nil
		}
	case "split", "split_off":
		if i, ok := intArg(args, 0); ok && len(args) == 1 {
			at := arrayPos(i, len(a.Elems))
			tail := append([]Value(nil), a.Elems[at:]...)
			clear(a.Elems[at:])
			a.Elems = a.Elems[:at]
			return NewArray(tail), true, nil
		}
	case "extract":
		if st, ok := intArg(args, 0); ok && len(args) <= 2 {
			n := len(a.Elems)
			length := int64(n)
			if len(args) == 2 {
				if length, ok = intArg(args, 1); !ok {
					break
				}
			}
			from := arrayPos(st, n)
			to := n
			if length <= 0 {
				to = from
			} else if int64(from)+length < int64(n) {
				to = from + int(length)
			}
			out, err := in.cloneAll(p, a.Elems[from:to])
			return NewArray(out), true, err
		}
	case "clear":
		if len(args) == 0 {
			a.Elems = nil
			return Value{}, true, nil
		}
	case "truncate":
		if n, ok := intArg(args, 0); ok && len(args) == 1 {
			if n < 0 {
				n = 0
			}
			if int64(len(a.Elems)) > n {
				a.Elems = a.Elems[:n]
			}
			return Value{}, true, nil
		}
	case "chop":
		if n, ok := intArg(args, 0); ok && len(args) == 1 {
			if n < 0 {
				n = 0
			}
			if int64(len(a.Elems)) > n {
				a.Elems = append([]Value(nil), a.Elems[int64(len(a.Elems))-n:]...)
			}
			return Value{}, true, nil
		}
	case "pad":
		if n, ok := intArg(args, 0); ok && len(args) == 2 {
			if err := in.checkArray(p, int(min(n, math.MaxInt32))); err != nil {
				return Value{}, true, err
			}
			for int64(len(a.Elems)) < n {
				c, err := in.cloneV(p, args[1])
				if err != nil {
					return Value{}, true, err
				}
				a.Elems = append(a.Elems, c)
			}
			return Value{}, true, nil
		}
	case "dedup":
		if len(args) == 0 && len(a.Elems) > 1 {
			out := a.Elems[:1]
			for _, v := range a.Elems[1:] {
				eq, err := in.equal(p, v, out[len(out)-1])
				if err != nil {
					return Value{}, true, err
				}
				if !eq {
					out = append(out, v)
				}
			}
			a.Elems = out
			return Value{}, true, nil
		} else if len(args) == 0 {
			return Value{}, true, nil
		}
	}
	return Value{}, false, nil
}

func (in *interp) sortDefault(p Pos, a *Array) error {
	if len(a.Elems) < 2 {
		return nil
	}
	k := a.Elems[0].k
	for _, v := range a.Elems {
		numeric := (k == KindInt || k == KindFloat) && (v.k == KindInt || v.k == KindFloat)
		if v.k != k && !numeric {
			return errAt(p, "sort: cannot order %s and %s (pass a comparison function)", a.Elems[0].TypeName(), v.TypeName())
		}
		if _, ok := compare(v, v); !ok {
			return errAt(p, "sort: values of type %s have no order (pass a comparison function)", v.TypeName())
		}
	}
	sort.SliceStable(a.Elems, func(i, j int) bool {
		c, _ := compare(a.Elems[i], a.Elems[j])
		return c < 0
	})
	return nil
}

// predicate asks fp about element v at index i for the array method named
// method (filter, some, ...), which needs a bool back.
func (in *interp) predicate(p Pos, method string, fp *FnPtr, v Value, i int) (bool, error) {
	r, err := in.callback(p, fp, v, Int(int64(i)))
	if err != nil {
		return false, err
	}
	if r.k != KindBool {
		return false, errAt(p, "%s: the predicate must return a bool, found %s", method, r.TypeName())
	}
	return r.n != 0, nil
}

func (in *interp) sortBy(p Pos, a *Array, fp *FnPtr) error {
	var firstErr error
	sort.SliceStable(a.Elems, func(i, j int) bool {
		if firstErr != nil {
			return false
		}
		r, err := in.callback(p, fp, a.Elems[i], a.Elems[j])
		if err != nil {
			firstErr = err
			return false
		}
		switch r.k {
		case KindInt:
			return r.n < 0
		case KindBool:
			return r.n != 0
		}
		firstErr = errAt(p, "sort: the comparison function must return an integer, found %s", r.TypeName())
		return false
	})
	return firstErr
}

func (in *interp) mapMethod(p Pos, name string, m *Map, args []Value) (Value, bool, error) {
	switch name {
	case "len":
		if len(args) == 0 {
			return Int(int64(len(m.M))), true, nil
		}
	case "is_empty":
		if len(args) == 0 {
			return Bool(len(m.M) == 0), true, nil
		}
	case "keys":
		if len(args) == 0 {
			return stringsArray(sortedKeys(m.M)), true, nil
		}
	case "values":
		if len(args) == 0 {
			keys := sortedKeys(m.M)
			out := make([]Value, len(keys))
			for i, k := range keys {
				c, err := in.cloneV(p, m.M[k])
				if err != nil {
					return Value{}, true, err
				}
				out[i] = c
			}
			return NewArray(out), true, nil
		}
	case "contains":
		if key, ok := strArg(args, 0); ok && len(args) == 1 {
			_, has := m.M[key]
			return Bool(has), true, nil
		}
	case "remove":
		if key, ok := strArg(args, 0); ok && len(args) == 1 {
			v := m.M[key]
			delete(m.M, key)
			return v, true, nil
		}
	case "get":
		if key, ok := strArg(args, 0); ok && len(args) == 1 {
			v, err := in.cloneV(p, m.M[key])
			return v, true, err
		}
	case "set":
		if key, ok := strArg(args, 0); ok && len(args) == 2 {
			if _, has := m.M[key]; !has {
				if err := in.checkMap(p, len(m.M)+1); err != nil {
					return Value{}, true, err
				}
			}
			m.M[key] = args[1]
			return Value{}, true, nil
		}
	case "clear":
		if len(args) == 0 {
			clear(m.M)
			return Value{}, true, nil
		}
	case "mixin", "fill_with":
		if len(args) == 1 && args[0].k == KindMap {
			for k, v := range args[0].mp().M {
				if _, has := m.M[k]; has && name == "fill_with" {
					continue
				}
				m.M[k] = v
			}
			return Value{}, true, in.checkMap(p, len(m.M))
		}
	}
	return Value{}, false, nil
}

func numberMethod(p Pos, name string, v Value, args []Value) (Value, bool, error) {
	if len(args) != 0 {
		return Value{}, false, nil
	}
	if v.k == KindInt {
		switch name {
		case "to_float":
			return Float(float64(v.n)), true, nil
		case "to_int":
			return v, true, nil
		case "abs":
			if v.n == math.MinInt64 {
				return Value{}, true, errAt(p, "negation overflow: abs(%d)", v.n)
			}
			if v.n < 0 {
				return Int(-v.n), true, nil
			}
			return v, true, nil
		case "sign":
			return Int(int64(cmp3(v.n < 0, v.n > 0))), true, nil
		case "is_odd":
			return Bool(v.n%2 != 0), true, nil
		case "is_even":
			return Bool(v.n%2 == 0), true, nil
		case "is_zero":
			return Bool(v.n == 0), true, nil
		case "to_char":
			if v.n < 0 || v.n > unicode.MaxRune || !utf8.ValidRune(rune(v.n)) {
				return Value{}, true, errAt(p, "to_char: %d is not a valid character code", v.n)
			}
			return Char(rune(v.n)), true, nil
		}
		return Value{}, false, nil
	}
	f := v.float()
	switch name {
	case "to_float":
		return v, true, nil
	case "to_int":
		t := math.Trunc(f)
		if math.IsNaN(f) || t >= math.MaxInt64 || t < math.MinInt64 {
			return Value{}, true, errAt(p, "to_int: %s does not fit in an i64", formatFloat(f))
		}
		return Int(int64(t)), true, nil
	case "abs":
		return Float(math.Abs(f)), true, nil
	case "floor":
		return Float(math.Floor(f)), true, nil
	case "ceiling":
		return Float(math.Ceil(f)), true, nil
	case "round":
		return Float(math.Round(f)), true, nil
	case "int":
		return Float(math.Trunc(f)), true, nil
	case "fraction":
		return Float(f - math.Trunc(f)), true, nil
	case "sqrt":
		return Float(math.Sqrt(f)), true, nil
	case "is_nan":
		return Bool(math.IsNaN(f)), true, nil
	case "is_infinite":
		return Bool(math.IsInf(f, 0)), true, nil
	case "sign":
		return Int(int64(cmp3(f < 0, f > 0))), true, nil
	case "is_zero":
		return Bool(f == 0), true, nil
	}
	return Value{}, false, nil
}
