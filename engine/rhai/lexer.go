package rhai

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Pos is a position in a script: 1-based line and column (in characters).
type Pos struct{ Line, Col int }

func (p Pos) String() string { return fmt.Sprintf("line %d, column %d", p.Line, p.Col) }

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tInt
	tFloat
	tString
	tChar
	tInterp // back-tick string: parts in tok.parts
	tPunct  // operators and punctuation: text in tok.text
	tKeyword
)

// interpPart is one segment of a back-tick string: literal text, or code
// whose source starts at pos.
type interpPart struct {
	lit    string
	code   string
	isCode bool
	pos    Pos
}

type token struct {
	kind  tokKind
	text  string // identifier, keyword, punctuation, decoded string
	ival  uint64 // integer literal magnitude
	fval  float64
	parts []interpPart
	pos   Pos
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of script"
	case tIdent:
		return "identifier '" + t.text + "'"
	case tInt:
		return "integer " + strconv.FormatUint(t.ival, 10)
	case tFloat:
		return "number " + strconv.FormatFloat(t.fval, 'g', -1, 64)
	case tString:
		return "string " + strconv.Quote(t.text)
	case tChar:
		return "character " + strconv.Quote(t.text)
	case tInterp:
		return "interpolated string"
	}
	return "'" + t.text + "'"
}

var keywords = map[string]bool{
	"let": true, "const": true, "fn": true, "if": true, "else": true, "while": true,
	"loop": true, "for": true, "in": true, "do": true, "until": true, "break": true,
	"continue": true, "return": true, "throw": true, "try": true, "catch": true,
	"switch": true, "true": true, "false": true, "this": true, "private": true,
	"import": true, "export": true, "as": true,
}

// Multi-character punctuation, longest first within each leading character.
var puncts = []string{
	"**=", "<<=", ">>=", "..=", "!in",
	"::", "?.", "?[", "??", "=>", "->", "..", "**", "<<", ">>", "&&", "||", "==", "!=", "<=", ">=",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "#{",
	"(", ")", "[", "]", "{", "}", ",", ";", ":", ".", "?", "+", "-", "*", "/", "%", "&", "|", "^",
	"!", "<", ">", "=", "@", "$", "#", "~",
}

type lexer struct {
	src  string
	i    int
	line int
	col  int
}

func newLexer(src string, at Pos) *lexer {
	if at.Line == 0 {
		at = Pos{1, 1}
	}
	return &lexer{src: src, line: at.Line, col: at.Col}
}

func (l *lexer) pos() Pos { return Pos{l.line, l.col} }

