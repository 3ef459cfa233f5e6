package rhai

import (
	"math"
	"sort"
	"unicode/utf8"
)

type parser struct {
	toks     []token
	i        int
	depth    int
	maxDepth int
	fns      map[string][]*fnDef // by name, one per arity
	inFn     bool
	loops    int // loop nesting, for break/continue checks
	closures int
	methods  *[]*methodExpr // every method call, resolved once all fns are known
}

// binary operator precedences, as in Rhai's tokenizer.
var precedence = map[string]int{
	"||": 30, "|": 30, "^": 30,
	"&&": 60, "&": 60,
	"==": 90, "!=": 90,
	"in": 110, "!in": 110,
	"<": 130, "<=": 130, ">": 130, ">=": 130,
	"??": 135,
	"..": 140, "..=": 140,
	"+": 150, "-": 150,
	"*": 180, "/": 180, "%": 180,
	"**": 190,
	"<<": 210, ">>": 210,
}

var blockKeywords = map[string]bool{"if": true, "switch": true, "while": true, "loop": true, "do": true, "for": true, "try": true}

var compoundOps = map[string]string{
	"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "**=": "**",
	"<<=": "<<", ">>=": ">>", "&=": "&", "|=": "|", "^=": "^",
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) advance() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}
func (p *parser) is(text string) bool {
	t := p.toks[p.i]
	return (t.kind == tPunct || t.kind == tKeyword) && t.text == text
}
func (p *parser) accept(text string) bool {
	if p.is(text) {
		p.advance()
		return true
	}
	return false
}
func (p *parser) expect(text, context string) (token, error) {
	if p.is(text) {
		return p.advance(), nil
	}
	t := p.peek()
	if context != "" {
		return t, errAt(t.pos, "expected '%s' %s, found %s", text, context, t)
	}
	return t, errAt(t.pos, "expected '%s', found %s", text, t)
}
func (p *parser) ident(context string) (token, error) {
	t := p.peek()
	if t.kind != tIdent {
		return t, errAt(t.pos, "expected a name %s, found %s", context, t)
	}
	return p.advance(), nil
}

func (p *parser) enter(at Pos) error {
	p.depth++
	if p.depth > p.maxDepth {
		return limitErr(at, LimitExprDepth, "expression nested too deeply (more than %d levels)", p.maxDepth)
	}
	return nil
}
func (p *parser) leave() { p.depth-- }

// parseProgram parses a whole script: function definitions and top-level statements.
func (p *parser) parseProgram() ([]node, error) {
	var stmts []node
	for p.peek().kind != tEOF {
		if p.is("fn") || p.is("private") {
			if err := p.parseFn(); err != nil {
				return nil, err
			}
			continue
		}
		s, err := p.parseStmt()
		if err != nil {
			return nil, err
		}
		if s != nil {
			stmts = append(stmts, s)
		}
		if err := p.endStmt(s); err != nil {
			return nil, err
		}
	}
	return stmts, nil
}

func (p *parser) parseFn() error {
	start := p.peek().pos
	if p.inFn || p.closures > 0 {
		return errAt(start, "functions can only be defined at global level")
	}
	p.accept("private")
	if _, err := p.expect("fn", "after 'private'"); err != nil {
		return err
	}
	nameTok, err := p.ident("for the function")
	if err != nil {
		return err
	}
	if _, err := p.expect("(", "after the function name"); err != nil {
		return err
	}
	var params []string
	seen := map[string]bool{}
	for !p.is(")") {
		pt, err := p.ident("for a parameter")
		if err != nil {
			return err
		}
		if seen[pt.text] {
			return errAt(pt.pos, "duplicated parameter '%s' in function '%s'", pt.text, nameTok.text)
		}
		seen[pt.text] = true
		params = append(params, pt.text)
		if !p.accept(",") {
			break
		}
	}
	if _, err := p.expect(")", "to close the parameter list"); err != nil {
		return err
	}
	for _, f := range p.fns[nameTok.text] {
		if len(f.params) == len(params) {
			return errAt(nameTok.pos, "function '%s' with %d parameters is defined twice", nameTok.text, len(params))
		}
	}
	p.inFn = true
	body, err := p.parseBlock()
	p.inFn = false
	if err != nil {
		return err
	}
	p.fns[nameTok.text] = append(p.fns[nameTok.text], &fnDef{p: start, name: nameTok.text, params: params, body: body})
	return nil
}

