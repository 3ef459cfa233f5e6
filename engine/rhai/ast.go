package rhai

// node is an expression or statement. Rhai treats statements as expressions
// (a block's value is its last statement's), so one interface covers both.
type node interface{ at() Pos }

type (
	litExpr struct {
		p Pos
		v Value
	}
	interpExpr struct {
		p     Pos
		parts []node
	}
	varExpr struct {
		p    Pos
		name string
	}
	globalExpr struct {
		p    Pos
		name string
	}
	thisExpr  struct{ p Pos }
	arrayExpr struct {
		p     Pos
		elems []node
	}
	mapExpr struct {
		p    Pos
		keys []string
		vals []node
	}
	unaryExpr struct {
		p  Pos
		op string
		x  node
	}
	binaryExpr struct {
		p    Pos
		op   opCode
		l, r node
	}
	rangeExpr struct {
		p    Pos
		l, r node
		incl bool
	}
	indexExpr struct {
		p      Pos
		x, idx node
		safe   bool
	}
	propExpr struct {
		p    Pos
		x    node
		name string
		safe bool
	}
	callExpr struct {
		p    Pos
		name string
		args []node
	}
	methodExpr struct {
		p    Pos
		recv node
		name string
		args []node
		safe bool
		// Resolved after parsing: the script function a call with these
		// arguments reaches (nil: a builtin), and whether the method is a
		// builtin known not to change its receiver.
		fn   *fnDef
		pure bool
	}
	closureExpr struct {
		p   Pos
		def *closureDef
	}
	ifExpr struct {
		p    Pos
		cond node
		then *blockExpr
		els  node // nil, *blockExpr or *ifExpr
	}
	switchExpr struct {
		p     Pos
		x     node
		cases []switchCase
		def   node
	}
	blockExpr struct {
		p     Pos
		stmts []node
	}
	whileExpr struct {
		p       Pos
		cond    node
		body    *blockExpr
		until   bool // do … until
		postfix bool // do … while / until
	}
	loopExpr struct {
		p    Pos
		body *blockExpr
	}
	forExpr struct {
		p       Pos
		v, idx  string
		iter    node
		body    *blockExpr
		iterPos Pos
	}
	tryExpr struct {
		p      Pos
		body   *blockExpr
		errVar string
		catch  *blockExpr
	}
	letStmt struct {
		p     Pos
		name  string
		init  node
		konst bool
	}
	assignStmt struct {
		p      Pos
		target node
		op     opCode // opAssign, or the binary operator of a compound assignment
		val    node
	}
	returnStmt struct {
		p Pos
		x node
	}
	breakStmt struct {
		p Pos
		x node
	}
	continueStmt struct{ p Pos }
	throwStmt    struct {
		p Pos
		x node
	}
)

type switchCase struct {
	vals []Value
	cond node
	body node
}

// closureDef is an anonymous function; captures are the outer variables its
// body names, shared with the scope that creates it.
type closureDef struct {
	p        Pos
	params   []string
	body     node
	captures []string
	name     string
}

// fnDef is a script function.
type fnDef struct {
	p      Pos
	name   string
	params []string
	body   *blockExpr
}

func (e *litExpr) at() Pos      { return e.p }
func (e *interpExpr) at() Pos   { return e.p }
func (e *varExpr) at() Pos      { return e.p }
func (e *globalExpr) at() Pos   { return e.p }
func (e *thisExpr) at() Pos     { return e.p }
func (e *arrayExpr) at() Pos    { return e.p }
func (e *mapExpr) at() Pos      { return e.p }
func (e *unaryExpr) at() Pos    { return e.p }
func (e *binaryExpr) at() Pos   { return e.p }
func (e *rangeExpr) at() Pos    { return e.p }
func (e *indexExpr) at() Pos    { return e.p }
func (e *propExpr) at() Pos     { return e.p }
func (e *callExpr) at() Pos     { return e.p }
func (e *methodExpr) at() Pos   { return e.p }
func (e *closureExpr) at() Pos  { return e.p }
func (e *ifExpr) at() Pos       { return e.p }
func (e *switchExpr) at() Pos   { return e.p }
func (e *blockExpr) at() Pos    { return e.p }
func (e *whileExpr) at() Pos    { return e.p }
func (e *loopExpr) at() Pos     { return e.p }
func (e *forExpr) at() Pos      { return e.p }
func (e *tryExpr) at() Pos      { return e.p }
func (e *letStmt) at() Pos      { return e.p }
func (e *assignStmt) at() Pos   { return e.p }
func (e *returnStmt) at() Pos   { return e.p }
func (e *breakStmt) at() Pos    { return e.p }
func (e *continueStmt) at() Pos { return e.p }
func (e *throwStmt) at() Pos    { return e.p }

