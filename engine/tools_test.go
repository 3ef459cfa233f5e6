package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// wholePointer is the format it replaces, byte for byte, whatever pointers
// it made before (it keeps them by tokens, for the route's region).
func TestWholePointerMatchesFormat(t *testing.T) {
	c := &Context{}
	run := func(n int) string { return string(AppendFiller(nil, n)) }
	for _, target := range []string{"codebase", "notes", "codebase", "tilde" + strings.Repeat("~", 20), "codebase"} {
		rc := &route{target: target}
		for _, content := range []string{"", "short", strings.Repeat("~", 160), strings.Repeat("~", 161), strings.Repeat("é", 100), strings.Repeat("é", 200), strings.Repeat("x", 5000),
			run(100), run(160), run(161), run(5000) + "\n", "ab" + run(150) + "cd", "é" + run(30) + strings.Repeat("é", 200), run(1 << 40),
			run(160) + "x", run(161) + "x", run(200) + "\nvalue-1\n" + run(200) + "\n", run(300) + run(300), "\xff" + run(300)} {
			for _, tokens := range []int{0, 7, 123456789, 2047, 2048, 7} {
				want := fmt.Sprintf("[output (%d tokens) is in your context under the '%s' heading - it is already in this prompt, so no tool call is needed to see it. Preview: %s]", tokens, target, previewOf(content))
				got, size, canon := c.wholePointer(tokens, rc, content)
				if canon && canonicalRuns(got) != got {
					t.Errorf("wholePointer(%d, %.20q) = %q: said canonical, is not", tokens, content, got)
				}
				if got != want {
					t.Errorf("wholePointer(%d, %.20q) = %q, want %q", tokens, content, got, want)
				}
				if size != TextLen(got) {
					t.Errorf("wholePointer(%d, %.20q): length %d, want %d", tokens, content, size, TextLen(got))
				}
			}
		}
	}
}