// selfTerminated reports whether a statement ends in a block and needs no ';'.
func selfTerminated(n node) bool {
	switch n.(type) {
	case *ifExpr, *switchExpr, *blockExpr, *whileExpr, *loopExpr, *forExpr, *tryExpr:
		return true
	}
	return false
}

// endStmt consumes the ';' after a statement, where one is needed.
func (p *parser) endStmt(s node) error {
	if p.accept(";") {
		return nil
	}
	if s == nil || selfTerminated(s) {
		return nil
	}
	if p.is("}") || p.peek().kind == tEOF {
		return nil
	}
	t := p.peek()
	if err := unsupportedOp(t); err != nil {
		return err
	}
	return errAt(t.pos, "expected ';' to end the statement, found %s", t)
}

func (p *parser) parseBlock() (*blockExpr, error) {
	start, err := p.expect("{", "to open a block")
	if err != nil {
		return nil, err
	}
	if err := p.enter(start.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	b := &blockExpr{p: start.pos}
	for !p.is("}") {
		if p.peek().kind == tEOF {
			return nil, errAt(start.pos, "block opened here is never closed with '}'")
		}
		if p.is("fn") || p.is("private") {
			return nil, errAt(p.peek().pos, "functions can only be defined at global level")
		}
		s, err := p.parseStmt()
		if err != nil {
			return nil, err
		}
		if s != nil {
			b.stmts = append(b.stmts, s)
		}
		if err := p.endStmt(s); err != nil {
			return nil, err
		}
	}
	p.advance()
	return b, nil
}

func (p *parser) parseStmt() (node, error) {
	t := p.peek()
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	if t.kind == tPunct && t.text == ";" {
		return nil, nil
	}
	if t.kind == tKeyword {
		switch t.text {
		case "let", "const":
			p.advance()
			nt, err := p.ident("after '" + t.text + "'")
			if err != nil {
				return nil, err
			}
			s := &letStmt{p: t.pos, name: nt.text, konst: t.text == "const"}
			if p.accept("=") {
				if s.init, err = p.parseExpr(); err != nil {
					return nil, err
				}
			} else if s.konst {
				return nil, errAt(nt.pos, "constant '%s' needs a value", nt.text)
			}
			return s, nil
		case "return", "throw", "break":
			p.advance()
			var x node
			if !p.is(";") && !p.is("}") && p.peek().kind != tEOF {
				var err error
				if x, err = p.parseExpr(); err != nil {
					return nil, err
				}
			}
			switch t.text {
			case "return":
				return &returnStmt{p: t.pos, x: x}, nil
			case "throw":
				return &throwStmt{p: t.pos, x: x}, nil
			}
			if p.loops == 0 {
				return nil, errAt(t.pos, "'break' is only allowed inside a loop")
			}
			return &breakStmt{p: t.pos, x: x}, nil
		case "continue":
			p.advance()
			if p.loops == 0 {
				return nil, errAt(t.pos, "'continue' is only allowed inside a loop")
			}
			return &continueStmt{p: t.pos}, nil
		case "import", "export":
			return nil, errAt(t.pos, "'%s' is not supported: modules are outside the sandboxed Rhai subset", t.text)
		case "fn", "private":
			return nil, errAt(t.pos, "functions can only be defined at global level")
		}
	}
	// A statement that starts with a block construct ends with its block:
	// `for … { } [a]` is a loop and then an array, not an index.
	if (t.kind == tKeyword && blockKeywords[t.text]) || (t.kind == tPunct && t.text == "{") {
		return p.parsePrimary()
	}
	x, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	op := p.peek()
	if op.kind == tPunct && (op.text == "=" || compoundOps[op.text] != "") {
		switch x.(type) {
		case *varExpr, *indexExpr, *propExpr, *thisExpr:
		default:
			return nil, errAt(op.pos, "cannot assign to this expression (only to a variable, an index or a property)")
		}
		p.advance()
		val, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		s := &assignStmt{p: op.pos, target: x, op: opAssign, val: val}
		if op.text != "=" {
			s.op = opCodes[compoundOps[op.text]]
		}
		return s, nil
	}
	return x, nil
}

func (p *parser) parseExpr() (node, error) {
	if err := p.enter(p.peek().pos); err != nil {
		return nil, err
	}
	defer p.leave()
	return p.parseBinary(0)
}

// maxChain bounds operators or postfixes in a row (a + b + c …, a.b.c …):
// the tree they build is as deep as the chain is long, and evaluating it
// recurses that deep.
const maxChain = 4096

func (p *parser) parseBinary(minPrec int) (node, error) {
	lhs, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for chain := 0; ; chain++ {
		if chain > maxChain {
			return nil, limitErr(lhs.at(), LimitExprDepth, "expression too long: more than %d operators in a row", maxChain)
		}
		t := p.peek()
		if t.kind != tPunct && !(t.kind == tKeyword && t.text == "in") {
			return lhs, nil
		}
		prec, ok := precedence[t.text]
		if !ok || prec <= minPrec {
			return lhs, nil
		}
		p.advance()
		next := prec
		if t.text == "**" {
			next = prec - 1 // right-associative
		}
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		rhs, err := p.parseBinary(next)
		p.leave()
		if err != nil {
			return nil, err
		}
		switch t.text {
		case "..", "..=":
			lhs = &rangeExpr{p: t.pos, l: lhs, r: rhs, incl: t.text == "..="}
		default:
			lhs = &binaryExpr{p: t.pos, op: opCodes[t.text], l: lhs, r: rhs}
		}
	}
}

func (p *parser) parseUnary() (node, error) {
	t := p.peek()
	if t.kind == tPunct && (t.text == "-" || t.text == "+" || t.text == "!") {
		p.advance()
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer p.leave()
		// Fold a negative literal so that i64::MIN can be written.
		if t.text == "-" && p.peek().kind == tInt && p.peek().text == "" {
			lit := p.advance()
			var v Value
			if lit.ival == 1<<63 {
				v = Int(math.MinInt64)
			} else {
				v = Int(-int64(lit.ival))
			}
			return p.parsePostfix(&litExpr{p: t.pos, v: v})
		}
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		if t.text == "+" {
			return &unaryExpr{p: t.pos, op: "+", x: x}, nil
		}
		return &unaryExpr{p: t.pos, op: t.text, x: x}, nil
	}
	prim, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	return p.parsePostfix(prim)
}

func (p *parser) parsePostfix(x node) (node, error) {
	for chain := 0; ; chain++ {
		if chain > maxChain {
			return nil, limitErr(x.at(), LimitExprDepth, "expression too long: more than %d properties, indexes or calls in a row", maxChain)
		}
		t := p.peek()
		if t.kind != tPunct {
			return x, nil
		}
		switch t.text {
		case ".", "?.":
			p.advance()
			nt := p.peek()
			if nt.kind != tIdent && nt.kind != tKeyword {
				return nil, errAt(nt.pos, "expected a property or method name after '%s', found %s", t.text, nt)
			}
			p.advance()
			if p.is("(") {
				args, err := p.parseArgs()
				if err != nil {
					return nil, err
				}
				m := &methodExpr{p: nt.pos, recv: x, name: nt.text, args: args, safe: t.text == "?."}
				*p.methods = append(*p.methods, m)
				x = m
			} else {
				x = &propExpr{p: nt.pos, x: x, name: nt.text, safe: t.text == "?."}
			}
		case "[", "?[":
			p.advance()
			idx, err := p.parseExpr()
			if err != nil {
				return nil, err
			}
			if _, err := p.expect("]", "to close the index"); err != nil {
				return nil, err
			}
			x = &indexExpr{p: t.pos, x: x, idx: idx, safe: t.text == "?["}
		default:
			return x, nil
		}
	}
}

func (p *parser) parseArgs() ([]node, error) {
	open := p.advance() // (
	var args []node
	for !p.is(")") {
		if p.peek().kind == tEOF {
			return nil, errAt(open.pos, "argument list opened here is never closed with ')'")
		}
		a, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		if !p.accept(",") {
			break
		}
	}
	if _, err := p.expect(")", "to close the argument list"); err != nil {
		return nil, err
	}
	return args, nil
}

func (p *parser) parsePrimary() (node, error) {
	t := p.peek()
	switch t.kind {
	case tInt:
		p.advance()
		if t.text == "" && t.ival > math.MaxInt64 {
			return nil, errAt(t.pos, "integer literal %d is too large for i64", t.ival)
		}
		return &litExpr{p: t.pos, v: Int(int64(t.ival))}, nil
	case tFloat:
		p.advance()
		return &litExpr{p: t.pos, v: Float(t.fval)}, nil
	case tString:
		p.advance()
		return &litExpr{p: t.pos, v: String(t.text)}, nil
	case tChar:
		p.advance()
		r, _ := utf8.DecodeRuneInString(t.text)
		return &litExpr{p: t.pos, v: Char(r)}, nil
	case tInterp:
		p.advance()
		return p.parseInterp(t)
	case tIdent:
		p.advance()
		if p.is("::") {
			p.advance()
			nt, err := p.ident("after '::'")
			if err != nil {
				return nil, err
			}
			if t.text != "global" {
				return nil, errAt(t.pos, "module '%s' is not supported: modules are outside the sandboxed Rhai subset (only global:: constants are)", t.text)
			}
			return &globalExpr{p: nt.pos, name: nt.text}, nil
		}
		if p.is("(") {
			args, err := p.parseArgs()
			if err != nil {
				return nil, err
			}
			return &callExpr{p: t.pos, name: t.text, args: args}, nil
		}
		if p.is("!") && p.peekAt(1).kind == tPunct && p.peekAt(1).text == "(" {
			return nil, errAt(t.pos, "calling '%s!' with access to the caller's scope is not supported", t.text)
		}
		return &varExpr{p: t.pos, name: t.text}, nil
	case tKeyword:
		switch t.text {
		case "true", "false":
			p.advance()
			return &litExpr{p: t.pos, v: Bool(t.text == "true")}, nil
		case "this":
			p.advance()
			return &thisExpr{p: t.pos}, nil
		case "if":
			return p.parseIf()
		case "switch":
			return p.parseSwitch()
		case "while":
			p.advance()
			cond, err := p.parseExpr()
			if err != nil {
				return nil, err
			}
			body, err := p.parseLoopBody()
			if err != nil {
				return nil, err
			}
			return &whileExpr{p: t.pos, cond: cond, body: body}, nil
		case "loop":
			p.advance()
			body, err := p.parseLoopBody()
			if err != nil {
				return nil, err
			}
			return &loopExpr{p: t.pos, body: body}, nil
		case "do":
			p.advance()
			body, err := p.parseLoopBody()
			if err != nil {
				return nil, err
			}
			until := p.is("until")
			if !until && !p.is("while") {
				return nil, errAt(p.peek().pos, "expected 'while' or 'until' after the 'do' block, found %s", p.peek())
			}
			p.advance()
			cond, err := p.parseExpr()
			if err != nil {
				return nil, err
			}
			return &whileExpr{p: t.pos, cond: cond, body: body, until: until, postfix: true}, nil
		case "for":
			return p.parseFor()
		case "try":
			p.advance()
			body, err := p.parseBlock()
			if err != nil {
				return nil, err
			}
			if _, err := p.expect("catch", "after the 'try' block"); err != nil {
				return nil, err
			}
			te := &tryExpr{p: t.pos, body: body}
			if p.accept("(") {
				vt, err := p.ident("for the caught error")
				if err != nil {
					return nil, err
				}
				te.errVar = vt.text
				if _, err := p.expect(")", "after the catch variable"); err != nil {
					return nil, err
				}
			}
			if te.catch, err = p.parseBlock(); err != nil {
				return nil, err
			}
			return te, nil
		case "import", "export":
			return nil, errAt(t.pos, "'%s' is not supported: modules are outside the sandboxed Rhai subset", t.text)
		case "fn", "private":
			return nil, errAt(t.pos, "functions can only be defined at global level")
		}
	case tPunct:
		switch t.text {
		case "(":
			p.advance()
			if p.accept(")") {
				return &litExpr{p: t.pos, v: Unit()}, nil
			}
			x, err := p.parseExpr()
			if err != nil {
				return nil, err
			}
			if _, err := p.expect(")", "to close the parenthesis"); err != nil {
				return nil, err
			}
			return x, nil
		case "[":
			p.advance()
			a := &arrayExpr{p: t.pos}
			for !p.is("]") {
				e, err := p.parseExpr()
				if err != nil {
					return nil, err
				}
				a.elems = append(a.elems, e)
				if !p.accept(",") {
					break
				}
			}
			if _, err := p.expect("]", "to close the array literal"); err != nil {
				return nil, err
			}
			return a, nil
		case "#{":
			return p.parseMap()
		case "{":
			return p.parseBlock()
		case "|", "||":
			return p.parseClosure()
		}
	}
	if t.kind == tEOF {
		return nil, errAt(t.pos, "unexpected end of script: an expression is missing")
	}
	if err := unsupportedOp(t); err != nil {
		return nil, err
	}
	return nil, errAt(t.pos, "unexpected %s: expected an expression", t)
}

// unsupportedOp explains symbols that only custom operators would use.
func unsupportedOp(t token) error {
	if t.kind == tPunct && (t.text == "@" || t.text == "$" || t.text == "~" || t.text == "#") {
		return errAt(t.pos, "'%s' is not a supported operator: custom operators are outside the sandboxed Rhai subset", t.text)
	}
	return nil
}

func (p *parser) parseLoopBody() (*blockExpr, error) {
	p.loops++
	defer func() { p.loops-- }()
	return p.parseBlock()
}

func (p *parser) parseIf() (node, error) { return p.parseIfChain(0) }

// parseIfChain parses if … else if …; chain counts the else-ifs so far.
func (p *parser) parseIfChain(chain int) (node, error) {
	t := p.advance()
	if chain > maxChain {
		return nil, limitErr(t.pos, LimitExprDepth, "more than %d else-if branches in a row", maxChain)
	}
	cond, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	then, err := p.parseBlock()
	if err != nil {
		return nil, err
	}
	e := &ifExpr{p: t.pos, cond: cond, then: then}
	if p.accept("else") {
		if p.is("if") {
			if e.els, err = p.parseIfChain(chain + 1); err != nil {
				return nil, err
			}
		} else if e.els, err = p.parseBlock(); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func (p *parser) parseFor() (node, error) {
	t := p.advance()
	f := &forExpr{p: t.pos}
	if p.accept("(") {
		vt, err := p.ident("for the loop variable")
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(",", "between the loop variable and the counter"); err != nil {
			return nil, err
		}
		it, err := p.ident("for the loop counter")
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")", "after the loop counter"); err != nil {
			return nil, err
		}
		f.v, f.idx = vt.text, it.text
	} else {
		vt, err := p.ident("for the loop variable")
		if err != nil {
			return nil, err
		}
		f.v = vt.text
	}
	if _, err := p.expect("in", "after the loop variable"); err != nil {
		return nil, err
	}
	f.iterPos = p.peek().pos
	var err error
	if f.iter, err = p.parseExpr(); err != nil {
		return nil, err
	}
	if f.body, err = p.parseLoopBody(); err != nil {
		return nil, err
	}
	return f, nil
}

func (p *parser) parseMap() (node, error) {
	t := p.advance()
	m := &mapExpr{p: t.pos}
	seen := map[string]bool{}
	for !p.is("}") {
		kt := p.peek()
		var key string
		switch kt.kind {
		case tIdent, tKeyword:
			key = kt.text
		case tString:
			key = kt.text
		default:
			return nil, errAt(kt.pos, "expected a property name in the object map literal, found %s", kt)
		}
		p.advance()
		if seen[key] {
			return nil, errAt(kt.pos, "duplicated property '%s' in the object map literal", key)
		}
		seen[key] = true
		if _, err := p.expect(":", "after the property name"); err != nil {
			return nil, err
		}
		v, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		m.keys = append(m.keys, key)
		m.vals = append(m.vals, v)
		if !p.accept(",") {
			break
		}
	}
	if _, err := p.expect("}", "to close the object map literal"); err != nil {
		return nil, err
	}
	return m, nil
}

func (p *parser) parseClosure() (node, error) {
	t := p.advance()
	def := &closureDef{p: t.pos}
	if t.text == "|" {
		seen := map[string]bool{}
		for !p.is("|") {
			pt, err := p.ident("for a closure parameter")
			if err != nil {
				return nil, err
			}
			if seen[pt.text] {
				return nil, errAt(pt.pos, "duplicated closure parameter '%s'", pt.text)
			}
			seen[pt.text] = true
			def.params = append(def.params, pt.text)
			if !p.accept(",") {
				break
			}
		}
		if _, err := p.expect("|", "to close the closure parameters"); err != nil {
			return nil, err
		}
	}
	p.closures++
	loops := p.loops
	p.loops = 0
	// The body is one statement, so `|| count += 1` works as in Rhai.
	body, err := p.parseStmt()
	p.loops = loops
	p.closures--
	if err != nil {
		return nil, err
	}
	if body == nil {
		body = &litExpr{p: t.pos}
	}
	def.body = body
	free := map[string]bool{}
	freeVars(body, free)
	for _, prm := range def.params {
		delete(free, prm)
	}
	for name := range free {
		def.captures = append(def.captures, name)
	}
	sort.Strings(def.captures)
	def.name = "anon$" + t.pos.String()
	return &closureExpr{p: t.pos, def: def}, nil
}

func (p *parser) parseSwitch() (node, error) {
	t := p.advance()
	x, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	if _, err := p.expect("{", "to open the switch cases"); err != nil {
		return nil, err
	}
	s := &switchExpr{p: t.pos, x: x}
	for !p.is("}") {
		ct := p.peek()
		if ct.kind == tEOF {
			return nil, errAt(t.pos, "switch opened here is never closed with '}'")
		}
		if s.def != nil {
			return nil, errAt(ct.pos, "the default case '_' must be the last case of the switch")
		}
		var sc switchCase
		isDefault := ct.kind == tIdent && ct.text == "_"
		if isDefault {
			p.advance()
		} else {
			for {
				// Above '|' so that `1 | 2 =>` lists two cases.
				ce, err := p.parseBinary(precedence["|"])
				if err != nil {
					return nil, err
				}
				v, ok := constValue(ce)
				if !ok {
					return nil, errAt(ce.at(), "a switch case must be a literal value")
				}
				sc.vals = append(sc.vals, v)
				if !p.accept("|") {
					break
				}
			}
			if p.accept("if") {
				if sc.cond, err = p.parseExpr(); err != nil {
					return nil, err
				}
			}
		}
		if _, err := p.expect("=>", "after the switch case"); err != nil {
			return nil, err
		}
		var body node
		if p.is("{") {
			body, err = p.parseBlock()
		} else {
			body, err = p.parseStmt()
		}
		if err != nil {
			return nil, err
		}
		if body == nil {
			body = &litExpr{p: ct.pos}
		}
		if isDefault {
			s.def = body
		} else {
			sc.body = body
			s.cases = append(s.cases, sc)
		}
		if !p.accept(",") && !selfTerminated(body) && !p.is("}") {
			return nil, errAt(p.peek().pos, "expected ',' between switch cases, found %s", p.peek())
		}
	}
	p.advance()
	return s, nil
}

// constValue evaluates a literal expression at compile time (switch cases).
func constValue(n node) (Value, bool) {
	switch e := n.(type) {
	case *litExpr:
		return e.v, true
	case *unaryExpr:
		v, ok := constValue(e.x)
		if !ok {
			return Value{}, false
		}
		switch {
		case e.op == "-" && v.k == KindInt && v.n != math.MinInt64:
			return Int(-v.n), true
		case e.op == "-" && v.k == KindFloat:
			return Float(-v.float()), true
		case e.op == "+" && (v.k == KindInt || v.k == KindFloat):
			return v, true
		}
	case *rangeExpr:
		l, ok1 := constValue(e.l)
		r, ok2 := constValue(e.r)
		if ok1 && ok2 && l.k == KindInt && r.k == KindInt {
			return rangeValue(l.n, r.n, e.incl), true
		}
	case *arrayExpr:
		out := make([]Value, len(e.elems))
		for i, x := range e.elems {
			v, ok := constValue(x)
			if !ok {
				return Value{}, false
			}
			out[i] = v
		}
		return NewArray(out), true
	case *mapExpr:
		m := make(map[string]Value, len(e.keys))
		for i, k := range e.keys {
			v, ok := constValue(e.vals[i])
			if !ok {
				return Value{}, false
			}
			m[k] = v
		}
		return NewMap(m), true
	}
	return Value{}, false
}

func (p *parser) parseInterp(t token) (node, error) {
	e := &interpExpr{p: t.pos}
	for _, part := range t.parts {
		if !part.isCode {
			e.parts = append(e.parts, &litExpr{p: t.pos, v: String(part.lit)})
			continue
		}
		toks, err := tokenize(part.code, part.pos)
		if err != nil {
			return nil, err
		}
		sub := &parser{toks: toks, depth: p.depth, maxDepth: p.maxDepth, fns: p.fns, inFn: true, loops: 0, closures: p.closures, methods: p.methods}
		b := &blockExpr{p: part.pos}
		for sub.peek().kind != tEOF {
			s, err := sub.parseStmt()
			if err != nil {
				return nil, err
			}
			if s != nil {
				b.stmts = append(b.stmts, s)
			}
			if err := sub.endStmt(s); err != nil {
				return nil, err
			}
		}
		e.parts = append(e.parts, b)
	}
	return e, nil
}
