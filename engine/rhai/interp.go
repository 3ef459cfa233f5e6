package rhai

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// ctrl is a non-local exit: break, continue or return. It travels as an
// error so that every eval step passes it up without extra checks.
type ctrl struct{ what string }

func (c *ctrl) Error() string { return c.what + " outside its construct" }

var (
	errBreak    = &ctrl{"break"}
	errContinue = &ctrl{"continue"}
	errReturn   = &ctrl{"return"}
)

type binding struct {
	name  string
	v     Value
	cell  *Value // non-nil once a closure shares the variable
	konst bool
}

// Output is one line a script printed with print or debug.
type Output struct {
	Kind string // "print" or "debug"
	Text string
	Pos  Pos
}

// maxOutputs bounds captured print/debug lines per call; the rest are counted.
const maxOutputs = 256

type interp struct {
	s        *Script
	lim      Limits
	ops      int
	depth    int
	scope    []binding
	argStack []Value
	frame    int    // scope index where the current function's variables start
	this     *Value // receiver of the current method call
	retVal   Value
	brkVal   Value
	out      []Output
	dropped  int
	globals  map[string]Value
}

func (in *interp) tick(p Pos) error {
	in.ops++
	if in.ops > in.lim.MaxOperations {
		return limitErr(p, LimitOperations, "too many operations: the script ran more than %d", in.lim.MaxOperations)
	}
	return nil
}

// charge adds n operations: work proportional to data size (cloning,
// scanning or building big strings and arrays) is paid for like evaluation
// steps, so no script can do unbounded work within the operation limit.
func (in *interp) charge(p Pos, n int) error {
	if n <= 0 {
		return nil
	}
	in.ops += n
	if in.ops > in.lim.MaxOperations {
		return limitErr(p, LimitOperations, "too many operations: the script ran more than %d", in.lim.MaxOperations)
	}
	return nil
}

// sizeCost is the operation charge for touching v once.
func sizeCost(v Value) int {
	switch v.k {
	case KindString:
		return len(v.s) / 4096
	case KindArray:
		return len(v.arr().Elems) / 32
	case KindMap:
		return len(v.mp().M) / 32
	}
	return 0
}

// cloneV is how a value read from storage is copied: O(1), sharing the
// storage copy-on-write.
func (in *interp) cloneV(_ Pos, v Value) (Value, error) {
	return v.share(), nil
}

// mutable returns v ready to be changed in place: shared storage is copied
// one level (paid for by size) and the copy returned; private storage as is.
func (in *interp) mutable(p Pos, v Value) (Value, error) {
	if !v.isShared() {
		return v, nil
	}
	if err := in.charge(p, 1+sizeCost(v)); err != nil {
		return Value{}, err
	}
	return v.unshared(), nil
}

// equal is Equal paid for by the containers it compares.
func (in *interp) equal(p Pos, a, b Value) (bool, error) {
	if a.k != KindArray && a.k != KindMap {
		return Equal(a, b), nil
	}
	budget := in.lim.MaxOperations - in.ops
	eq := equalBudget(a, b, &budget)
	if budget < 0 {
		in.ops = in.lim.MaxOperations + 1
		return false, limitErr(p, LimitOperations, "too many operations: the script ran more than %d", in.lim.MaxOperations)
	}
	in.ops = in.lim.MaxOperations - budget
	return eq, nil
}

// text renders v for print, interpolation and string building, bounded by
// the string limit (shared storage can make a small value print enormously).
func (in *interp) text(p Pos, v Value, debug bool) (string, error) {
	switch v.k {
	case KindString:
		if !debug {
			return v.s, nil
		}
	case KindArray, KindMap:
	default:
		if !debug {
			return v.String(), nil
		}
	}
	var b strings.Builder
	if !v.write(&b, debug, in.lim.MaxStringLen) {
		return "", limitErr(p, LimitStringLen, "string too long: more than %d bytes", in.lim.MaxStringLen)
	}
	return b.String(), in.charge(p, b.Len()/4096)
}

func (in *interp) lookup(name string) int {
	for i := len(in.scope) - 1; i >= in.frame; i-- {
		if in.scope[i].name == name {
			return i
		}
	}
	return -1
}

func (in *interp) varValue(i int) Value {
	b := &in.scope[i]
	if b.cell != nil {
		return *b.cell
	}
	return b.v
}

func (in *interp) push(name string, v Value, konst bool) {
	in.scope = append(in.scope, binding{name: name, v: v, konst: konst})
}

func (in *interp) truncate(n int) {
	clear(in.scope[n:])
	in.scope = in.scope[:n]
}

// owned evaluates n and clones the result if it was read from storage, so it
// can be stored elsewhere without aliasing.
func (in *interp) owned(n node) (Value, error) {
	v, err := in.eval(n)
	if err != nil {
		return v, err
	}
	if isPlace(n) {
		return in.cloneV(n.at(), v)
	}
	return v, nil
}

func (in *interp) checkString(p Pos, s string) error {
	if err := in.charge(p, len(s)/4096); err != nil {
		return err
	}
	if len(s) > in.lim.MaxStringLen {
		return limitErr(p, LimitStringLen, "string too long: %d bytes, more than %d", len(s), in.lim.MaxStringLen)
	}
	return nil
}

func (in *interp) checkArray(p Pos, n int) error {
	if n > in.lim.MaxArraySize {
		return limitErr(p, LimitArraySize, "array too large: %d elements, more than %d", n, in.lim.MaxArraySize)
	}
	return nil
}

func (in *interp) checkMap(p Pos, n int) error {
	if n > in.lim.MaxMapSize {
		return limitErr(p, LimitMapSize, "object map too large: %d properties, more than %d", n, in.lim.MaxMapSize)
	}
	return nil
}