func (l *lexer) errf(p Pos, format string, args ...any) error {
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// advance moves over one rune, tracking line and column.
func (l *lexer) advance() rune {
	r, size := utf8.DecodeRuneInString(l.src[l.i:])
	l.i += size
	if r == '\n' {
		l.line++
		l.col = 1
	} else {
		l.col++
	}
	return r
}

func (l *lexer) peekByte(off int) byte {
	if l.i+off < len(l.src) {
		return l.src[l.i+off]
	}
	return 0
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentRune(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// skipSpace skips whitespace and comments.
func (l *lexer) skipSpace() error {
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			l.advance()
		case c == '/' && l.peekByte(1) == '/':
			for l.i < len(l.src) && l.src[l.i] != '\n' {
				l.advance()
			}
		case c == '/' && l.peekByte(1) == '*':
			start := l.pos()
			l.advance()
			l.advance()
			depth := 1
			for depth > 0 {
				if l.i >= len(l.src) {
					return l.errf(start, "unterminated block comment")
				}
				if l.src[l.i] == '/' && l.peekByte(1) == '*' {
					l.advance()
					l.advance()
					depth++
				} else if l.src[l.i] == '*' && l.peekByte(1) == '/' {
					l.advance()
					l.advance()
					depth--
				} else {
					l.advance()
				}
			}
		default:
			r, _ := utf8.DecodeRuneInString(l.src[l.i:])
			if unicode.IsSpace(r) {
				l.advance()
				continue
			}
			return nil
		}
	}
	return nil
}

// next scans one token.
func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	p := l.pos()
	if l.i >= len(l.src) {
		return token{kind: tEOF, pos: p}, nil
	}
	c := l.src[l.i]
	r, _ := utf8.DecodeRuneInString(l.src[l.i:])
	switch {
	case c >= '0' && c <= '9':
		return l.number(p)
	case isIdentStart(r):
		start := l.i
		for l.i < len(l.src) {
			r, _ := utf8.DecodeRuneInString(l.src[l.i:])
			if !isIdentRune(r) {
				break
			}
			l.advance()
		}
		word := l.src[start:l.i]
		if keywords[word] {
			return token{kind: tKeyword, text: word, pos: p}, nil
		}
		return token{kind: tIdent, text: word, pos: p}, nil
	case c == '"':
		s, err := l.quoted('"', p)
		return token{kind: tString, text: s, pos: p}, err
	case c == '\'':
		s, err := l.quoted('\'', p)
		if err != nil {
			return token{}, err
		}
		if utf8.RuneCountInString(s) != 1 {
			return token{}, l.errf(p, "a character literal holds exactly one character, found %q (use double quotes for strings)", s)
		}
		return token{kind: tChar, text: s, pos: p}, nil
	case c == '`':
		parts, err := l.backtick(p)
		return token{kind: tInterp, parts: parts, pos: p}, err
	}
	for _, pu := range puncts {
		if strings.HasPrefix(l.src[l.i:], pu) {
			if pu == "!in" {
				// `!in` only when "in" is a whole word: `!index` is `!` then an identifier.
				if l.i+3 < len(l.src) {
					r, _ := utf8.DecodeRuneInString(l.src[l.i+3:])
					if isIdentRune(r) {
						continue
					}
				}
			}
			for range pu {
				l.advance()
			}
			return token{kind: tPunct, text: pu, pos: p}, nil
		}
	}
	return token{}, l.errf(p, "unexpected character %q", r)
}

func (l *lexer) number(p Pos) (token, error) {
	start := l.i
	if l.src[l.i] == '0' && l.i+1 < len(l.src) && strings.IndexByte("xXoObB", l.src[l.i+1]) >= 0 {
		base := map[byte]int{'x': 16, 'X': 16, 'o': 8, 'O': 8, 'b': 2, 'B': 2}[l.src[l.i+1]]
		l.advance()
		l.advance()
		ds := l.i
		for l.i < len(l.src) && (isHexDigit(l.src[l.i]) || l.src[l.i] == '_') {
			l.advance()
		}
		digits := strings.ReplaceAll(l.src[ds:l.i], "_", "")
		u, err := strconv.ParseUint(digits, base, 64)
		if err != nil || digits == "" {
			return token{}, l.errf(p, "invalid number literal %q", l.src[start:l.i])
		}
		// Rhai reads hex/octal/binary literals as the i64 bit pattern.
		return token{kind: tInt, ival: u, text: "bits", pos: p}, nil
	}
	isFloat := false
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c >= '0' && c <= '9' || c == '_':
			l.advance()
			continue
		case c == '.' && !isFloat && l.peekByte(1) >= '0' && l.peekByte(1) <= '9':
			isFloat = true
			l.advance()
			continue
		case (c == 'e' || c == 'E') && (isDigit(l.peekByte(1)) || ((l.peekByte(1) == '+' || l.peekByte(1) == '-') && isDigit(l.peekByte(2)))):
			isFloat = true
			l.advance()
			if l.src[l.i] == '+' || l.src[l.i] == '-' {
				l.advance()
			}
			continue
		}
		break
	}
	text := strings.ReplaceAll(l.src[start:l.i], "_", "")
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return token{}, l.errf(p, "invalid number literal %q", text)
		}
		return token{kind: tFloat, fval: f, pos: p}, nil
	}
	u, err := strconv.ParseUint(text, 10, 64)
	if err != nil || u > 1<<63 {
		return token{}, l.errf(p, "integer literal %s is too large for i64", text)
	}
	return token{kind: tInt, ival: u, pos: p}, nil
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f' }