// truncateChars' ASCII shortcut keeps what walking the characters keeps.
func TestTruncateChars(t *testing.T) {
	walk := func(s string, n int) string {
		i := 0
		for pos := range s {
			if i == n {
				return s[:pos]
			}
			i++
		}
		return s
	}
	for _, s := range []string{"", "abc", strings.Repeat("x", 40), strings.Repeat("é", 20), "abcdefgh\x80ijk", strings.Repeat("a", 15) + "ü" + strings.Repeat("b", 20), "\xff\xfe"} {
		for n := -1; n <= len(s)+2; n++ {
			if got, want := truncateChars(s, n), walk(s, n); got != want {
				t.Errorf("truncateChars(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

// A call's tokens are its name's and its arguments' as the counter counts
// them, arguments that hold a run (not JSON, but written) included.
func TestAssistantCallTokens(t *testing.T) {
	run := string(AppendFiller(nil, 400))
	for _, args := range []string{`{"path":"a.go"}`, "", `{"x":"` + run + `"}`, "\xff\xff" + run, "\xff"} {
		c := newCtx(t, "notes = { kind = \"temporary\", max_tokens = 5000 }\n", Options{})
		before := c.Tokens()
		if err := c.AddAssistant("", []ToolCall{{ID: "1", Name: "read_file", Args: json.RawMessage(args)}}); err != nil {
			t.Fatal(err)
		}
		if got, want := c.Tokens()-before, estimateTokens("read_file")+estimateTokens(args); got != want {
			t.Errorf("args %q: %d tokens, want %d", args, got, want)
		}
	}
}

// A call's name counts as itself whatever the names of the calls before
// it (each turn counts the last name again only if it differs).
func TestAssistantCallNames(t *testing.T) {
	c := newCtx(t, "notes = { kind = \"temporary\", max_tokens = 5000 }\n", Options{})
	for i, name := range []string{"read_file", "read_file", "bash", "read_file", "x", "", "a_much_longer_tool_name", "bash", "bash", "~" + string(AppendFiller(nil, 300))} {
		before := c.Tokens()
		if err := c.AddAssistant("", []ToolCall{{ID: fmt.Sprint(i), Name: name, Args: json.RawMessage(`{}`)}}); err != nil {
			t.Fatal(err)
		}
		if got, want := c.Tokens()-before, estimateTokens(name)+estimateTokens(`{}`); got != want {
			t.Errorf("call %d %.20q: %d tokens, want %d", i, name, got, want)
		}
	}
}

// A repeated call id replaces the call that awaits its result, whatever
// turn made it: the result takes the newer call, a second result none.
func TestRepeatedCallID(t *testing.T) {
	c := newCtx(t, "notes = { kind = \"temporary\", max_tokens = 5000 }\n", Options{})
	for _, calls := range [][]ToolCall{{{ID: "a", Name: "x"}}, {{ID: "a", Name: "y"}}, {{ID: "b", Name: "z"}, {ID: "b", Name: "w"}}} {
		if err := c.AddAssistant("", calls); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []string{"y", "", "w", ""} {
		id := []string{"a", "a", "b", "b"}[i]
		if _, err := c.AddToolResult(ToolResult{CallID: id, Content: "done"}); err != nil {
			t.Fatal(err)
		}
		if got := c.conv.entries[len(c.conv.entries)-1].tool; got != want {
			t.Errorf("result %d for %q: tool %q, want %q", i, id, got, want)
		}
	}
}

// Results answer their calls in any order, the newest or not, listed or
// mapped: each takes its own call's name, and a call once answered is gone.
func TestTakeCallOrder(t *testing.T) {
	c := newCtx(t, "notes = { kind = \"temporary\", max_tokens = 5000 }\n", Options{})
	rng := rand.New(rand.NewPCG(5, 6))
	var open []string
	next := 0
	for range 2000 {
		if len(open) == 0 || len(open) < 3*maxPending && rng.IntN(2) == 0 {
			n := 1 + rng.IntN(3)
			calls := make([]ToolCall, n)
			for i := range calls {
				id := fmt.Sprint("c", next)
				next++
				calls[i] = ToolCall{ID: id, Name: "tool-" + id}
				open = append(open, id)
			}
			if err := c.AddAssistant("", calls); err != nil {
				t.Fatal(err)
			}
			continue
		}
		k := rng.IntN(len(open))
		if rng.IntN(2) == 0 {
			k = len(open) - 1 // the newest, most results
		}
		id := open[k]
		open = append(open[:k], open[k+1:]...)
		for _, want := range []string{"tool-" + id, ""} {
			if got := c.takeCall(id).Name; got != want {
				t.Fatalf("call %s: name %q, want %q", id, got, want)
			}
		}
	}
}

// The room of a turn's calls that left holds no call (no content kept
// alive) when AddAssistant may take it again.
func TestCallRoomsEmptied(t *testing.T) {
	c := newCtx(t, "notes = { kind = \"temporary\", max_tokens = 5000 }\n", Options{})
	for i := range 500 {
		calls := make([]ToolCall, 1+i%3)
		for j := range calls {
			calls[j] = ToolCall{ID: fmt.Sprint("c", i, "-", j), Name: "bash", Args: json.RawMessage(`{}`)}
		}
		if err := c.AddAssistant("", calls); err != nil {
			t.Fatal(err)
		}
		for _, r := range c.callRooms {
			for _, tc := range r.calls[:cap(r.calls)] {
				if tc.ID != "" || tc.Name != "" || tc.Args != nil {
					t.Fatalf("turn %d: a room holds call %q", i, tc.ID)
				}
			}
		}
	}
	if len(c.callRooms) == 0 {
		t.Fatal("no turn left the conversation")
	}
}

// A result routed to a region it does not fit whole is cut to what is left
// there (or dropped), and says so: its outcome and its pointer.
func TestRoutedResultCut(t *testing.T) {
	for _, tc := range []struct {
		before int // tokens written to notes first
		want   RouteOutcome
		ptr    string
	}{
		{0, RoutedWhole, "is in your context"},
		{40, RoutedTruncated, "was too large"},
		{998, RoutedDropped, "could NOT be stored"},
	} {
		b := mustParse(t, "[agent]\n[context.regions]\nnotes = { kind = \"temporary\", max_tokens = 1000, admission = \"reject\" }\nconversation = { kind = \"sliding_window\", max_items = 50, max_tokens = 10000 }\n[stages.work]\n[stages.work.tool_routing]\ndefault_region = \"notes\"\n")
		c, err := New(b, Options{Window: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		size := 4000
		if tc.before > 0 {
			if err := c.Write("notes", strings.Repeat("n", 4*tc.before)); err != nil {
				t.Fatal(err)
			}
		} else {
			size = 400
		}
		c.AddAssistant("", []ToolCall{{ID: "t1", Name: "grep"}})
		r, err := c.AddToolResult(ToolResult{CallID: "t1", Tool: "grep", Content: strings.Repeat("z", size)})
		if err != nil || r.Outcome != tc.want || !strings.Contains(r.Pointer, tc.ptr) {
			t.Errorf("%d tokens before: outcome %v, pointer %.60q, %v; want %v", tc.before, r.Outcome, r.Pointer, err, tc.want)
		}
	}
}