// checkTree enforces the size limits on every string, array and map in v.
func (in *interp) checkTree(p Pos, v Value) error {
	if err := in.checkValue(p, v); err != nil {
		return err
	}
	switch v.k {
	case KindArray:
		for _, e := range v.arr().Elems {
			if err := in.checkTree(p, e); err != nil {
				return err
			}
		}
	case KindMap:
		for _, e := range v.mp().M {
			if err := in.checkTree(p, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkValue enforces the size limits on a value produced by a builtin.
func (in *interp) checkValue(p Pos, v Value) error {
	if err := in.charge(p, sizeCost(v)); err != nil {
		return err
	}
	switch v.k {
	case KindString:
		return in.checkString(p, v.s)
	case KindArray:
		return in.checkArray(p, len(v.arr().Elems))
	case KindMap:
		return in.checkMap(p, len(v.mp().M))
	}
	return nil
}

func (in *interp) eval(n node) (Value, error) {
	if err := in.tick(n.at()); err != nil {
		return Value{}, err
	}
	switch e := n.(type) {
	case *litExpr:
		return in.cloneV(e.p, e.v)
	case *varExpr:
		i := in.lookup(e.name)
		if i < 0 {
			if fs := in.s.fns[e.name]; len(fs) > 0 {
				return fnValue(&FnPtr{Name: e.name}), nil
			}
			return Value{}, errAt(e.p, "variable not found: %s", e.name)
		}
		return in.varValue(i), nil
	case *globalExpr:
		v, ok := in.globals[e.name]
		if !ok {
			return Value{}, errAt(e.p, "constant '%s' not found in 'global' (only top-level constants are)", e.name)
		}
		return v, nil
	case *thisExpr:
		if in.this == nil {
			return Value{}, errAt(e.p, "'this' is only defined inside a function called as a method")
		}
		return *in.this, nil
	case *interpExpr:
		var buf [8]string
		texts := buf[:0]
		total := 0
		for _, part := range e.parts {
			v, err := in.eval(part)
			if err != nil {
				return Value{}, err
			}
			t, err := in.text(part.at(), v, false)
			if err != nil {
				return Value{}, err
			}
			texts = append(texts, t)
			if total += len(t); total > in.lim.MaxStringLen {
				return Value{}, limitErr(e.p, LimitStringLen, "string too long: %d bytes, more than %d", total, in.lim.MaxStringLen)
			}
		}
		var b strings.Builder
		b.Grow(total)
		for _, t := range texts {
			b.WriteString(t)
		}
		return String(b.String()), in.charge(e.p, total/4096)
	case *arrayExpr:
		if err := in.checkArray(e.p, len(e.elems)); err != nil {
			return Value{}, err
		}
		out := make([]Value, len(e.elems))
		for i, x := range e.elems {
			v, err := in.owned(x)
			if err != nil {
				return Value{}, err
			}
			out[i] = v
		}
		return NewArray(out), nil
	case *mapExpr:
		if err := in.checkMap(e.p, len(e.keys)); err != nil {
			return Value{}, err
		}
		m := make(map[string]Value, len(e.keys))
		for i, k := range e.keys {
			v, err := in.owned(e.vals[i])
			if err != nil {
				return Value{}, err
			}
			m[k] = v
		}
		return NewMap(m), nil
	case *unaryExpr:
		v, err := in.eval(e.x)
		if err != nil {
			return Value{}, err
		}
		return unaryOp(e.p, e.op, v)
	case *binaryExpr:
		return in.evalBinary(e)
	case *rangeExpr:
		l, err := in.eval(e.l)
		if err != nil {
			return Value{}, err
		}
		r, err := in.eval(e.r)
		if err != nil {
			return Value{}, err
		}
		if l.k != KindInt || r.k != KindInt {
			return Value{}, errAt(e.p, "range bounds must be integers, found %s and %s", l.TypeName(), r.TypeName())
		}
		return rangeValue(l.n, r.n, e.incl), nil
	case *indexExpr:
		x, err := in.eval(e.x)
		if err != nil {
			return Value{}, err
		}
		if e.safe && x.k == KindUnit {
			return Value{}, nil
		}
		idx, err := in.eval(e.idx)
		if err != nil {
			return Value{}, err
		}
		return in.index(e.p, x, idx)
	case *propExpr:
		x, err := in.eval(e.x)
		if err != nil {
			return Value{}, err
		}
		if e.safe && x.k == KindUnit {
			return Value{}, nil
		}
		return in.property(e.p, x, e.name)
	case *callExpr:
		return in.evalCall(e)
	case *methodExpr:
		return in.evalMethod(e)
	case *closureExpr:
		fp := &FnPtr{Name: e.def.name, closure: e.def}
		for _, c := range e.def.captures {
			i := in.lookup(c)
			if i < 0 {
				fp.shared = append(fp.shared, nil)
				continue
			}
			b := &in.scope[i]
			if b.cell == nil {
				cell := b.v
				b.cell = &cell
			}
			fp.shared = append(fp.shared, b.cell)
		}
		return fnValue(fp), nil
	case *ifExpr:
		c, err := in.cond(e.cond)
		if err != nil {
			return Value{}, err
		}
		if c {
			return in.evalBlock(e.then)
		}
		if e.els != nil {
			return in.eval(e.els)
		}
		return Value{}, nil
	case *switchExpr:
		return in.evalSwitch(e)
	case *blockExpr:
		return in.evalBlock(e)
	case *whileExpr:
		return in.evalWhile(e)
	case *loopExpr:
		for {
			brk, err := in.runBody(e.body)
			if err != nil {
				return Value{}, err
			}
			if brk {
				return in.takeBreak(), nil
			}
			if err := in.tick(e.p); err != nil {
				return Value{}, err
			}
		}
	case *forExpr:
		return in.evalFor(e)
	case *tryExpr:
		return in.evalTry(e)
	case *letStmt:
		var v Value
		if e.init != nil {
			var err error
			if v, err = in.owned(e.init); err != nil {
				return Value{}, err
			}
		}
		in.push(e.name, v, e.konst)
		return Value{}, nil
	case *assignStmt:
		return Value{}, in.evalAssign(e)
	case *returnStmt:
		return Value{}, in.exit(&in.retVal, e.x, errReturn)
	case *breakStmt:
		return Value{}, in.exit(&in.brkVal, e.x, errBreak)
	case *continueStmt:
		return Value{}, errContinue
	case *throwStmt:
		var v Value
		if e.x != nil {
			var err error
			if v, err = in.owned(e.x); err != nil {
				return Value{}, err
			}
		}
		return Value{}, &Error{Pos: e.p, Msg: "runtime error: " + v.String(), Thrown: &v}
	}
	return Value{}, errAt(n.at(), "internal error: unknown syntax node %T", n)
}

// evalTry is kept out of eval: a defer there would tax every evaluation.
func (in *interp) evalTry(e *tryExpr) (Value, error) {
	base := len(in.scope)
	v, err := in.evalBlock(e.body)
	if err == nil {
		return v, nil
	}
	re, ok := err.(*Error)
	if !ok || re.Limit != "" {
		return Value{}, err // control flow, and sandbox limits, cannot be caught
	}
	in.truncate(base)
	caught := String(re.Msg)
	if re.Thrown != nil {
		caught = *re.Thrown
	}
	if e.errVar != "" {
		in.push(e.errVar, caught, false)
		defer in.truncate(base)
	}
	return in.evalBlock(e.catch)
}

func (in *interp) cond(n node) (bool, error) {
	v, err := in.eval(n)
	if err != nil {
		return false, err
	}
	if v.k != KindBool {
		return false, errAt(n.at(), "boolean value expected, found %s", v.TypeName())
	}
	return v.n != 0, nil
}

func (in *interp) evalBlock(b *blockExpr) (Value, error) {
	base := len(in.scope)
	var last Value
	for _, s := range b.stmts {
		v, err := in.eval(s)
		if err != nil {
			in.truncate(base)
			return Value{}, err
		}
		last = v
	}
	in.truncate(base)
	return last, nil
}

func (in *interp) evalWhile(e *whileExpr) (Value, error) {
	for {
		if !e.postfix {
			c, err := in.cond(e.cond)
			if err != nil {
				return Value{}, err
			}
			if !c {
				return Value{}, nil
			}
		}
		brk, err := in.runBody(e.body)
		if err != nil {
			return Value{}, err
		}
		if brk {
			return in.takeBreak(), nil
		}
		if e.postfix {
			c, err := in.cond(e.cond)
			if err != nil {
				return Value{}, err
			}
			if c == e.until {
				return Value{}, nil
			}
		}
	}
}

func (in *interp) evalFor(e *forExpr) (Value, error) {
	it, err := in.eval(e.iter)
	if err != nil {
		return Value{}, err
	}
	base := len(in.scope)
	defer in.truncate(base)
	in.push(e.v, Value{}, false)
	if e.idx != "" {
		in.push(e.idx, Value{}, false)
	}
	// step runs the body once; done reports a break.
	step := func(v Value, i int64) (bool, error) {
		// One variable serves every iteration: closures that capture it
		// share it, and see its last value, as in Rhai.
		b := &in.scope[base]
		if b.cell != nil {
			*b.cell = v
		} else {
			b.v = v
		}
		if e.idx != "" {
			ib := &in.scope[base+1]
			if ib.cell != nil {
				*ib.cell = Int(i)
			} else {
				ib.v = Int(i)
			}
		}
		return in.runBody(e.body)
	}
	var done bool
	switch it.k {
	case KindArray:
		// Rhai iterates over a copy: sharing the storage makes the body's
		// changes to the array land in a copy of their own.
		for i, v := range it.share().arr().Elems {
			if done, err = step(v.share(), int64(i)); done || err != nil {
				break
			}
		}
	case KindRange:
		r := it.rng()
		end := r.End
		if r.Inclusive {
			if end == math.MaxInt64 {
				return Value{}, errAt(e.iterPos, "range end overflows i64")
			}
			end++
		}
		var i int64
		for x := r.Start; x < end; x++ {
			if done, err = step(Int(x), i); done || err != nil {
				break
			}
			i++
		}
	case KindString:
		var i int64
		for _, c := range it.s {
			if done, err = step(Char(c), i); done || err != nil {
				break
			}
			i++
		}
	default:
		return Value{}, errAt(e.iterPos, "cannot iterate over a value of type %s (arrays, ranges and strings can be iterated)", it.TypeName())
	}
	if err != nil {
		return Value{}, err
	}
	if done {
		return in.takeBreak(), nil
	}
	return Value{}, nil
}

// runBody runs a loop's body once. brk reports a break, whose value waits in
// in.brkVal for takeBreak; a continue, like finishing the body, goes on to
// the next pass.
func (in *interp) runBody(body *blockExpr) (brk bool, err error) {
	_, err = in.evalBlock(body)
	switch err {
	case nil, errContinue:
		return false, nil
	case errBreak:
		return true, nil
	}
	return false, err
}

// takeBreak hands over the value of the break that ended a loop.
func (in *interp) takeBreak() Value {
	v := in.brkVal
	in.brkVal = Value{}
	return v
}

func (in *interp) evalSwitch(e *switchExpr) (Value, error) {
	x, err := in.eval(e.x)
	if err != nil {
		return Value{}, err
	}
	for _, c := range e.cases {
		matched := false
		for _, cv := range c.vals {
			if cv.k == KindRange && x.k == KindInt {
				r := cv.rng()
				if x.n >= r.Start && (x.n < r.End || (r.Inclusive && x.n == r.End)) {
					matched = true
				}
			} else if strictEqual(cv, x) {
				matched = true
			}
			if matched {
				break
			}
		}
		if !matched {
			continue
		}
		if c.cond != nil {
			ok, err := in.cond(c.cond)
			if err != nil {
				return Value{}, err
			}
			if !ok {
				continue
			}
		}
		return in.eval(c.body)
	}
	if e.def != nil {
		return in.eval(e.def)
	}
	return Value{}, nil
}

func (in *interp) evalBinary(e *binaryExpr) (Value, error) {
	switch e.op {
	case opAnd, opOr:
		l, err := in.eval(e.l)
		if err != nil {
			return Value{}, err
		}
		if l.k != KindBool {
			return Value{}, errAt(e.p, "'%s' expects booleans, found %s", e.op, l.TypeName())
		}
		if (e.op == opAnd) != (l.n != 0) {
			return l, nil
		}
		r, err := in.eval(e.r)
		if err != nil {
			return Value{}, err
		}
		if r.k != KindBool {
			return Value{}, errAt(e.p, "'%s' expects booleans, found %s", e.op, r.TypeName())
		}
		return r, nil
	case opCoalesce:
		l, err := in.eval(e.l)
		if err != nil || l.k != KindUnit {
			return l, err
		}
		return in.eval(e.r)
	}
	l, err := in.eval(e.l)
	if err != nil {
		return Value{}, err
	}
	r, err := in.eval(e.r)
	if err != nil {
		return Value{}, err
	}
	switch e.op {
	case opIn:
		return in.contains(e.p, r, l)
	case opNotIn:
		v, err := in.contains(e.p, r, l)
		return Bool(err == nil && v.n == 0), err
	}
	if (e.op == opEq || e.op == opNe) && (l.k == KindArray || l.k == KindMap) {
		eq, err := in.equal(e.p, l, r)
		return Bool(eq == (e.op == opEq)), err
	}
	if e.op == opAdd && (l.k == KindString) != (r.k == KindString) {
		// Anything + string (or the reverse) is string building.
		ls, err := in.text(e.p, l, false)
		if err != nil {
			return Value{}, err
		}
		rs, err := in.text(e.p, r, false)
		if err != nil {
			return Value{}, err
		}
		v := String(ls + rs)
		return v, in.checkValue(e.p, v)
	}
	v, err := binaryOp(e.p, e.op, l, r)
	if err != nil {
		return Value{}, err
	}
	if err := in.charge(e.p, sizeCost(l)+sizeCost(r)); err != nil {
		return Value{}, err
	}
	return v, in.checkValue(e.p, v)
}

// contains implements `needle in haystack`.
func (in *interp) contains(p Pos, hay, needle Value) (Value, error) {
	if err := in.charge(p, sizeCost(hay)); err != nil {
		return Value{}, err
	}
	switch hay.k {
	case KindArray:
		for _, x := range hay.arr().Elems {
			if err := in.tick(p); err != nil {
				return Value{}, err
			}
			eq, err := in.equal(p, x, needle)
			if err != nil {
				return Value{}, err
			}
			if eq {
				return Bool(true), nil
			}
		}
		return Bool(false), nil
	case KindString:
		switch needle.k {
		case KindString:
			return Bool(strings.Contains(hay.s, needle.s)), nil
		case KindChar:
			return Bool(strings.ContainsRune(hay.s, rune(needle.n))), nil
		}
		return Value{}, errAt(p, "'in' on a string needs a string or character, found %s", needle.TypeName())
	case KindMap:
		switch needle.k {
		case KindString:
			_, ok := hay.mp().M[needle.s]
			return Bool(ok), nil
		case KindChar:
			_, ok := hay.mp().M[string(rune(needle.n))]
			return Bool(ok), nil
		}
		return Value{}, errAt(p, "'in' on an object map needs a string key, found %s", needle.TypeName())
	case KindRange:
		if needle.k != KindInt {
			return Bool(false), nil
		}
		r := hay.rng()
		return Bool(needle.n >= r.Start && (needle.n < r.End || r.Inclusive && needle.n == r.End)), nil
	}
	return Value{}, errAt(p, "'in' needs an array, string, object map or range on its right, found %s", hay.TypeName())
}

// normIndex resolves a possibly negative index against length n.
func normIndex(i int64, n int) (int, bool) {
	if i < 0 {
		i += int64(n)
	}
	if i < 0 || i >= int64(n) {
		return 0, false
	}
	return int(i), true
}

func (in *interp) index(p Pos, x, idx Value) (Value, error) {
	switch x.k {
	case KindArray:
		if idx.k != KindInt {
			return Value{}, errAt(p, "array index must be an integer, found %s", idx.TypeName())
		}
		elems := x.arr().Elems
		i, ok := normIndex(idx.n, len(elems))
		if !ok {
			return Value{}, boundsErr(p, "array index", idx.n, len(elems), "elements")
		}
		return elems[i], nil
	case KindMap:
		key, err := mapKey(p, idx)
		if err != nil {
			return Value{}, err
		}
		return x.mp().M[key], nil
	case KindString:
		if idx.k != KindInt {
			return Value{}, errAt(p, "string index must be an integer, found %s", idx.TypeName())
		}
		r, ok := charAt(x.s, idx.n)
		if !ok {
			return Value{}, boundsErr(p, "character index", idx.n, utf8.RuneCountInString(x.s), "characters")
		}
		return Char(r), nil
	}
	return Value{}, errAt(p, "cannot index into a value of type %s", x.TypeName())
}

func boundsErr(p Pos, what string, i int64, n int, unit string) *Error {
	if n == 0 {
		return errAt(p, "%s %d out of bounds: it is empty", what, i)
	}
	return errAt(p, "%s %d out of bounds: only %d %s", what, i, n, unit)
}

func mapKey(p Pos, idx Value) (string, error) {
	switch idx.k {
	case KindString:
		return idx.s, nil
	case KindChar:
		return string(rune(idx.n)), nil
	}
	return "", errAt(p, "object map key must be a string, found %s", idx.TypeName())
}

// charAt returns the character at a possibly negative index.
func charAt(s string, i int64) (rune, bool) {
	if i < 0 {
		n := utf8.RuneCountInString(s)
		j, ok := normIndex(i, n)
		if !ok {
			return 0, false
		}
		i = int64(j)
	}
	var k int64
	for _, r := range s {
		if k == i {
			return r, true
		}
		k++
	}
	return 0, false
}

func (in *interp) property(p Pos, x Value, name string) (Value, error) {
	switch x.k {
	case KindMap:
		return x.mp().M[name], nil
	case KindString:
		switch name {
		case "len":
			return Int(int64(utf8.RuneCountInString(x.s))), nil
		case "is_empty":
			return Bool(x.s == ""), nil
		}
	case KindArray:
		switch name {
		case "len":
			return Int(int64(len(x.arr().Elems))), nil
		case "is_empty":
			return Bool(len(x.arr().Elems) == 0), nil
		}
	case KindFn:
		switch name {
		case "name":
			return String(x.fn().Name), nil
		case "is_anonymous":
			return Bool(x.fn().closure != nil), nil
		}
	case KindRange:
		r := x.rng()
		switch name {
		case "start":
			return Int(r.Start), nil
		case "end":
			return Int(r.End), nil
		case "is_inclusive":
			return Bool(r.Inclusive), nil
		case "is_exclusive":
			return Bool(!r.Inclusive), nil
		}
	case KindInt:
		switch name {
		case "is_odd":
			return Bool(x.n%2 != 0), nil
		case "is_even":
			return Bool(x.n%2 == 0), nil
		}
	}
	return Value{}, errAt(p, "unknown property '%s' on a value of type %s", name, x.TypeName())
}

// place is an assignable location.
type place struct {
	kind  uint8 // pVar, pThis, pElem, pKey, pChar, pTemp
	i     int
	arr   *Array
	m     *Map
	key   string
	inner *place // pChar: the string's own place
	tmp   Value
	konst bool
	name  string
}

const (
	pVar uint8 = iota
	pThis
	pElem
	pKey
	pChar
	pTemp
)

func (in *interp) placeOf(n node) (place, error) {
	if err := in.tick(n.at()); err != nil {
		return place{}, err
	}
	switch e := n.(type) {
	case *varExpr:
		i := in.lookup(e.name)
		if i < 0 {
			return place{}, errAt(e.p, "variable not found: %s", e.name)
		}
		return place{kind: pVar, i: i, konst: in.scope[i].konst, name: e.name}, nil
	case *thisExpr:
		if in.this == nil {
			return place{}, errAt(e.p, "'this' is only defined inside a function called as a method")
		}
		return place{kind: pThis}, nil
	case *indexExpr:
		parent, pv, err := in.parentOf(e.p, e.x)
		if err != nil {
			return place{}, err
		}
		if e.safe && pv.k == KindUnit {
			return place{kind: pTemp}, nil
		}
		idx, err := in.eval(e.idx)
		if err != nil {
			return place{}, err
		}
		switch pv.k {
		case KindArray:
			if idx.k != KindInt {
				return place{}, errAt(e.p, "array index must be an integer, found %s", idx.TypeName())
			}
			a := pv.arr()
			i, ok := normIndex(idx.n, len(a.Elems))
			if !ok {
				return place{}, boundsErr(e.p, "array index", idx.n, len(a.Elems), "elements")
			}
			return place{kind: pElem, arr: a, i: i, konst: parent.konst, name: parent.name}, nil
		case KindMap:
			key, err := mapKey(e.p, idx)
			if err != nil {
				return place{}, err
			}
			return place{kind: pKey, m: pv.mp(), key: key, konst: parent.konst, name: parent.name}, nil
		case KindString:
			if idx.k != KindInt {
				return place{}, errAt(e.p, "string index must be an integer, found %s", idx.TypeName())
			}
			n := utf8.RuneCountInString(pv.s)
			i, ok := normIndex(idx.n, n)
			if !ok {
				return place{}, boundsErr(e.p, "character index", idx.n, n, "characters")
			}
			inner := parent
			return place{kind: pChar, i: i, inner: &inner, konst: parent.konst, name: parent.name}, nil
		}
		return place{}, errAt(e.p, "cannot index into a value of type %s", pv.TypeName())
	case *propExpr:
		parent, pv, err := in.parentOf(e.p, e.x)
		if err != nil {
			return place{}, err
		}
		if pv.k == KindMap {
			return place{kind: pKey, m: pv.mp(), key: e.name, konst: parent.konst, name: parent.name}, nil
		}
		if e.safe && pv.k == KindUnit {
			return place{kind: pTemp}, nil
		}
		v, err := in.property(e.p, pv, e.name)
		if err != nil {
			return place{}, err
		}
		return place{kind: pTemp, tmp: v}, nil
	}
	v, err := in.eval(n)
	if err != nil {
		return place{}, err
	}
	return place{kind: pTemp, tmp: v}, nil
}

// parentOf resolves the place of the container x that an index or property
// at p reaches into, and reads it ready for changing inside (mutableAt).
func (in *interp) parentOf(p Pos, x node) (place, Value, error) {
	parent, err := in.placeOf(x)
	if err != nil {
		return place{}, Value{}, err
	}
	pv, err := in.mutableAt(p, &parent)
	if err != nil {
		return place{}, Value{}, err
	}
	return parent, pv, nil
}

// mutableAt reads a container from a place for changing inside it: shared
// storage is copied and the copy put back first (a constant cannot be).
func (in *interp) mutableAt(p Pos, pl *place) (Value, error) {
	v := in.get(pl)
	if !v.isShared() || pl.kind == pTemp {
		return v, nil
	}
	if pl.konst {
		return Value{}, errAt(p, "cannot modify constant %s", pl.name)
	}
	v, err := in.mutable(p, v)
	if err != nil {
		return Value{}, err
	}
	return v, in.set(p, pl, v)
}

func (in *interp) get(pl *place) Value {
	switch pl.kind {
	case pVar:
		return in.varValue(pl.i)
	case pThis:
		return *in.this
	case pElem:
		if pl.i >= len(pl.arr.Elems) {
			return Value{} // the array shrank under us; set reports it
		}
		return pl.arr.Elems[pl.i]
	case pKey:
		return pl.m.M[pl.key]
	case pChar:
		s := in.get(pl.inner).s
		r, _ := charAt(s, int64(pl.i))
		return Char(r)
	}
	return pl.tmp
}

func (in *interp) set(p Pos, pl *place, v Value) error {
	if pl.konst {
		return errAt(p, "cannot modify constant %s", pl.name)
	}
	switch pl.kind {
	case pVar:
		b := &in.scope[pl.i]
		if b.cell != nil {
			*b.cell = v
		} else {
			b.v = v
		}
	case pThis:
		*in.this = v
	case pElem:
		if pl.i >= len(pl.arr.Elems) {
			return errAt(p, "array index %d out of bounds: the array shrank to %d elements during the operation", pl.i, len(pl.arr.Elems))
		}
		pl.arr.Elems[pl.i] = v
	case pKey:
		if _, exists := pl.m.M[pl.key]; !exists {
			if err := in.checkMap(p, len(pl.m.M)+1); err != nil {
				return err
			}
		}
		pl.m.M[pl.key] = v
	case pChar:
		var r rune
		switch v.k {
		case KindChar:
			r = rune(v.n)
		case KindString:
			if utf8.RuneCountInString(v.s) != 1 {
				return errAt(p, "a string character can only be set to one character, found %q", v.s)
			}
			r, _ = utf8.DecodeRuneInString(v.s)
		default:
			return errAt(p, "a string character can only be set to a character, found %s", v.TypeName())
		}
		s := in.get(pl.inner).s
		rs := []rune(s)
		if pl.i >= len(rs) {
			return errAt(p, "character index %d out of bounds: the string shrank to %d characters during the operation", pl.i, len(rs))
		}
		rs[pl.i] = r
		return in.set(p, pl.inner, String(string(rs)))
	case pTemp:
		// Assigning into a temporary value has no lasting effect, as in Rhai.
	}
	return nil
}

func (in *interp) evalAssign(e *assignStmt) error {
	if g, ok := e.target.(*globalExpr); ok {
		return errAt(g.p, "cannot modify constant global::%s", g.name)
	}
	val, err := in.owned(e.val)
	if err != nil {
		return err
	}
	pl0, err := in.placeOf(e.target)
	if err != nil {
		return err
	}
	pl := &pl0
	if pl.kind == pTemp {
		if _, isProp := e.target.(*propExpr); isProp {
			return errAt(e.p, "cannot set a property on a value that is not an object map")
		}
	}
	if e.op == opAssign {
		return in.set(e.p, pl, val)
	}
	if pl.konst {
		return errAt(e.p, "cannot modify constant %s", pl.name)
	}
	cur := in.get(pl)
	if e.op == opAdd && (cur.k == KindArray || cur.k == KindMap) {
		if cur, err = in.mutableAt(e.p, pl); err != nil {
			return err
		}
	}
	// Arrays and maps grow in place: `a += x` pushes, `m += other` mixes in.
	if e.op == opAdd && cur.k == KindArray {
		a := cur.arr()
		if val.k == KindArray {
			if err := in.checkArray(e.p, len(a.Elems)+len(val.arr().Elems)); err != nil {
				return err
			}
			a.Elems = append(a.Elems, val.arr().Elems...)
		} else {
			if err := in.checkArray(e.p, len(a.Elems)+1); err != nil {
				return err
			}
			a.Elems = append(a.Elems, val)
		}
		return nil
	}
	if e.op == opAdd && cur.k == KindMap && val.k == KindMap {
		m := cur.mp()
		for k, v := range val.mp().M {
			m.M[k] = v
		}
		return in.checkMap(e.p, len(m.M))
	}
	if e.op == opAdd && cur.k != KindString && val.k == KindString && cur.k != KindArray && cur.k != KindMap {
		t, err := in.text(e.p, cur, false)
		if err != nil {
			return err
		}
		cur = String(t)
	}
	if e.op == opAdd && cur.k == KindString {
		// Building a string with += in a loop is the commonest render
		// pattern; appending in place keeps it linear instead of quadratic.
		add, err := in.text(e.p, val, false)
		if err != nil {
			return err
		}
		nv := appendString(cur, add)
		// Charge for the bytes added, not the whole string: the append is in place.
		if err := in.charge(e.p, (len(nv.s)-len(cur.s))/4096); err != nil {
			return err
		}
		if len(nv.s) > in.lim.MaxStringLen {
			return limitErr(e.p, LimitStringLen, "string too long: %d bytes, more than %d", len(nv.s), in.lim.MaxStringLen)
		}
		return in.set(e.p, pl, nv)
	}
	nv, err := binaryOp(e.p, e.op, cur, val)
	if err != nil {
		return err
	}
	if err := in.checkValue(e.p, nv); err != nil {
		return err
	}
	return in.set(e.p, pl, nv)
}

// appendString returns cur + the text of val. When cur is the whole content
// of a builder it owns (it was made by an earlier append), the builder grows
// in place: strings handed out before stay valid, as a Builder never rewrites
// bytes it has written.
func appendString(cur Value, add string) Value {
	if b, ok := cur.p.(*strings.Builder); ok && b.Len() == len(cur.s) {
		b.WriteString(add)
		return Value{k: KindString, s: b.String(), p: b}
	}
	if len(cur.s)+len(add) < 256 {
		return String(cur.s + add)
	}
	b := &strings.Builder{}
	b.Grow(2 * (len(cur.s) + len(add)))
	b.WriteString(cur.s)
	b.WriteString(add)
	return Value{k: KindString, s: b.String(), p: b}
}

// ---- calls ----

// evalArgs evaluates call arguments onto the interpreter's argument stack,
// saving an allocation per call. The caller passes the slice to the call
// and then releases it with releaseArgs(base); callees copy what they keep.
func (in *interp) evalArgs(args []node) ([]Value, int, error) {
	base := len(in.argStack)
	if len(args) == 0 {
		return nil, base, nil
	}
	for _, a := range args {
		v, err := in.owned(a)
		if err != nil {
			in.releaseArgs(base)
			return nil, base, err
		}
		in.argStack = append(in.argStack, v)
	}
	top := len(in.argStack)
	return in.argStack[base:top:top], base, nil
}

func (in *interp) releaseArgs(base int) {
	clear(in.argStack[base:])
	in.argStack = in.argStack[:base]
}

func (s *Script) findFn(name string, arity int) *fnDef {
	for _, f := range s.fns[name] {
		if len(f.params) == arity {
			return f
		}
	}
	return nil
}

func (in *interp) evalCall(e *callExpr) (Value, error) {
	args, base, err := in.evalArgs(e.args)
	if err != nil {
		return Value{}, err
	}
	v, err := in.dispatchCall(e, args)
	in.releaseArgs(base)
	return v, err
}

func (in *interp) dispatchCall(e *callExpr, args []Value) (Value, error) {
	if f := in.s.findFn(e.name, len(args)); f != nil {
		return in.callScript(e.p, f, args, nil)
	}
	// A variable holding a function pointer can be called by name.
	if i := in.lookup(e.name); i >= 0 {
		if v := in.varValue(i); v.k == KindFn {
			return in.callPtr(e.p, v.fn(), args)
		}
	}
	return in.callBuiltinFn(e.p, e.name, args)
}

func (in *interp) evalMethod(e *methodExpr) (Value, error) {
	// A method known not to change its receiver reads it as a value; others
	// work on the receiver's place, so that a.push(x) changes a.
	pure := e.pure
	if pure || !isPlace(e.recv) {
		recv, err := in.eval(e.recv)
		if err != nil {
			return Value{}, err
		}
		if e.safe && recv.k == KindUnit {
			return Value{}, nil
		}
		args, base, err := in.evalArgs(e.args)
		if err != nil {
			return Value{}, err
		}
		if !pure {
			recv, err = in.mutable(e.p, recv)
		}
		var v Value
		if err == nil {
			v, err = in.callMethodFn(e.p, e.name, e.fn, &recv, args)
		}
		in.releaseArgs(base)
		return v, err
	}
	pl, err := in.placeOf(e.recv)
	if err != nil {
		return Value{}, err
	}
	recv := in.get(&pl)
	if e.safe && recv.k == KindUnit {
		return Value{}, nil
	}
	args, base, err := in.evalArgs(e.args)
	if err != nil {
		return Value{}, err
	}
	v, err := in.methodOnPlace(e, &pl, recv, args)
	in.releaseArgs(base)
	return v, err
}

// methodOnPlace calls a method that may change its receiver, stored at pl.
func (in *interp) methodOnPlace(e *methodExpr, pl *place, recv Value, args []Value) (Value, error) {
	if pl.konst {
		// A constant may be read by any method but changed by none: run
		// the method on a copy and refuse if the copy changed.
		before := recv.share()
		work := before.unshared()
		res, err := in.callMethodFn(e.p, e.name, e.fn, &work, args)
		if err != nil {
			return Value{}, err
		}
		same, err := in.equal(e.p, before, work)
		if err != nil {
			return Value{}, err
		}
		if !same || work.k != before.k {
			return Value{}, errAt(e.p, "cannot modify constant %s", pl.name)
		}
		return res, nil
	}
	if recv.isShared() {
		var err error
		if recv, err = in.mutableAt(e.p, pl); err != nil {
			return Value{}, err
		}
	}
	before := recv
	res, err := in.callMethodFn(e.p, e.name, e.fn, &recv, args)
	if err != nil {
		return Value{}, err
	}
	if before.k != recv.k || before.n != recv.n || before.p != recv.p || before.s != recv.s {
		if err := in.set(e.p, pl, recv); err != nil {
			return Value{}, err
		}
	}
	return res, nil
}

// callMethodFn dispatches recv.name(args): the script function f (looked up
// at compile time; this bound to recv), function pointers and map-held
// closures, then the builtin methods.
func (in *interp) callMethodFn(p Pos, name string, f *fnDef, recv *Value, args []Value) (Value, error) {
	if f != nil {
		r := *recv
		v, err := in.callScript(p, f, args, &r)
		*recv = r
		return v, err
	}
	if name == "call" && recv.k != KindFn && len(args) > 0 && args[0].k == KindFn {
		// x.call(f, …) runs f with `this` bound to x.
		return in.callPtrThis(p, args[0].fn(), args[1:], recv)
	}
	if recv.k == KindFn {
		switch name {
		case "call":
			return in.callPtr(p, recv.fn(), args)
		case "curry":
			return curry(recv.fn(), args), nil
		}
	}
	if recv.k == KindMap {
		if fv, ok := recv.mp().M[name]; ok && fv.k == KindFn {
			r := *recv
			v, err := in.callPtrThis(p, fv.fn(), args, &r)
			*recv = r
			return v, err
		}
	}
	v, found, err := in.builtinMethod(p, name, recv, args)
	if err != nil {
		return Value{}, err
	}
	if found {
		return v, in.checkValue(p, v)
	}
	return Value{}, notFound(p, name, append([]Value{*recv}, args...))
}

func notFound(p Pos, name string, args []Value) *Error {
	types := make([]string, len(args))
	for i, a := range args {
		types[i] = a.TypeName()
	}
	return errAt(p, "function not found: %s (%s)", name, strings.Join(types, ", "))
}

func curry(fp *FnPtr, args []Value) Value {
	nf := *fp
	nf.curried = append(append([]Value(nil), fp.curried...), args...)
	return fnValue(&nf)
}

func (in *interp) enterCall(p Pos) error {
	in.depth++
	if in.depth > in.lim.MaxCallDepth {
		return limitErr(p, LimitCallDepth, "call stack overflow: functions nested more than %d deep", in.lim.MaxCallDepth)
	}
	return nil
}

// callFrame is the caller's state that a call saves and restores.
type callFrame struct {
	base, frame int // scope length and frame start at the call
	this        *Value
}

// openCall enters a call made at p: it checks the depth limit and starts a
// frame whose variables begin at the current top of the scope.
func (in *interp) openCall(p Pos, this *Value) (callFrame, error) {
	if err := in.enterCall(p); err != nil {
		in.depth--
		return callFrame{}, err
	}
	fr := callFrame{base: len(in.scope), frame: in.frame, this: in.this}
	in.frame, in.this = fr.base, this
	return fr, nil
}

// closeCall leaves the frame fr with the body's result: a return yields its
// value, the callee's variables go, the caller's state comes back, and a
// break or continue that escaped the body becomes an error at the call p.
func (in *interp) closeCall(p Pos, fr callFrame, v Value, err error) (Value, error) {
	if err == errReturn {
		v, err = in.retVal, nil
		in.retVal = Value{}
	}
	in.truncate(fr.base)
	in.frame, in.this = fr.frame, fr.this
	in.depth--
	if err != nil {
		return Value{}, stray(p, err)
	}
	return v, nil
}

// stray turns a break, continue or return signal that escaped the construct
// it belongs to into an error at p; other errors pass through.
func stray(p Pos, err error) error {
	if c, ok := err.(*ctrl); ok {
		return errAt(p, "%s", c.Error())
	}
	return err
}

// exit sets the value a return or break carries (unit when it has none) in
// slot and gives the signal that unwinds to its function or loop.
func (in *interp) exit(slot *Value, x node, signal error) error {
	*slot = Value{}
	if x != nil {
		v, err := in.owned(x)
		if err != nil {
			return err
		}
		*slot = v
	}
	return signal
}

func (in *interp) callScript(p Pos, f *fnDef, args []Value, this *Value) (Value, error) {
	fr, err := in.openCall(p, this)
	if err != nil {
		return Value{}, err
	}
	for i, prm := range f.params {
		in.push(prm, args[i], false)
	}
	v, err := in.evalBlock(f.body)
	if err != nil && p.Line != 0 { // not the host's own call
		addFrame(err, "fn "+f.name, p) // a no-op for break/continue/return signals
	}
	if v, err = in.closeCall(p, fr, v, err); err != nil {
		return Value{}, err
	}
	if this != nil {
		return in.cloneV(p, v) // a method may return `this`, which the caller still owns
	}
	return v, nil
}

// maxTrace bounds the call frames an error lists.
const maxTrace = 8

// addFrame notes on err that it passed out of a call made at p.
func addFrame(err error, what string, p Pos) {
	if e, ok := err.(*Error); ok && len(e.Trace) < maxTrace {
		e.Trace = append(e.Trace, fmt.Sprintf("%s called at %s", what, p))
	}
}

func (in *interp) callPtr(p Pos, fp *FnPtr, args []Value) (Value, error) {
	return in.callPtrThis(p, fp, args, nil)
}

func (in *interp) callPtrThis(p Pos, fp *FnPtr, args []Value, this *Value) (Value, error) {
	if len(fp.curried) > 0 {
		args = append(append([]Value(nil), fp.curried...), args...)
	}
	if fp.closure == nil {
		if f := in.s.findFn(fp.Name, len(args)); f != nil {
			return in.callScript(p, f, args, this)
		}
		return in.callBuiltinFn(p, fp.Name, args)
	}
	c := fp.closure
	if len(args) != len(c.params) {
		return Value{}, errAt(p, "closure takes %d parameters, called with %d", len(c.params), len(args))
	}
	fr, err := in.openCall(p, this)
	if err != nil {
		return Value{}, err
	}
	for i, name := range c.captures {
		if fp.shared[i] != nil {
			in.scope = append(in.scope, binding{name: name, cell: fp.shared[i]})
		}
	}
	for i, prm := range c.params {
		in.push(prm, args[i], false)
	}
	v, err := in.eval(c.body)
	return in.closeCall(p, fr, v, err)
}

// arityOf is the number of parameters a function pointer will take, or -1 if
// unknown (builtins); callbacks use it to pass optional index arguments.
func (in *interp) arityOf(fp *FnPtr, max int) int {
	if fp.closure != nil {
		return len(fp.closure.params) - len(fp.curried)
	}
	for n := max; n >= 0; n-- {
		if in.s.findFn(fp.Name, n+len(fp.curried)) != nil {
			return n
		}
	}
	return -1
}

// callback calls fp with as many of args as it accepts. Arguments are
// copies, as in Rhai, so a callback cannot change the array it walks.
func (in *interp) callback(p Pos, fp *FnPtr, args ...Value) (Value, error) {
	n := in.arityOf(fp, len(args))
	if n >= 0 && n < len(args) {
		args = args[:n]
	}
	for i, a := range args {
		c, err := in.cloneV(p, a)
		if err != nil {
			return Value{}, err
		}
		args[i] = c
	}
	return in.callPtr(p, fp, args)
}

// ---- operators ----

func unaryOp(p Pos, op string, v Value) (Value, error) {
	switch op {
	case "-":
		switch v.k {
		case KindInt:
			if v.n == math.MinInt64 {
				return Value{}, errAt(p, "negation overflow: -(%d)", v.n)
			}
			return Int(-v.n), nil
		case KindFloat:
			return Float(-v.float()), nil
		}
	case "+":
		if v.k == KindInt || v.k == KindFloat {
			return v, nil
		}
	case "!":
		if v.k == KindBool {
			return Bool(v.n == 0), nil
		}
	}
	return Value{}, errAt(p, "operator '%s' is not defined for %s", op, v.TypeName())
}

func binaryOp(p Pos, op opCode, l, r Value) (Value, error) {
	if l.k == KindInt && r.k == KindInt {
		return intOp(p, op, l.n, r.n)
	}
	if (l.k == KindInt || l.k == KindFloat) && (r.k == KindInt || r.k == KindFloat) {
		return floatOp(p, op, toF(l), toF(r))
	}
	switch op {
	case opEq:
		return Bool(Equal(l, r)), nil
	case opNe:
		return Bool(!Equal(l, r)), nil
	case opLt, opLe, opGt, opGe:
		c, ok := compare(l, r)
		if !ok {
			return Bool(false), nil // Rhai: comparing unrelated types is false
		}
		return Bool(cmpResult(op, c)), nil
	case opAdd:
		switch {
		case l.k == KindString && r.k == KindString:
			return String(l.s + r.s), nil
		case l.k == KindChar && r.k == KindChar:
			return String(string(rune(l.n)) + string(rune(r.n))), nil
		case l.k == KindArray && r.k == KindArray:
			out := make([]Value, 0, len(l.arr().Elems)+len(r.arr().Elems))
			for _, v := range l.arr().Elems {
				out = append(out, v.share())
			}
			for _, v := range r.arr().Elems {
				out = append(out, v.share())
			}
			return NewArray(out), nil
		case l.k == KindMap && r.k == KindMap:
			m := l.unshared().mp().M
			for k, v := range r.mp().M {
				m[k] = v.share()
			}
			return NewMap(m), nil
		}
	case opSub:
		if l.k == KindString && (r.k == KindString || r.k == KindChar) {
			return String(strings.ReplaceAll(l.s, r.String(), "")), nil
		}
	case opBitAnd, opBitOr, opXor:
		if l.k == KindBool && r.k == KindBool {
			a, b := l.n != 0, r.n != 0
			switch op {
			case opBitAnd:
				return Bool(a && b), nil
			case opBitOr:
				return Bool(a || b), nil
			}
			return Bool(a != b), nil
		}
	}
	return Value{}, errAt(p, "operator '%s' is not defined for %s and %s", op, l.TypeName(), r.TypeName())
}

func toF(v Value) float64 {
	if v.k == KindInt {
		return float64(v.n)
	}
	return v.float()
}

func cmpResult(op opCode, c int) bool {
	switch op {
	case opLt:
		return c < 0
	case opLe:
		return c <= 0
	case opGt:
		return c > 0
	}
	return c >= 0
}

// compare orders two values of comparable types.
func compare(l, r Value) (int, bool) {
	switch {
	case l.k == KindInt && r.k == KindInt:
		return cmp3(l.n < r.n, l.n > r.n), true
	case (l.k == KindInt || l.k == KindFloat) && (r.k == KindInt || r.k == KindFloat):
		a, b := toF(l), toF(r)
		return cmp3(a < b, a > b), true
	case (l.k == KindString || l.k == KindChar) && (r.k == KindString || r.k == KindChar):
		return strings.Compare(l.String(), r.String()), true
	case l.k == KindBool && r.k == KindBool:
		return cmp3(l.n < r.n, l.n > r.n), true
	}
	return 0, false
}

func cmp3(lt, gt bool) int {
	switch {
	case lt:
		return -1
	case gt:
		return 1
	}
	return 0
}

func intOp(p Pos, op opCode, a, b int64) (Value, error) {
	switch op {
	case opAdd:
		s := a + b
		if (s > a) != (b > 0) {
			return Value{}, errAt(p, "addition overflow: %d + %d", a, b)
		}
		return Int(s), nil
	case opSub:
		s := a - b
		if (s < a) != (b > 0) {
			return Value{}, errAt(p, "subtraction overflow: %d - %d", a, b)
		}
		return Int(s), nil
	case opMul:
		if a == 0 || b == 0 {
			return Int(0), nil
		}
		s := a * b
		if s/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
			return Value{}, errAt(p, "multiplication overflow: %d * %d", a, b)
		}
		return Int(s), nil
	case opDiv:
		if b == 0 {
			return Value{}, errAt(p, "division by zero: %d / %d", a, b)
		}
		if a == math.MinInt64 && b == -1 {
			return Value{}, errAt(p, "division overflow: %d / %d", a, b)
		}
		return Int(a / b), nil
	case opMod:
		if b == 0 {
			return Value{}, errAt(p, "modulo division by zero: %d %% %d", a, b)
		}
		if b == -1 {
			return Int(0), nil
		}
		return Int(a % b), nil
	case opPow:
		if b < 0 {
			return Value{}, errAt(p, "integer raised to a negative power: %d ** %d", a, b)
		}
		res := int64(1)
		base := a
		for e := b; e > 0; e >>= 1 {
			if e&1 == 1 {
				n := res * base
				if base != 0 && (n/base != res || (base == -1 && res == math.MinInt64)) {
					return Value{}, errAt(p, "power overflow: %d ** %d", a, b)
				}
				res = n
			}
			if e > 1 {
				sq := base * base
				if base != 0 && sq/base != base {
					return Value{}, errAt(p, "power overflow: %d ** %d", a, b)
				}
				base = sq
			}
		}
		return Int(res), nil
	case opShl, opShr:
		right := op == opShr
		if b < 0 { // a negative count shifts the other way
			b, right = -b, !right
		}
		if b >= 64 || b < 0 { // b < 0: the count was i64::MIN, whose negation overflows
			return Value{}, errAt(p, "shift by too many bits: %d %s %d", a, op, b)
		}
		if right {
			return Int(a >> uint(b)), nil
		}
		return Int(a << uint(b)), nil
	case opBitAnd:
		return Int(a & b), nil
	case opBitOr:
		return Int(a | b), nil
	case opXor:
		return Int(a ^ b), nil
	case opEq:
		return Bool(a == b), nil
	case opNe:
		return Bool(a != b), nil
	case opLt, opLe, opGt, opGe:
		return Bool(cmpResult(op, cmp3(a < b, a > b))), nil
	}
	return Value{}, errAt(p, "operator '%s' is not defined for i64 and i64", op)
}

func floatOp(p Pos, op opCode, a, b float64) (Value, error) {
	switch op {
	case opAdd:
		return Float(a + b), nil
	case opSub:
		return Float(a - b), nil
	case opMul:
		return Float(a * b), nil
	case opDiv:
		// As in Rhai, float division follows IEEE 754: x / 0.0 is ±inf, not an error.
		return Float(a / b), nil
	case opMod:
		return Float(math.Mod(a, b)), nil
	case opPow:
		return Float(math.Pow(a, b)), nil
	case opEq:
		return Bool(a == b), nil
	case opNe:
		return Bool(a != b), nil
	case opLt, opLe, opGt, opGe:
		return Bool(cmpResult(op, cmp3(a < b, a > b))), nil
	}
	return Value{}, errAt(p, "operator '%s' is not defined for numbers", op)
}
