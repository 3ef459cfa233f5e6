package rhai

import (
	"errors"
	"strings"
	"testing"
)

type evalCase struct {
	name string
	src  string
	want string // DebugString of the result, when no error is expected
	err  string // substring of the error, when one is expected
	pos  string // "line L, column C" the error must name, when set
}

func runEvalCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, _, err := Eval(tc.src, Limits{})
			if tc.err != "" {
				if err == nil {
					t.Fatalf("want error containing %q, got value %s", tc.err, v.DebugString())
				}
				if !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %q does not contain %q", err, tc.err)
				}
				var re *Error
				if !errors.As(err, &re) || re.Pos.Line == 0 {
					t.Fatalf("error %q carries no line and column", err)
				}
				if tc.pos != "" && re.Pos.String() != tc.pos {
					t.Fatalf("error at %s, want %s (%v)", re.Pos, tc.pos, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got := v.DebugString(); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestLiterals(t *testing.T) {
	runEvalCases(t, []evalCase{
		{name: "int", src: "42", want: "42"},
		{name: "hex", src: "0xff", want: "255"},
		{name: "binary", src: "0b1010", want: "10"},
		{name: "octal", src: "0o17", want: "15"},
		{name: "separators", src: "1_000_000", want: "1000000"},
		{name: "float", src: "1.5", want: "1.5"},
		{name: "float exponent", src: "1e3", want: "1000.0"},
		{name: "float negative exponent", src: "25e-1", want: "2.5"},
		{name: "float to_string natural", src: `[(0.1 + 0.2).to_string(), 1e12.to_string(), 0.0.to_string(), (-2.0).to_string()]`, want: `["0.30000000000000004", "1000000000000.0", "0.0", "-2.0"]`},
		{name: "float to_string scientific", src: `[1e20.to_string(), 1.5e-14.to_string(), (-2.5e15).to_string()]`, want: `["1e20", "1.5e-14", "-2.5e15"]`},
		{name: "float debug", src: `[1e15, 1e16, 0.001, 0.00001]`, want: `[1000000000000000.0, 1e16, 0.001, 1e-5]`},
		{name: "min int", src: "-9223372036854775808", want: "-9223372036854775808"},
		{name: "int too large", src: "9223372036854775808", err: "too large for i64", pos: "line 1, column 1"},
		{name: "string escapes", src: `"a\tb\u0041\x42\"\\"`, want: `"a\tbAB\"\\"`},
		{name: "string continuation", src: "\"ab\\\n   cd\"", want: `"abcd"`},
		{name: "char", src: `'x'`, want: `'x'`},
		{name: "char escape", src: `'\n'`, want: `'\n'`},
		{name: "char holds one character", src: `'ab'`, err: "exactly one character", pos: "line 1, column 1"},
		{name: "unit", src: "()", want: "()"},
		{name: "bools", src: "[true, false]", want: "[true, false]"},
		{name: "array", src: `[1, "a", 'c', 2.5, (), [2]]`, want: `[1, "a", 'c', 2.5, (), [2]]`},
		{name: "array trailing comma", src: `[1, 2,]`, want: `[1, 2]`},
		{name: "map", src: `#{a: 1, "b c": 2, nested: #{x: []}}`, want: `#{"a": 1, "b c": 2, "nested": #{"x": []}}`},
		{name: "map duplicate key", src: `#{a: 1, a: 2}`, err: "duplicated property 'a'", pos: "line 1, column 9"},
		{name: "interpolation", src: "let x = 42; `x = ${x}, next ${x + 1}`", want: `"x = 42, next 43"`},
		{name: "interpolation is a block", src: "`${let y = 2; y * 3}!`", want: `"6!"`},
		{name: "nested interpolation", src: "let w = \"world\"; `a ${`b ${w}`} c`", want: `"a b world c"`},
		{name: "back-tick is literal", src: "`a\\n\"b\"`", want: `"a\\n\"b\""`},
		{name: "back-tick at line end skips the newline", src: "`\nline`", want: `"line"`},
		{name: "interpolation of a map", src: "`${#{a: 1}}`", want: `"#{\"a\": 1}"`},
		{name: "interpolation of unit is empty", src: "`[${()}]`", want: `"[]"`},
		{name: "shebang line", src: "#!/usr/bin/env rhai\n40 + 2", want: "42"},
		{name: "shebang keeps positions", src: "#!/usr/bin/env rhai\nlet = 1;", err: "expected a name", pos: "line 2, column 5"},
		{name: "line comment", src: "1 // comment\n + 2", want: "3"},
		{name: "nested block comment", src: "/* a /* b */ c */ 7", want: "7"},
		{name: "unterminated comment", src: "1 /* never", err: "unterminated block comment", pos: "line 1, column 3"},
		{name: "unterminated string", src: "let s = \"abc", err: "unterminated string", pos: "line 1, column 9"},
		{name: "unterminated back-tick", src: "`abc", err: "unterminated back-tick", pos: "line 1, column 1"},
		{name: "bad escape", src: `"\q"`, err: "malformed escape", pos: "line 1, column 2"},
		{name: "unexpected character", src: "1 + \u00a7", err: "unexpected character", pos: "line 1, column 5"},
	})
}

func TestStatements(t *testing.T) {
	runEvalCases(t, []evalCase{
		{name: "let", src: "let x = 1; x", want: "1"},
		{name: "let without value is unit", src: "let x; x", want: "()"},
		{name: "const", src: "const X = 5; X * 2", want: "10"},
		{name: "const cannot change", src: "const X = 5;\nX = 6;", err: "cannot modify constant X", pos: "line 2, column 3"},
		{name: "const cannot grow", src: "const X = 5; X += 1;", err: "cannot modify constant X"},
		{name: "shadowing", src: "let x = 1; let x = x + 1; x", want: "2"},
		{name: "block scope", src: "let x = 1; { let x = 2; } x", want: "1"},
		{name: "statement after a block statement", src: "let a = 1; if true { a = 2 } [a]", want: "[2]"},
		{name: "block statement then unary", src: "let a = 1; { a = 5; } -a", want: "-5"},
		{name: "block value", src: "let y = { let a = 2; a * 3 }; y", want: "6"},
		{name: "block value ignores trailing semicolon", src: "{ 40 + 2; }", want: "42"},
		{name: "let statement value is unit", src: "{ let a = 1; }", want: "()"},
		{name: "if else if else", src: `let x = if 1 > 2 { "a" } else if 2 > 1 { "b" } else { "c" }; x`, want: `"b"`},
		{name: "if without else is unit", src: "if false { 1 }", want: "()"},
		{name: "if needs bool", src: "if 1 { 2 }", err: "boolean value expected, found i64", pos: "line 1, column 4"},
		{name: "while", src: "let i = 0; let s = 0; while i < 10 { i += 1; s += i; } s", want: "55"},
		{name: "loop break value", src: "let x = 0; loop { x += 1; if x > 5 { break x * 10; } }", want: "60"},
		{name: "loop continue", src: "let i = 0; let odd = 0; loop { i += 1; if i > 9 { break; } if i % 2 == 0 { continue; } odd += 1; } odd", want: "5"},
		{name: "do while", src: "let i = 0; do { i += 1; } while i < 3; i", want: "3"},
		{name: "do until", src: "let i = 0; do { i += 1; } until i >= 4; i", want: "4"},
		{name: "for range", src: "let s = 0; for i in 0..5 { s += i; } s", want: "10"},
		{name: "for inclusive range", src: "let s = 0; for i in 0..=5 { s += i; } s", want: "15"},
		{name: "for array with index", src: "let out = []; for (x, i) in [\"a\", \"b\"] { out.push(`${i}${x}`); } out", want: `["0a", "1b"]`},
		{name: "for string yields chars", src: "let out = []; for c in \"hé!\" { out.push(c); } out", want: `['h', 'é', '!']`},
		{name: "for break", src: "let last = 0; for i in 0..100 { if i == 7 { break; } last = i; } last", want: "6"},
		{name: "for break value", src: "for x in [1, 2, 3] { if x == 2 { break x * 7; } }", want: "14"},
		{name: "while break value", src: "let i = 0; while i < 10 { i += 1; if i == 4 { break i * 2; } }", want: "8"},
		{name: "do until", src: "let i = 0; do { i += 1; } until i > 2; i", want: "3"},
		{name: "closure return", src: "let f = |x| { return x + 1; 0 }; f.call(1)", want: "2"},
		{name: "top-level return", src: "return 5; 6", want: "5"},
		{name: "error names each call it passed", src: "fn g() { 1 / 0 }\nfn f() { g() }\nf()", err: "in fn g called at line 2, column 10, in fn f called at line 3, column 1", pos: "line 1, column 12"},
		{name: "for over an array copy", src: "let a = [1, 2]; for x in a { a.push(x); } a", want: "[1, 2, 1, 2]"},
		{name: "for sees the array as it was", src: "let a = [1, 2, 3]; let out = []; for x in a { a[2] = 0; a.reverse(); out.push(x); } out", want: "[1, 2, 3]"},
		{name: "for loop var change stays local", src: "let a = [#{n: 1}]; for x in a { x.n = 2; } a", want: `[#{"n": 1}]`},
		{name: "for loop var method stays local", src: "let a = [\" x \"]; for x in a { x.trim(); } a", want: `[" x "]`},
		{name: "for loop var is a copy", src: "let a = [[1]]; for x in a { x.push(2); } a", want: "[[1]]"},
		{name: "for over a map is an error", src: "for x in #{} {}", err: "cannot iterate over a value of type map", pos: "line 1, column 10"},
		{name: "break outside loop", src: "break;", err: "'break' is only allowed inside a loop", pos: "line 1, column 1"},
		{name: "continue outside loop", src: "fn f() { continue; }", err: "'continue' is only allowed inside a loop"},
		{name: "function", src: "fn add(a, b) { a + b } add(2, 3)", want: "5"},
		{name: "recursion", src: "fn fib(n) { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } } fib(15)", want: "610"},
		{name: "overload by arity", src: "fn f() { 0 } fn f(a) { a } fn f(a, b) { a + b } [f(), f(1), f(1, 2)]", want: "[0, 1, 3]"},
		{name: "duplicate function", src: "fn f(a) { 1 }\nfn f(b) { 2 }", err: "defined twice", pos: "line 2, column 4"},
		{name: "early return", src: "fn f(x) { if x > 0 { return \"pos\"; } \"other\" } [f(1), f(-1)]", want: `["pos", "other"]`},
		{name: "return without value", src: "fn f() { return; } f()", want: "()"},
		{name: "functions cannot see outer variables", src: "let x = 1;\nfn f() { x }\nf()", err: "variable not found: x", pos: "line 2, column 10"},
		{name: "global constants", src: "const K = 3; fn f() { global::K * 2 } f()", want: "6"},
		{name: "unknown global", src: "fn f() { global::NOPE } f()", err: "constant 'NOPE' not found", pos: "line 1, column 18"},
		{name: "fn inside block", src: "{ fn f() {} }", err: "functions can only be defined at global level", pos: "line 1, column 3"},
		{name: "method style this", src: "fn inc() { this += 1; } let x = 5; x.inc(); x", want: "6"},
		{name: "method style with args", src: "fn add(n) { this + n } 5.add(3)", want: "8"},
		{name: "this outside method", src: "fn f() { this } f()", err: "'this' is only defined", pos: "line 1, column 10"},
		{name: "switch value", src: `switch 2 { 1 => "one", 2 => "two", _ => "many" }`, want: `"two"`},
		{name: "switch alternatives", src: `switch 3 { 1 | 2 => "low", 3 | 4 => "mid", _ => "high" }`, want: `"mid"`},
		{name: "switch range", src: `switch 42 { 0..10 => "small", 10..=100 => "medium", _ => "large" }`, want: `"medium"`},
		{name: "switch guard", src: `let x = 5; switch x { 5 if x > 10 => "big five", 5 => "five", _ => "?" }`, want: `"five"`},
		{name: "switch string", src: `switch "b" { "a" => 1, "b" => { let y = 2; y * 10 } "c" => 3 }`, want: "20"},
		{name: "switch default", src: `switch 9 { 1 => "one", _ => "default" }`, want: `"default"`},
		{name: "switch no match is unit", src: `switch 9 { 1 => "one" }`, want: "()"},
		{name: "switch is strict about types", src: `switch 1.0 { 1 => "int", _ => "other" }`, want: `"other"`},
		{name: "switch default must be last", src: "switch 1 { _ => 0,\n 1 => 1 }", err: "default case '_' must be the last", pos: "line 2, column 2"},
		{name: "switch case must be literal", src: "let a = 1; switch 1 { a => 0 }", err: "must be a literal", pos: "line 1, column 23"},
		{name: "switch negative case", src: `switch -1 { -1 => "minus one", _ => "?" }`, want: `"minus one"`},
		{name: "switch array case", src: `switch [1, "a"] { [1, "a"] => "yes", _ => "no" }`, want: `"yes"`},
		{name: "try catch thrown", src: `try { throw "boom"; } catch (e) { "caught " + e }`, want: `"caught boom"`},
		{name: "try catch runtime error", src: `try { 1 / 0 } catch (e) { e }`, want: `"division by zero: 1 / 0"`},
		{name: "try catch without variable", src: `try { throw 1; } catch { 2 }`, want: "2"},
		{name: "uncaught throw", src: "\n  throw \"boom\";", err: "runtime error: boom", pos: "line 2, column 3"},
		{name: "missing semicolon", src: "let x = 1\nlet y = 2;", err: "expected ';'", pos: "line 2, column 1"},
		{name: "missing expression", src: "let x = ;", err: "expected an expression", pos: "line 1, column 9"},
		{name: "let needs a name", src: "let = 5;", err: "expected a name after 'let'", pos: "line 1, column 5"},
		{name: "unclosed block", src: "fn f() {\n  1", err: "never closed", pos: "line 1, column 8"},
		{name: "assign to expression", src: "1 + 2 = 3;", err: "cannot assign to this expression", pos: "line 1, column 7"},
		{name: "import unsupported", src: "\nimport \"m\" as m;", err: "'import' is not supported", pos: "line 2, column 1"},
		{name: "export unsupported", src: "export const X = 1;", err: "'export' is not supported", pos: "line 1, column 1"},
		{name: "module path unsupported", src: "math::sqrt(2.0)", err: "module 'math' is not supported", pos: "line 1, column 1"},
		{name: "custom operator unsupported", src: "1 @ 2", err: "'@' is not a supported operator: custom operators are outside the sandboxed Rhai subset", pos: "line 1, column 3"},
		{name: "custom prefix operator unsupported", src: "let x = ~1;", err: "'~' is not a supported operator", pos: "line 1, column 9"},
		{name: "caller scope call unsupported", src: "f!(1)", err: "not supported", pos: "line 1, column 1"},
		{name: "undefined variable", src: "let a = 1;\nlet b = a + c;", err: "variable not found: c", pos: "line 2, column 13"},
		{name: "undefined function", src: "nope(1, \"a\")", err: "function not found: nope (i64, string)", pos: "line 1, column 1"},
		{name: "undefined method", src: "let x = 1;\nx.frobnicate()", err: "function not found: frobnicate (i64)", pos: "line 2, column 3"},
	})
}

func TestOperators(t *testing.T) {
	runEvalCases(t, []evalCase{
		{name: "precedence", src: "1 + 2 * 3 - 4 / 2", want: "5"},
		{name: "power is right associative", src: "2 ** 3 ** 2", want: "512"},
		{name: "parentheses", src: "(1 + 2) * 3", want: "9"},
		{name: "unary", src: "[-(3), !true, +4]", want: "[-3, false, 4]"},
		{name: "int division truncates", src: "[7 / 2, -7 / 2, 7 % 3, -7 % 3]", want: "[3, -3, 1, -1]"},
		{name: "int and float mix", src: "[1 + 2.5, 3 * 0.5, 1 / 2.0]", want: "[3.5, 1.5, 0.5]"},
		{name: "comparisons", src: "[1 < 2, 2 <= 2, 3 > 4, 4 >= 4, 1 == 1.0, 2 != 2]", want: "[true, true, false, true, true, false]"},
		{name: "string comparison", src: `["a" < "b", "abc" == "abc", "b" > "abc"]`, want: "[true, true, true]"},
		{name: "unrelated types are unequal", src: `[1 == "1", () == 0, 1 != "1", 1 < "a", "a" > 1]`, want: "[false, false, true, false, false]"},
		{name: "unit equals unit", src: "() == ()", want: "true"},
		{name: "array equality", src: "[[1, [2]] == [1, [2]], [1] == [2]]", want: "[true, false]"},
		{name: "map equality", src: "#{a: 1} == #{a: 1}", want: "true"},
		{name: "logic short circuit", src: "false && nope() || true", want: "true"},
		{name: "logic needs bools", src: "1 && true", err: "'&&' expects booleans, found i64", pos: "line 1, column 3"},
		{name: "bitwise", src: "[6 & 3, 6 | 3, 6 ^ 3, 1 << 4, 256 >> 4]", want: "[2, 7, 5, 16, 16]"},
		{name: "negative shift counts go the other way", src: "[1 << -2, 16 >> -2, -16 >> 2, -16 << -2]", want: "[0, 64, -4, -4]"},
		{name: "shift by 64 bits", src: "1 << 64", err: "shift by too many bits: 1 << 64"},
		{name: "negative shift by 64 bits", src: "1 >> -64", err: "shift by too many bits: 1 >> 64"},
		{name: "shift by i64::MIN", src: "1 << (-9223372036854775807 - 1)", err: "shift by too many bits"},
		{name: "non-short-circuit bool ops", src: "[true & false, true | false, true ^ true]", want: "[false, true, false]"},
		{name: "string concat", src: `"a" + "b" + 1 + 'c' + 2.5 + true`, want: `"ab1c2.5true"`},
		{name: "anything plus string", src: `1 + "x"`, want: `"1x"`},
		{name: "char plus char is a string", src: `'a' + 'b'`, want: `"ab"`},
		{name: "string minus", src: `"hello" - 'l'`, want: `"heo"`},
		{name: "array concat", src: "[1] + [2, 3]", want: "[1, 2, 3]"},
		{name: "map merge", src: "#{a: 1} + #{b: 2}", want: `#{"a": 1, "b": 2}`},
		{name: "in array", src: `[2 in [1, 2], 5 in [1, 2], 5 !in [1, 2]]`, want: "[true, false, true]"},
		{name: "in string", src: `["ell" in "hello", 'z' in "hello"]`, want: "[true, false]"},
		{name: "in map", src: `["a" in #{a: 1}, "b" in #{a: 1}]`, want: "[true, false]"},
		{name: "in range", src: "[3 in 0..5, 5 in 0..5, 5 in 0..=5]", want: "[true, false, true]"},
		{name: "in needs a container", src: "1 in 2", err: "'in' needs an array", pos: "line 1, column 3"},
		{name: "coalesce", src: "let m = #{a: 1}; [m.a ?? 0, m.b ?? 0, () ?? 2]", want: "[1, 0, 2]"},
		{name: "coalesce binds tighter than comparison", src: "let x = (); x ?? 1 < 2", want: "true"},
		{name: "elvis on unit", src: "let m = (); [m?.a, m?[0]]", want: "[(), ()]"},
		{name: "compound assignment", src: "let x = 10; x += 5; x -= 3; x *= 2; x /= 4; x %= 4; x **= 3; x <<= 2; x >>= 1; x |= 1; x &= 7; x ^= 2; x", want: "3"},
		{name: "string append assignment", src: `let s = "a"; s += "b"; s += 'c'; s += 1; s`, want: `"abc1"`},
		{name: "array push assignment", src: "let a = [1]; a += 2; a += [3, 4]; a", want: "[1, 2, 3, 4]"},
		{name: "map mixin assignment", src: "let m = #{a: 1}; m += #{b: 2}; m", want: `#{"a": 1, "b": 2}`},
		{name: "range value", src: "let r = 1..4; [type_of(r), r.start, r.end, type_of(1..=4)]", want: `["range", 1, 4, "range="]`},
		{name: "range bounds must be ints", src: `"a"..2`, err: "range bounds must be integers", pos: "line 1, column 4"},
	})
}

// TestRhaiSemantics pins the behaviour the issue lists: integer overflow,
// division by zero, out-of-range and negative indexes, string versus char.
func TestRhaiSemantics(t *testing.T) {
	runEvalCases(t, []evalCase{
		{name: "addition overflow", src: "9223372036854775807 + 1", err: "addition overflow", pos: "line 1, column 21"},
		{name: "subtraction overflow", src: "-9223372036854775808 - 1", err: "subtraction overflow", pos: "line 1, column 22"},
		{name: "multiplication overflow", src: "let x = 4611686018427387904;\nx * 2", err: "multiplication overflow", pos: "line 2, column 3"},
		{name: "negation overflow", src: "let x = -9223372036854775808; -x", err: "negation overflow", pos: "line 1, column 31"},
		{name: "power overflow", src: "2 ** 63", err: "power overflow", pos: "line 1, column 3"},
		{name: "power of negative exponent", src: "2 ** -1", err: "negative power"},
		{name: "division overflow", src: "let x = -9223372036854775808; x / -1", err: "division overflow"},
		{name: "no overflow at the edge", src: "9223372036854775806 + 1", want: "9223372036854775807"},
		{name: "integer division by zero", src: "let z = 0;\n10 / z", err: "division by zero: 10 / 0", pos: "line 2, column 4"},
		{name: "integer modulo by zero", src: "10 % 0", err: "modulo division by zero", pos: "line 1, column 4"},
		{name: "compound division by zero", src: "let x = 1; x /= 0;", err: "division by zero", pos: "line 1, column 14"},
		{name: "float division by zero is infinity", src: "[1.0 / 0.0, -1.0 / 0.0]", want: "[inf, -inf]"},
		{name: "array index", src: "[10, 20, 30][1]", want: "20"},
		{name: "array negative index", src: "[10, 20, 30][-1]", want: "30"},
		{name: "array negative index from the start", src: "[10, 20, 30][-3]", want: "10"},
		{name: "array index out of range", src: "let a = [1, 2, 3];\na[3]", err: "array index 3 out of bounds: only 3 elements", pos: "line 2, column 2"},
		{name: "array negative index out of range", src: "[1, 2, 3][-4]", err: "array index -4 out of bounds", pos: "line 1, column 10"},
		{name: "empty array index", src: "[][0]", err: "out of bounds: it is empty"},
		{name: "array index must be int", src: `[1]["a"]`, err: "array index must be an integer, found string"},
		{name: "string index is a char", src: `let s = "héllo"; [s[1], type_of(s[0])]`, want: `['é', "char"]`},
		{name: "string negative index", src: `"abc"[-1]`, want: `'c'`},
		{name: "string index out of range", src: `"abc"[3]`, err: "character index 3 out of bounds: only 3 characters", pos: "line 1, column 6"},
		{name: "map missing key is unit", src: `let m = #{a: 1}; [m.b, m["c"]]`, want: "[(), ()]"},
		{name: "map index must be a string", src: `#{a: 1}[0]`, err: "object map key must be a string"},
		{name: "char equals one-char string", src: `['a' == "a", "a" == 'a', 'a' == "ab", 'a' < "b"]`, want: "[true, true, false, true]"},
		{name: "string and char types", src: `[type_of("a"), type_of('a')]`, want: `["string", "char"]`},
		{name: "string length counts characters", src: `"héllo".len()`, want: "5"},
		{name: "set a string character", src: `let s = "abc"; s[1] = 'X'; s[-1] = "Z"; s`, want: `"aXZ"`},
		{name: "set a string character to a string", src: `let s = "abc"; s[0] = "xy";`, err: "only be set to one character"},
		{name: "unknown property on a non-map", src: "let x = 1;\nx.foo", err: "unknown property 'foo' on a value of type i64", pos: "line 2, column 3"},
		{name: "set property on a non-map", src: "let x = 1; x.foo = 2;", err: "unknown property 'foo'", pos: "line 1, column 14"},
	})
}

func TestValueSemantics(t *testing.T) {
	runEvalCases(t, []evalCase{
		{name: "assignment copies arrays", src: "let a = [1]; let b = a; b.push(2); a", want: "[1]"},
		{name: "assignment copies maps", src: "let a = #{x: 1}; let b = a; b.x = 2; a", want: `#{"x": 1}`},
		{name: "nested copies", src: "let a = [[1]]; let b = a; b[0].push(2); a", want: "[[1]]"},
		{name: "arguments are copies", src: "fn f(a) { a.push(9); a.len() } let x = [1]; [f(x), x.len()]", want: "[2, 1]"},
		{name: "method changes the variable", src: "let a = [1]; a.push(2); a", want: "[1, 2]"},
		{name: "method changes a nested value", src: "let m = #{l: []}; m.l.push(1); m.l.push(2); m", want: `#{"l": [1, 2]}`},
		{name: "method changes an element", src: "let a = [[1]]; a[0].push(2); a", want: "[[1, 2]]"},
		{name: "property assignment", src: "let m = #{}; m.a = 1; m.b = #{c: 2}; m.b.c = 3; m[\"d\"] = 4; m", want: `#{"a": 1, "b": #{"c": 3}, "d": 4}`},
		{name: "index assignment", src: "let a = [1, 2, 3]; a[-1] = 9; a[0] += 10; a", want: "[11, 2, 9]"},
		{name: "string method in place", src: `let s = "  x  "; s.trim(); s`, want: `"x"`},
		{name: "string method on a property in place", src: `let m = #{s: " x "}; m.s.trim(); m.s`, want: `"x"`},
		{name: "pushed value is a copy", src: "let a = []; let b = [1]; a.push(b); b.push(2); a", want: "[[1]]"},
		{name: "callbacks get copies", src: "let a = [[1]]; a.filter(|x| { x.push(2); true }); a.map(|x| { x.push(3); x }); a.some(|x| { x.clear(); false }); a", want: "[[1]]"},
		{name: "closure capture of the loop var", src: "let a = [[1]]; let fs = []; for x in a { fs.push(|| x.push(2)); } fs[0].call(); a", want: "[[1]]"},
		{name: "array shrinking under a method call", src: "let a = [[1], [2]]; a[1].push(a.pop()); a", want: "[[1]]"},
		{name: "string shrinking under an assignment", src: `let s = "abc"; s[2] = { s.clear(); 'x' };`, err: "character index 2 out of bounds"},
		{name: "array shrinking under a string method", src: `let a = ["x", "y"]; a[1].append(a.pop());`, err: "shrank to 1 elements"},
		{name: "array shrinking under an index assignment", src: "let a = [1, 2]; a[1] += { a.clear(); 1 };", err: "array index 1 out of bounds"},
		{name: "copy then change the copy's element", src: "let a = [[1]]; let b = a; b[0].push(2); [a, b]", want: "[[[1]], [[1, 2]]]"},
		{name: "copy then change the original's element", src: "let a = [[1]]; let b = a; a[0].push(2); [a, b]", want: "[[[1, 2]], [[1]]]"},
		{name: "deep map copy", src: "let m = #{x: #{y: [1]}}; let n = m; n.x.y.push(2); [m.x.y, n.x.y]", want: "[[1], [1, 2]]"},
		{name: "function changes its argument's element", src: "fn f(a) { a[0].push(9); a } let x = [[1]]; let y = f(x); [x, y]", want: "[[[1]], [[1, 9]]]"},
		{name: "closure changes a shared capture", src: "let a = [1]; let f = || a.push(2); let b = a; f.call(); [a, b]", want: "[[1, 2], [1]]"},
		{name: "loop body changes the array it walks", src: "let a = [[1], [2]]; for x in a { a[0].push(9); x.push(7); } a", want: "[[1, 9, 9], [2]]"},
		{name: "method changes this", src: "fn add_item(x) { this.items.push(x); } let o = #{items: []}; let p = o; o.add_item(1); [o, p]", want: `[#{"items": [1]}, #{"items": []}]`},
		{name: "constant read by any method", src: "const C = [1, [2]]; [C.len(), C.index_of(1), C.to_json(), C[1].len()]", want: `[2, 0, "[1,[2]]", 1]`},
		{name: "constant changed by a method", src: "const C = [1];\nC.push(2);", err: "cannot modify constant C", pos: "line 2, column 3"},
		{name: "constant element changed by a method", src: "const C = [1, [2]]; C[1].push(3);", err: "cannot modify constant C"},
		{name: "constant element assigned", src: "const C = #{a: 1}; C.a = 2;", err: "cannot modify constant C"},
		{name: "map literal copies", src: "let b = [1]; let m = #{b: b}; b.push(2); m.b", want: "[1]"},
	})
}

func TestClosuresAndPointers(t *testing.T) {
	runEvalCases(t, []evalCase{
		{name: "closure", src: "let f = |x| x + 1; f.call(2)", want: "3"},
		{name: "closure called by name", src: "let f = |x, y| x * y; f(3, 4)", want: "12"},
		{name: "call function", src: "let f = |x| x * 2; call(f, 21)", want: "42"},
		{name: "zero-parameter closure", src: "let f = || 7; f.call()", want: "7"},
		{name: "loop closures share the loop variable", src: "let fs = []; for i in range(0, 3) { fs.push(|| i); } fs.map(|f| f.call())", want: "[2, 2, 2]"},
		{name: "call with this", src: "let x = 20; let f = |a| this += a; x.call(f, 2); x", want: "22"},
		{name: "stepped range", src: "let out = []; for i in range(10, 0, -3) { out.push(i); } out", want: "[10, 7, 4, 1]"},
		{name: "zero step", src: "range(0, 1, 0)", err: "step must not be zero"},
		{name: "closure captures", src: "let n = 10; let f = |x| x + n; f.call(1)", want: "11"},
		{name: "captured variables are shared", src: "let c = 0; let f = || c += 1; f.call(); f.call(); c", want: "2"},
		{name: "closure block body", src: "let f = |x| { let y = x * 2; y + 1 }; f.call(3)", want: "7"},
		{name: "closure return", src: "let f = |x| { if x > 0 { return 1; } 0 }; [f.call(5), f.call(-5)]", want: "[1, 0]"},
		{name: "closure arity", src: "let f = |x| x; f.call(1, 2)", err: "closure takes 1 parameters, called with 2"},
		{name: "Fn pointer", src: "fn double(x) { x * 2 } let f = Fn(\"double\"); [f.call(4), call(f, 5), f.name]", want: `[8, 10, "double"]`},
		{name: "Fn pointer to a builtin", src: `let f = Fn("to_upper"); f.call("abc")`, want: `"ABC"`},
		{name: "function name as callback", src: "fn double(x) { x * 2 } [1, 2].map(\"double\")", want: "[2, 4]"},
		{name: "curry", src: "let add = |a, b| a + b; let inc = add.curry(1); inc.call(41)", want: "42"},
		{name: "curry function", src: "fn add(a, b) { a + b } let f = curry(Fn(\"add\"), 10); f.call(5)", want: "15"},
		{name: "map method closure", src: "let obj = #{n: 1, inc: || this.n += 1}; obj.inc(); obj.inc(); obj.n", want: "3"},
		{name: "invalid Fn name", src: `Fn("not a name")`, err: "not a valid function name"},
		{name: "function by bare name is a pointer", src: "fn f(x) { x + 1 } let g = f; g.call(1)", want: "2"},
		{name: "type_of pointer", src: "type_of(|x| x)", want: `"Fn"`},
	})
}

func TestStringMethods(t *testing.T) {
	runEvalCases(t, []evalCase{
		{name: "len", src: `["abc".len(), "".len(), "abc".len]`, want: "[3, 0, 3]"},
		{name: "is_empty", src: `["".is_empty(), "a".is_empty()]`, want: "[true, false]"},
		{name: "contains", src: `["hello".contains("ell"), "hello".contains('z'), "hello".contains('h')]`, want: "[true, false, true]"},
		{name: "starts_with and ends_with", src: `["hello".starts_with("he"), "hello".ends_with("lo"), "hello".ends_with("x")]`, want: "[true, true, false]"},
		{name: "index_of", src: `["hello".index_of("l"), "hello".index_of('z'), "héllo".index_of("l"), "hello".index_of("l", 3)]`, want: "[2, -1, 2, 3]"},
		{name: "sub_string", src: `["hello".sub_string(1, 3), "hello".sub_string(2), "hello".sub_string(-3, 2), "hello".sub_string(10)]`, want: `["ell", "llo", "ll", ""]`},
		{name: "split", src: `["a,b,,c".split(","), "a b  c".split(), "abc".split(1), "a-b-c".split('-')]`, want: `[["a", "b", "", "c"], ["a", "b", "c"], ["a", "bc"], ["a", "b", "c"]]`},
		{name: "split first line", src: "\"line one\\nline two\".split(\"\\n\")[0]", want: `"line one"`},
		{name: "trim in place", src: "let s = \" \\t x y \\n\"; let r = s.trim(); [s, r]", want: `["x y", ()]`},
		{name: "to_upper and to_lower", src: `let s = "MiXed"; [s.to_upper(), s.to_lower(), s]`, want: `["MIXED", "mixed", "MiXed"]`},
		{name: "make_upper in place", src: `let s = "ab"; s.make_upper(); s`, want: `"AB"`},
		{name: "replace in place", src: `let s = "a-b-c"; s.replace("-", "+"); s.replace('a', 'z'); s`, want: `"z+b+c"`},
		{name: "chars", src: `"héy".chars()`, want: `['h', 'é', 'y']`},
		{name: "to_string", src: `[1.to_string(), 'c'.to_string(), [1, "a"].to_string(), ().to_string(), "s".to_string()]`, want: `["1", "c", "[1, \"a\"]", "", "s"]`},
		{name: "to_debug", src: `"s".to_debug()`, want: `"\"s\""`},
		{name: "pad and truncate", src: `let s = "ab"; s.pad(5, '.'); let t = s; t.truncate(3); [s, t]`, want: `["ab...", "ab."]`},
		{name: "crop and clear", src: `let s = "hello"; s.crop(1, 3); let t = s; t.clear(); [s, t]`, want: `["ell", ""]`},
		{name: "get", src: `["abc".get(1), "abc".get(9)]`, want: `['b', ()]`},
		{name: "remove", src: `let s = "banana"; s.remove("an"); s`, want: `"ba"`},
		{name: "function style", src: `[len("abc"), contains("abc", "b")]`, want: "[3, true]"},
		{name: "wrong argument types", src: `"abc".contains(1)`, err: "function not found: contains (string, i64)", pos: "line 1, column 7"},
	})
}

func TestArrayMethods(t *testing.T) {
	runEvalCases(t, []evalCase{
		{name: "len and is_empty", src: "[[1, 2].len(), [].len(), [1].is_empty(), [].is_empty(), [1, 2].len]", want: "[2, 0, false, true, 2]"},
		{name: "push and pop", src: "let a = [1]; a.push(2); let x = a.pop(); let y = [].pop(); [a, x, y]", want: "[[1], 2, ()]"},
		{name: "shift", src: "let a = [1, 2, 3]; let x = a.shift(); [a, x, [].shift()]", want: "[[2, 3], 1, ()]"},
		{name: "insert", src: "let a = [1, 3]; a.insert(1, 2); a.insert(-1, 9); a.insert(100, 4); a.insert(0, 0); a", want: "[0, 1, 2, 9, 3, 4]"},
		{name: "remove", src: "let a = [1, 2, 3]; let x = a.remove(0); let y = a.remove(-1); let z = a.remove(9); [a, x, y, z]", want: "[[2], 1, 3, ()]"},
		{name: "contains", src: `[[1, "a"].contains("a"), [1, 2].contains(3), [[1]].contains([1])]`, want: "[true, false, true]"},
		{name: "index_of", src: `[[5, 6, 7].index_of(7), [5].index_of(1), ["a", "b"].index_of("b"), [1, 2, 3, 4].index_of(|x| x > 2)]`, want: "[2, -1, 1, 2]"},
		{name: "reverse", src: "let a = [1, 2, 3]; a.reverse(); a", want: "[3, 2, 1]"},
		{name: "sort numbers", src: "let a = [3, 1.5, 2]; a.sort(); a", want: "[1.5, 2, 3]"},
		{name: "sort strings", src: `let a = ["b", "c", "a"]; a.sort(); a`, want: `["a", "b", "c"]`},
		{name: "sort with comparator", src: "let a = [1, 3, 2]; a.sort(|x, y| y - x); a", want: "[3, 2, 1]"},
		{name: "sort mixed types", src: `let a = [1, "a"]; a.sort();`, err: "sort: cannot order i64 and string"},
		{name: "filter", src: "[1, 2, 3, 4].filter(|x| x % 2 == 0)", want: "[2, 4]"},
		{name: "filter with index", src: "[5, 6, 7].filter(|x, i| i != 1)", want: "[5, 7]"},
		{name: "filter needs bool", src: "[1].filter(|x| x)", err: "predicate must return a bool"},
		{name: "some needs bool", src: "[1].some(|x| 1)", err: "some: the predicate must return a bool, found i64"},
		{name: "all needs bool", src: "[1].all(|x| x)", err: "all: the predicate must return a bool, found i64"},
		{name: "map", src: `[1, 2].map(|x| x * 10)`, want: "[10, 20]"},
		{name: "map with index", src: `["a", "b"].map(|x, i| x + i)`, want: `["a0", "b1"]`},
		{name: "reduce", src: "[1, 2, 3].reduce(|sum, x| sum + x, 0)", want: "6"},
		{name: "reduce starts at unit", src: "[1, 2, 3].reduce(|sum, x| (sum ?? 100) + x)", want: "106"},
		{name: "some and all", src: "let a = [1, 2, 3]; [a.some(|x| x > 2), a.some(|x| x > 5), a.all(|x| x > 0), a.all(|x| x > 1)]", want: "[true, false, true, false]"},
		{name: "join", src: `[[1, "a", 'c'].join(", "), [].join("-"), ["x"].join()]`, want: `["1, a, c", "", "x"]`},
		{name: "split_off", src: "let a = [1, 2, 3, 4]; let t = a.split_off(1); [a, t]", want: "[[1], [2, 3, 4]]"},
		{name: "split_off negative", src: "let a = [1, 2, 3, 4]; let t = a.split_off(-1); [a, t]", want: "[[1, 2, 3], [4]]"},
		{name: "extract", src: "let a = [1, 2, 3, 4]; [a.extract(1), a.extract(1, 2), a.extract(-2, 1), a.extract(9), a]", want: "[[2, 3, 4], [2, 3], [3], [], [1, 2, 3, 4]]"},
		{name: "retain and drain", src: "let a = [1, 2, 3, 4]; let gone = a.retain(|x| x > 2); let b = [1, 2, 3]; let d = b.drain(|x| x < 2); [a, gone, b, d]", want: "[[3, 4], [1, 2], [2, 3], [1]]"},
		{name: "truncate chop clear", src: "let a = [1, 2, 3]; a.truncate(2); let b = [1, 2, 3]; b.chop(1); let c = [1]; c.clear(); [a, b, c]", want: "[[1, 2], [3], []]"},
		{name: "dedup", src: "let a = [1, 1, 2, 1]; a.dedup(); a", want: "[1, 2, 1]"},
		{name: "get and find", src: "let a = [1, 2, 3]; [a.get(-1), a.get(5), a.find(|x| x > 1), a.find(|x| x > 5)]", want: "[3, (), 2, ()]"},
	})
}

func TestMapAndConversionMethods(t *testing.T) {
	runEvalCases(t, []evalCase{
		{name: "keys and values sorted", src: "let m = #{b: 2, a: 1, c: 3}; [m.keys(), m.values()]", want: `[["a", "b", "c"], [1, 2, 3]]`},
		{name: "contains", src: `let m = #{a: 1}; [m.contains("a"), m.contains("b")]`, want: "[true, false]"},
		{name: "remove", src: `let m = #{a: 1, b: 2}; let x = m.remove("a"); let y = m.remove("z"); [m, x, y]`, want: `[#{"b": 2}, 1, ()]`},
		{name: "len", src: "[#{a: 1, b: 2}.len(), #{}.len(), #{}.is_empty()]", want: "[2, 0, true]"},
		{name: "property named like a method", src: "let m = #{len: 7}; [m.len, m.len()]", want: "[7, 1]"},
		{name: "type_of", src: `[type_of(1), type_of(1.0), type_of(true), type_of("s"), type_of('c'), type_of(()), type_of([]), type_of(#{}), 1.type_of()]`, want: `["i64", "f64", "bool", "string", "char", "()", "array", "map", "i64"]`},
		{name: "parse_int", src: `[parse_int("42"), parse_int(" -7 "), parse_int("ff", 16)]`, want: "[42, -7, 255]"},
		{name: "parse_int error", src: `parse_int("x1")`, err: `parse_int: cannot parse "x1"`, pos: "line 1, column 1"},
		{name: "parse_float", src: `[parse_float("2.5"), parse_float("3")]`, want: "[2.5, 3.0]"},
		{name: "parse_float error", src: `parse_float("abc")`, err: "parse_float: cannot parse"},
		{name: "to_int", src: `[2.9.to_int(), (-2.9).to_int(), 5.to_int(), 'A'.to_int(), "12".to_int()]`, want: "[2, -2, 5, 65, 12]"},
		{name: "to_int out of range", src: "1e300.to_int()", err: "does not fit in an i64"},
		{name: "to_float", src: "[1.to_float(), 2.5.to_float()]", want: "[1.0, 2.5]"},
		{name: "number helpers", src: "[(-3).abs(), 2.5.floor(), 2.5.ceiling(), 2.4.round(), 7.is_odd(), max(1, 2), min(1.5, 0.5)]", want: "[3, 2.0, 3.0, 2.0, true, 2, 0.5]"},
		{name: "parse_json", src: `let v = parse_json("{\"a\": [1, 2.5, \"x\", null, true]}"); [v.a[0], v.a[1], v.a[3], type_of(v.a[0])]`, want: `[1, 2.5, (), "i64"]`},
		{name: "parse_json error", src: `parse_json("{")`, err: "parse_json: unexpected EOF"},
		{name: "to_json", src: `#{b: [1, 'c', ()], a: "x"}.to_json()`, want: `"{\"a\":\"x\",\"b\":[1,\"c\",null]}"`},
		{name: "host access is refused", src: "timestamp()", err: "pure-data sandbox"},
		{name: "eval is refused", src: `eval("1")`, err: "eval is not supported"},
	})
}

func TestPrintAndDebugAreCaptured(t *testing.T) {
	_, out, err := Eval("print(\"hello\");\ndebug(\"hello\"); print(42); debug(['a'])", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Output{
		{Kind: "print", Text: "hello", Pos: Pos{1, 1}},
		{Kind: "debug", Text: `"hello"`, Pos: Pos{2, 1}},
		{Kind: "print", Text: "42", Pos: Pos{2, 17}},
		{Kind: "debug", Text: "['a']", Pos: Pos{2, 28}},
	}
	if len(out) != len(want) {
		t.Fatalf("got %d outputs %v, want %d", len(out), out, len(want))
	}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("output %d: got %+v, want %+v", i, out[i], want[i])
		}
	}
}

func TestPrintOutputIsBounded(t *testing.T) {
	_, out, err := Eval("for i in 0..1000 { print(i); }", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != maxOutputs+1 || !strings.Contains(out[maxOutputs].Text, "744 more lines") {
		t.Fatalf("got %d outputs, last %+v", len(out), out[len(out)-1])
	}
}

func TestScriptCallAndHasFn(t *testing.T) {
	src := `
const GREETING = "hi";
fn render(ctx) { global::GREETING + " " + ctx.name }
fn pair(a, b) { [a, b] }
fn pair(a) { a }
fn mutate(x) { x.push(1); x }
`
	s, err := Compile("t.rhai", []byte(src), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		arity int
		ok    bool
	}{{"render", 1, true}, {"pair", 1, true}, {"nope", 0, false}} {
		t.Run("HasFn "+tc.name, func(t *testing.T) {
			n, ok := s.HasFn(tc.name)
			if n != tc.arity || ok != tc.ok {
				t.Fatalf("HasFn(%s) = %d, %v; want %d, %v", tc.name, n, ok, tc.arity, tc.ok)
			}
		})
	}
	v, err := s.Call("render", MustFromGo(map[string]any{"name": "bob"}))
	if err != nil || v.String() != "hi bob" {
		t.Fatalf("render = %v, %v", v, err)
	}
	arg := MustFromGo([]any{int64(0)})
	v, err = s.Call("mutate", arg)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.DebugString(); got != "[0, 1]" {
		t.Fatalf("mutate = %s", got)
	}
	if got := arg.DebugString(); got != "[0]" {
		t.Fatalf("the caller's argument changed: %s", got)
	}
	if _, err := s.Call("pair", Int(1), Int(2), Int(3)); err == nil || !strings.Contains(err.Error(), "takes [1 2] parameters, called with 3") {
		t.Fatalf("wrong arity error = %v", err)
	}
	if _, err := s.Call("missing"); err == nil || !strings.Contains(err.Error(), "function not found: missing") {
		t.Fatalf("missing function error = %v", err)
	}
}

func TestGoConversions(t *testing.T) {
	in := map[string]any{
		"i": 3, "f": 1.5, "b": true, "s": "x", "nil": nil,
		"list": []any{int64(1), "two", []string{"a"}},
		"m":    map[string]string{"k": "v"},
	}
	v, err := FromGo(in)
	if err != nil {
		t.Fatal(err)
	}
	got := v.DebugString()
	want := `#{"b": true, "f": 1.5, "i": 3, "list": [1, "two", ["a"]], "m": #{"k": "v"}, "nil": (), "s": "x"}`
	if got != want {
		t.Fatalf("FromGo = %s\nwant      %s", got, want)
	}
	back := v.Go().(map[string]any)
	if back["i"] != int64(3) || back["f"] != 1.5 || back["nil"] != nil || back["list"].([]any)[1] != "two" {
		t.Fatalf("Go() = %#v", back)
	}
	if Char('x').Go() != 'x' {
		t.Fatal("char does not convert to a rune")
	}
	if _, err := FromGo(struct{}{}); err == nil {
		t.Fatal("FromGo accepted a struct")
	}
	if _, err := FromGo(uint64(1 << 63)); err == nil {
		t.Fatal("FromGo accepted an overflowing uint64")
	}
}

// TestConcurrentCalls: a compiled Script serves calls from many goroutines.
func TestConcurrentCalls(t *testing.T) {
	s, err := Compile("c.rhai", []byte(`
const TABLE = [[1, 2], [3]];
fn run(n) {
    let t = global::TABLE;
    t[0].push(n);
    let out = switch n % 3 { 0 => [0], 1 => [1, 1], _ => [] };
    out + t[0]
}`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 8)
	for g := range 8 {
		go func() {
			v, err := s.Call("run", Int(int64(g)))
			if err != nil {
				done <- err.Error()
				return
			}
			done <- v.DebugString()
		}()
	}
	seen := map[string]bool{}
	for range 8 {
		seen[<-done] = true
	}
	for _, want := range []string{"[0, 1, 2, 0]", "[1, 1, 1, 2, 1]", "[1, 2, 2]"} {
		if !seen[want] {
			t.Fatalf("results %v lack %s", seen, want)
		}
	}
}
