package rhai

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSandboxLimits runs scripts that never end on their own; each must stop
// quickly with an error naming the limit it hit.
func TestSandboxLimits(t *testing.T) {
	cases := []struct {
		name  string
		src   string
		lim   Limits
		limit string
	}{
		{name: "empty loop", src: "loop {}", limit: LimitOperations},
		{name: "busy while", src: "let i = 0; while true { i += 1; }", limit: LimitOperations},
		{name: "unbounded recursion", src: "fn f(n) { f(n + 1) } f(0)", limit: LimitCallDepth},
		{name: "mutual recursion", src: "fn a(n) { b(n) } fn b(n) { a(n) } a(0)", limit: LimitCallDepth},
		{name: "closure recursion", src: "fn f(g) { g.call(g) } f(|g| f(g))", limit: LimitCallDepth},
		{name: "string doubled 40 times", src: `let s = "ab"; for i in 0..40 { s += s; } s.len()`, limit: LimitStringLen},
		{name: "string doubled in interpolation", src: "let s = \"ab\"; for i in 0..40 { s = `${s}${s}`; }", limit: LimitStringLen},
		{name: "string padded", src: `let s = ""; s.pad(1 << 40, "x");`, limit: LimitStringLen},
		{name: "array grown without bound", src: "let a = [1]; loop { a += a; }", limit: LimitArraySize},
		{name: "array pushed without bound", src: "let a = []; loop { a.push(1); }", lim: Limits{MaxArraySize: 1000}, limit: LimitArraySize},
		{name: "array padded", src: "let a = []; a.pad(1 << 40, 0);", limit: LimitArraySize},
		{name: "map grown without bound", src: "let m = #{}; let i = 0; loop { m[i.to_string()] = i; i += 1; }", lim: Limits{MaxMapSize: 500}, limit: LimitMapSize},
		{name: "nested copies cost operations", src: "let a = [1]; loop { a = [a, a]; }", limit: LimitOperations},
		{name: "copying a big array costs operations", src: "let a = []; a.pad(50000, [0]); loop { let b = a; }", limit: LimitOperations},
		{name: "scanning a big string costs operations", src: `let s = ""; s.pad(4000000, "x"); loop { s.contains("y"); }`, limit: LimitOperations},
		{name: "printing shared storage", src: "let a = [1]; for i in 0..60 { a = [a, a]; } print(a);", limit: LimitStringLen},
		{name: "interpolating shared storage", src: "let a = [\"x\"]; for i in 0..60 { a = [a, a]; } `${a}`", limit: LimitStringLen},
		{name: "comparing shared storage", src: "let a = [1]; let b = [1]; for i in 0..60 { a = [a, a]; b = [b, b]; } a == b", limit: LimitOperations},
		{name: "searching shared storage", src: "let a = [1]; let b = [1]; for i in 0..60 { a = [a, a]; b = [b, b]; } [a].contains(b)", limit: LimitOperations},
		{name: "shared storage to JSON", src: "let a = [1]; for i in 0..60 { a = [a, a]; } a.to_json()", limit: LimitOperations},
		{name: "changing a big shared array", src: "let a = []; a.pad(50000, 0); loop { let b = a; b.push(1); }", limit: LimitOperations},
		{name: "configured operations", src: "let i = 0; while i < 1000 { i += 1; }", lim: Limits{MaxOperations: 500}, limit: LimitOperations},
		{name: "limit is not catchable", src: "try { loop {} } catch { 1 }", limit: LimitOperations},
		{name: "deep nesting at compile time", src: strings.Repeat("(", 1000) + "1" + strings.Repeat(")", 1000), limit: LimitExprDepth},
		{name: "deep unary nesting at compile time", src: strings.Repeat("-", 5000) + "1", limit: LimitExprDepth},
		{name: "deep blocks at compile time", src: strings.Repeat("{", 1000) + strings.Repeat("}", 1000), limit: LimitExprDepth},
		{name: "long operator chain", src: strings.Repeat("1 + ", 5000) + "1", limit: LimitExprDepth},
		{name: "long property chain", src: "let m = #{};\nm" + strings.Repeat(".a", 5000), limit: LimitExprDepth},
		{name: "long else-if chain", src: "let x = 1; if x == 0 { 0 }" + strings.Repeat(" else if x == 0 { 0 }", 5000), limit: LimitExprDepth},
		{name: "script too large", src: strings.Repeat(" ", 2000), lim: Limits{MaxScriptBytes: 1000}, limit: LimitScriptBytes},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, _, err := Eval(tc.src, tc.lim)
			took := time.Since(start)
			if err == nil {
				t.Fatal("the script was not stopped")
			}
			if !errors.Is(err, ErrLimit) || LimitOf(err) != tc.limit {
				t.Fatalf("stopped by %q (%v), want limit %s", LimitOf(err), err, tc.limit)
			}
			if !strings.Contains(err.Error(), tc.limit) {
				t.Fatalf("error %q does not name the limit %s", err, tc.limit)
			}
			if took > 2*time.Second {
				t.Fatalf("took %v to stop", took)
			}
		})
	}
}

func TestRunawayLoopStopsInMilliseconds(t *testing.T) {
	s, err := Compile("loop.rhai", []byte("fn render(ctx) { loop {} }"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Call("render", Unit())
	took := time.Since(start)
	if LimitOf(err) != LimitOperations {
		t.Fatalf("err = %v", err)
	}
	// 100,000 operations take about a millisecond; leave room for slow CI.
	if took > 250*time.Millisecond {
		t.Fatalf("loop {} took %v to stop", took)
	}
	t.Logf("loop {} stopped after %v", took)
}

func TestLimitsValidateAndDefault(t *testing.T) {
	if err := (Limits{MaxCallDepth: -1}).Validate(); err == nil || !strings.Contains(err.Error(), LimitCallDepth) {
		t.Fatalf("negative limit accepted: %v", err)
	}
	if err := (Limits{MaxCallDepth: 1 << 20}).Validate(); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("call depth beyond the Go stack accepted: %v", err)
	}
	if _, err := Compile("x", nil, Limits{MaxOperations: -5}); err == nil {
		t.Fatal("Compile accepted a negative limit")
	}
	s, err := Compile("x", []byte("1"), Limits{MaxCallDepth: 3})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Limits()
	if got.MaxCallDepth != 3 || got.MaxOperations != 100_000 {
		t.Fatalf("limits = %+v", got)
	}
	_, _, err = Eval("fn f(n) { if n == 0 { 0 } else { f(n - 1) } } f(5)", Limits{MaxCallDepth: 3})
	if LimitOf(err) != LimitCallDepth {
		t.Fatalf("configured call depth not enforced: %v", err)
	}
	if _, _, err := Eval("fn f(n) { if n == 0 { 0 } else { f(n - 1) } } f(2)", Limits{MaxCallDepth: 3}); err != nil {
		t.Fatalf("call within the depth limit failed: %v", err)
	}
}