// quoted scans a "…" string or a '…' character with escapes and line continuation.
func (l *lexer) quoted(q byte, p Pos) (string, error) {
	l.advance()
	var b strings.Builder
	for {
		if l.i >= len(l.src) {
			return "", l.errf(p, "unterminated string literal")
		}
		c := l.src[l.i]
		if c == q {
			l.advance()
			return b.String(), nil
		}
		if c == '\n' {
			return "", l.errf(p, "unterminated string literal (a line break needs \\n or a \\ continuation)")
		}
		if c != '\\' {
			b.WriteRune(l.advance())
			continue
		}
		ep := l.pos()
		l.advance()
		if l.i >= len(l.src) {
			return "", l.errf(p, "unterminated string literal")
		}
		e := l.advance()
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		case '"':
			b.WriteByte('"')
		case '\'':
			b.WriteByte('\'')
		case '0':
			b.WriteByte(0)
		case 'x', 'u', 'U':
			n := map[rune]int{'x': 2, 'u': 4, 'U': 8}[e]
			if l.i+n > len(l.src) {
				return "", l.errf(ep, "malformed escape sequence")
			}
			u, err := strconv.ParseUint(l.src[l.i:l.i+n], 16, 32)
			if err != nil || !utf8.ValidRune(rune(u)) {
				return "", l.errf(ep, "malformed escape sequence \\%c%s", e, l.src[l.i:l.i+n])
			}
			for range n {
				l.advance()
			}
			b.WriteRune(rune(u))
		case '\n':
			if q != '"' {
				return "", l.errf(ep, "line continuation is only allowed in strings")
			}
			// Continuation: skip leading whitespace on the next line.
			for l.i < len(l.src) && (l.src[l.i] == ' ' || l.src[l.i] == '\t') {
				l.advance()
			}
		default:
			return "", l.errf(ep, "malformed escape sequence \\%c", e)
		}
	}
}

// backtick scans a literal `…` string, splitting out ${…} code blocks.
func (l *lexer) backtick(p Pos) ([]interpPart, error) {
	l.advance()
	// A back-tick at the end of a line starts the text on the next line.
	if l.i < len(l.src) && l.src[l.i] == '\n' {
		l.advance()
	} else if strings.HasPrefix(l.src[l.i:], "\r\n") {
		l.advance()
		l.advance()
	}
	var parts []interpPart
	var b strings.Builder
	for {
		if l.i >= len(l.src) {
			return nil, l.errf(p, "unterminated back-tick string")
		}
		c := l.src[l.i]
		if c == '`' {
			l.advance()
			if b.Len() > 0 || len(parts) == 0 {
				parts = append(parts, interpPart{lit: b.String()})
			}
			return parts, nil
		}
		if c == '$' && l.peekByte(1) == '{' {
			if b.Len() > 0 {
				parts = append(parts, interpPart{lit: b.String()})
				b.Reset()
			}
			l.advance()
			l.advance()
			cp := l.pos()
			start := l.i
			if err := l.skipCode(p); err != nil {
				return nil, err
			}
			parts = append(parts, interpPart{isCode: true, code: l.src[start:l.i], pos: cp})
			l.advance() // closing }
			continue
		}
		if c == '\r' && l.peekByte(1) == '\n' {
			l.advance()
			continue
		}
		b.WriteRune(l.advance())
	}
}

// skipCode moves to the } that closes an interpolation, skipping nested
// braces, strings, characters, back-tick strings and comments.
func (l *lexer) skipCode(strPos Pos) error {
	depth := 0
	for {
		if err := l.skipSpace(); err != nil {
			return err
		}
		if l.i >= len(l.src) {
			return l.errf(strPos, "unterminated ${ in back-tick string")
		}
		c := l.src[l.i]
		switch c {
		case '{':
			depth++
			l.advance()
		case '}':
			if depth == 0 {
				return nil
			}
			depth--
			l.advance()
		case '"', '\'':
			if _, err := l.quoted(c, l.pos()); err != nil {
				return err
			}
		case '`':
			if _, err := l.backtick(l.pos()); err != nil {
				return err
			}
		default:
			l.advance()
		}
	}
}

// tokenize scans a whole source into tokens.
func tokenize(src string, at Pos) ([]token, error) {
	l := newLexer(src, at)
	toks := make([]token, 0, len(src)/3+1)
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		if t.kind == tEOF {
			return toks, nil
		}
	}
}
