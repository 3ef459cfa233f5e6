// Package rhai is a sandboxed interpreter for the subset of the Rhai
// scripting language that custom context regions use (seed 001, "Rhai
// regions"), and the adapter that plugs it into the region engine.
//
// There is no Go implementation of Rhai, so this package has its own lexer,
// parser and tree-walking evaluator. It aims to run real users' region scripts
// unchanged, with Rhai's semantics where a script can observe them.
//
// # Using it
//
//	s, err := rhai.Compile("brain.rhai", src, rhai.Limits{}) // zero limits: defaults
//	arity, ok := s.HasFn("render")
//	v, err := s.Call("render", rhai.MustFromGo(map[string]any{"entries": []any{}}))
//
// For the region engine, pass rhai.NewEngine(limits) as engine.Options.Scripts:
// it compiles each custom region's script once at load, and its RegionScript
// builds the ctx maps of seed 001 and checks what the hooks return (a render
// of the wrong shape, an on_write of the wrong type, or on_overflow indices
// out of range are errors the engine turns into seed 001's fallbacks).
// Engine.CheckBlueprint compiles a blueprint's scripts without a window, for
// `ctxsim validate`. What hooks print is kept for RegionScript.DrainOutput.
//
// # The supported language
//
// Values: integers (i64), floats (f64), booleans, strings, characters, unit
// `()`, arrays `[…]`, object maps `#{ key: value, "quoted key": value }`,
// integer ranges (`a..b`, `a..=b`), function pointers (`Fn("name")`) and
// closures (`|x| x + 1`, `|| …`) that share the variables they capture.
//
// Statements and expressions: `let`, `const`, `fn` at top level (recursion and
// overloading by arity; `this` in method-style calls), `if`/`else if`/`else`
// as statement and expression, `while`, `loop`, `do … while|until`,
// `for x in …` and `for (x, i) in …` over arrays, ranges and strings, `break`
// (with a value out of `loop`), `continue`, `return`, `throw`,
// `try … catch (e)`, `switch` with `|` alternatives, integer range cases, `if`
// guards and a final `_`, blocks as expressions (the last statement is the
// value, with or without a `;`), assignment and compound assignment (`+=`
// `-=` `*=` `/=` `%=` `**=` `<<=` `>>=` `&=` `|=` `^=`), `in` and `!in`,
// `??`, `?.` and `?[`, string interpolation in back-ticks (`${…}`), `//` and
// `/* */` (nesting) comments, `global::NAME` for top-level constants.
// Operator precedence is Rhai's (`??` binds tighter than comparisons).
//
// Semantics that scripts can observe, as in Rhai: integer arithmetic is
// checked (overflow and integer division by zero are errors; float division
// by zero gives ±inf); int and float mix to float; a string index gives a
// char, and a char equals the one-character string; negative indexes count
// from the end; an out-of-range array or string index is an error, while a
// missing map property reads as `()`; `==` between unrelated types is false;
// arrays and maps are values (assignment copies them, copy-on-write, so a
// copy costs nothing until one side changes); function arguments are
// passed by value, but a method call on a variable changes it (`a.push(1)`);
// script functions cannot see the caller's variables; the top-level statements
// run before each call, as Rhai's call_fn does.
//
// Standard functions and methods. Strings: len, is_empty, contains,
// starts_with, ends_with, index_of, sub_string, crop, split (by separator, at
// an index, or on whitespace), trim, to_upper, to_lower, make_upper,
// make_lower, replace, remove, chars, get, pad, truncate, clear, append,
// to_string. trim, replace, crop, pad, truncate and the make_* methods change
// the string in place, as in Rhai. Arrays: len, is_empty, push, append, pop,
// shift, insert, remove, get, set, contains, index_of, find, reverse, sort
// (natural or with a comparator), filter, map, reduce, reduce_rev, some, all,
// retain, drain, join, split, split_off, extract, clear, truncate, chop, pad,
// dedup. Maps: keys and values (in key order), contains, remove, get, set,
// len, is_empty, clear, mixin, fill_with. Numbers: to_int, to_float, abs,
// sign, floor, ceiling, round, sqrt, is_odd, is_even. Global: type_of,
// parse_int, parse_float, to_string, to_debug, Fn, call, curry, is_def_fn,
// range (two bounds, or three with a step), min, max, parse_json and
// to_json (extensions: tool output is often JSON), print and debug
// (captured, never written anywhere). `x.call(f, …)` runs f with this = x.
// Callbacks (filter, map, …) may be closures, function pointers or function
// names, and take the element index as an optional extra parameter.
//
// Outside the subset, with a compile error naming line and column: `import`,
// `export` and modules, `fn` inside blocks, `f!()` calls into the caller's
// scope, custom operators; `eval`, timestamps and other host access are
// run-time errors.
//
// # The sandbox
//
// Scripts are pure data: there are no functions for files, network, time or
// the host. Limits, each with a default and each configurable through
// Limits: operations per call (100,000, as the reference runtime), call
// depth, string length, array size, map size, syntactic nesting and script
// size. A script that passes one stops with an *Error whose Limit field names
// it (errors.Is(err, ErrLimit) matches); a limit cannot be caught by
// try/catch. A runaway `loop {}` stops in about a millisecond. Work that
// grows with data (copying shared storage, scanning long strings, comparing
// or printing containers) is paid from the operation budget too, so no
// script does unbounded work within it.
//
// Every error names the line and column it points at; run-time errors also
// list the script functions they passed out of.
package rhai