// isPlace reports whether evaluating n reads stored data (so the result must
// be cloned before it is stored elsewhere).
func isPlace(n node) bool {
	switch n.(type) {
	case *varExpr, *indexExpr, *propExpr, *thisExpr, *globalExpr:
		return true
	}
	return false
}

// freeVars collects the variable names n reads, for closure capture.
func freeVars(n node, out map[string]bool) {
	switch e := n.(type) {
	case nil:
	case *varExpr:
		out[e.name] = true
	case *interpExpr:
		freeVarsAll(e.parts, out)
	case *arrayExpr:
		freeVarsAll(e.elems, out)
	case *mapExpr:
		freeVarsAll(e.vals, out)
	case *unaryExpr:
		freeVars(e.x, out)
	case *binaryExpr:
		freeVars(e.l, out)
		freeVars(e.r, out)
	case *rangeExpr:
		freeVars(e.l, out)
		freeVars(e.r, out)
	case *indexExpr:
		freeVars(e.x, out)
		freeVars(e.idx, out)
	case *propExpr:
		freeVars(e.x, out)
	case *callExpr:
		out[e.name] = true // a variable holding a function pointer may be called by name
		freeVarsAll(e.args, out)
	case *methodExpr:
		freeVars(e.recv, out)
		freeVarsAll(e.args, out)
	case *closureExpr:
		for _, c := range e.def.captures {
			out[c] = true
		}
	case *ifExpr:
		freeVars(e.cond, out)
		freeVars(e.then, out)
		freeVars(e.els, out)
	case *switchExpr:
		freeVars(e.x, out)
		for _, c := range e.cases {
			freeVars(c.cond, out)
			freeVars(c.body, out)
		}
		freeVars(e.def, out)
	case *blockExpr:
		freeVarsAll(e.stmts, out)
	case *whileExpr:
		freeVars(e.cond, out)
		freeVars(e.body, out)
	case *loopExpr:
		freeVars(e.body, out)
	case *forExpr:
		freeVars(e.iter, out)
		freeVars(e.body, out)
	case *tryExpr:
		freeVars(e.body, out)
		freeVars(e.catch, out)
	case *letStmt:
		freeVars(e.init, out)
	case *assignStmt:
		freeVars(e.target, out)
		freeVars(e.val, out)
	case *returnStmt:
		freeVars(e.x, out)
	case *breakStmt:
		freeVars(e.x, out)
	case *throwStmt:
		freeVars(e.x, out)
	}
}

// freeVarsAll is freeVars over each of ns.
func freeVarsAll(ns []node, out map[string]bool) {
	for _, n := range ns {
		freeVars(n, out)
	}
}

// pureMethods never change their receiver, whatever its type.
var pureMethods = map[string]bool{
	"len": true, "is_empty": true, "contains": true, "starts_with": true, "ends_with": true,
	"index_of": true, "sub_string": true, "to_upper": true, "to_lower": true, "to_string": true,
	"to_debug": true, "chars": true, "get": true, "keys": true, "values": true, "type_of": true,
	"to_int": true, "to_float": true, "join": true, "filter": true, "map": true, "reduce": true,
	"reduce_rev": true, "some": true, "all": true, "find": true, "extract": true, "abs": true,
	"is_odd": true, "is_even": true, "floor": true, "ceiling": true, "round": true,
}

// opCode is a binary operator, resolved once at parse time so evaluation
// switches on a byte, not a string.
type opCode uint8

const (
	opAdd opCode = iota
	opSub
	opMul
	opDiv
	opMod
	opPow
	opShl
	opShr
	opBitAnd
	opBitOr
	opXor
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
	opAnd
	opOr
	opCoalesce
	opIn
	opNotIn
	opAssign
)

var opNames = [...]string{"+", "-", "*", "/", "%", "**", "<<", ">>", "&", "|", "^", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "??", "in", "!in", "="}

func (o opCode) String() string { return opNames[o] }

var opCodes = func() map[string]opCode {
	m := make(map[string]opCode, len(opNames))
	for i, n := range opNames {
		m[n] = opCode(i)
	}
	return m
}()
