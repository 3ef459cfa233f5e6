package engine

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Region-level conformance cases of ENGINE.md §11 (1–26).
func TestRegionWritePath(t *testing.T) {
	t.Run("11.1 temporary rolls the oldest entry off", func(t *testing.T) {
		c := newCtx(t, "t = { max_tokens = 100 }\n", Options{})
		mustWrite(t, c, "t", text("oldest", 40))
		mustWrite(t, c, "t", text("middle", 40))
		mustWrite(t, c, "t", text("newest", 40))
		if got := contents(c, "t"); !slices.Equal(got, []string{"middle", "newest"}) || c.byName["t"].tokens != 80 {
			t.Fatalf("got %v, %d tokens", got, c.byName["t"].tokens)
		}
	})
	t.Run("11.2 temporary evicts only as far as needed", func(t *testing.T) {
		c := newCtx(t, "t = { max_tokens = 100 }\n", Options{})
		for i := range 5 {
			mustWrite(t, c, "t", text("entry-"+string(rune('0'+i)), 20))
		}
		mustWrite(t, c, "t", text("newest", 20))
		want := []string{"entry-1", "entry-2", "entry-3", "entry-4", "newest"}
		if got := contents(c, "t"); !slices.Equal(got, want) {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("11.3 admission reject refuses with the runtime's text", func(t *testing.T) {
		c := newCtx(t, "sources = { max_tokens = 100, admission = \"reject\" }\n", Options{})
		mustWrite(t, c, "sources", text("a", 80))
		err := c.Write("sources", text("b", 40))
		want := "Region 'sources' is full (80/100 tokens) and does not evict automatically - release an entry before adding another"
		if err == nil || err.Error() != want {
			t.Fatalf("err %v", err)
		}
		if r := c.byName["sources"]; len(r.entries) != 1 || r.tokens != 80 {
			t.Fatalf("region changed: %d entries %d tokens", len(r.entries), r.tokens)
		}
	})
	t.Run("11.4 a write bigger than the region is refused and nothing is evicted", func(t *testing.T) {
		c := newCtx(t, "t = { max_tokens = 100 }\n", Options{})
		mustWrite(t, c, "t", text("a", 50))
		err := c.Write("t", text("b", 500))
		if err == nil || err.Error() != "Content exceeds token budget: 550 > 100" {
			t.Fatalf("err %v", err)
		}
		if len(c.byName["t"].entries) != 1 {
			t.Fatal("entry evicted")
		}
	})
	t.Run("11.5 a turn group is evicted together", func(t *testing.T) {
		c := newCtx(t, "conversation = { kind = \"sliding_window\", max_items = 100, max_tokens = 100 }\n", Options{})
		if err := c.AddAssistant(text("a", 28), []ToolCall{{ID: "t1", Name: "t", Args: json.RawMessage(`{}`)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.AddToolResult(ToolResult{CallID: "t1", Tool: "t", Content: text("r", 30)}); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, c, "conversation", text("x", 60))
		for _, e := range c.byName["conversation"].entries {
			if e.kind == EntryToolResult {
				t.Fatal("tool result outlived its assistant turn")
			}
		}
		checkInv(t, c)
	})
	t.Run("11.6 pinned never evicts; an over-budget write fails", func(t *testing.T) {
		c := newCtx(t, "p = { kind = \"pinned\", max_tokens = 100 }\n", Options{})
		mustWrite(t, c, "p", text("a", 80))
		if err := c.Write("p", text("b", 40)); err == nil {
			t.Fatal("no error")
		}
		if len(c.byName["p"].entries) != 1 {
			t.Fatal("pinned entry lost")
		}
	})
	t.Run("11.7 which kinds roll off the oldest", func(t *testing.T) {
		for k, want := range map[Kind]bool{KindTemporary: true, KindClearable: true, KindSlidingWindow: true, KindCompacting: true, KindPinned: false, KindCustom: false, KindHashMap: false, KindChecklist: false, KindCompactHistory: false} {
			if k.rollsOffOldest() != want {
				t.Errorf("%v: rollsOffOldest = %v", k, !want)
			}
		}
	})
	t.Run("11.15 sliding per_item keeps the last max_items", func(t *testing.T) {
		c := newCtx(t, "conversation = { kind = \"sliding_window\", max_items = 3, max_tokens = 1000 }\n", Options{})
		for i, n := range []int{10, 20, 30, 40} {
			mustWrite(t, c, "conversation", text("msg"+string(rune('1'+i)), n))
		}
		if got := contents(c, "conversation"); !slices.Equal(got, []string{"msg2", "msg3", "msg4"}) || c.byName["conversation"].tokens != 90 {
			t.Fatalf("got %v %d", got, c.byName["conversation"].tokens)
		}
		mustWrite(t, c, "conversation", text("msg5", 50))
		if got := contents(c, "conversation"); got[0] != "msg3" || c.byName["conversation"].tokens != 120 {
			t.Fatalf("got %v %d", got, c.byName["conversation"].tokens)
		}
	})
	t.Run("11.16 bulk waits for overflow then drops to max_items", func(t *testing.T) {
		c := newCtx(t, "conversation = { kind = \"sliding_window\", max_items = 5, strategy = \"bulk\", overflow = 3, max_tokens = 1000 }\n", Options{})
		for i := 1; i <= 8; i++ {
			mustWrite(t, c, "conversation", text("msg"+string(rune('0'+i)), 5))
		}
		if n := len(c.byName["conversation"].entries); n != 8 {
			t.Fatalf("%d entries after 8 adds", n)
		}
		mustWrite(t, c, "conversation", text("msg9", 5))
		if got := contents(c, "conversation"); len(got) != 5 || got[0] != "msg5" {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("11.17 bulk drops whole turn groups", func(t *testing.T) {
		c := newCtx(t, "conversation = { kind = \"sliding_window\", max_items = 3, strategy = \"bulk\", overflow = 2, max_tokens = 1000 }\n", Options{})
		c.AddAssistant("a", []ToolCall{{ID: "t1", Name: "x"}})
		c.AddToolResult(ToolResult{CallID: "t1", Tool: "x", Content: "r"})
		for _, m := range []string{"msg2", "msg3", "msg4"} {
			mustWrite(t, c, "conversation", m)
		}
		if n := len(c.byName["conversation"].entries); n != 5 {
			t.Fatalf("%d entries", n)
		}
		mustWrite(t, c, "conversation", "msg5")
		if got := contents(c, "conversation"); len(got) != 3 || got[0] != "msg3" {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("11.19 a turn group larger than max_items evicts itself", func(t *testing.T) {
		c := newCtx(t, "conversation = { kind = \"sliding_window\", max_items = 3, max_tokens = 1000 }\n", Options{})
		c.AddAssistant("a", []ToolCall{{ID: "t1", Name: "x"}, {ID: "t2", Name: "y"}})
		c.AddToolResult(ToolResult{CallID: "t1", Tool: "x", Content: "r1"})
		c.AddToolResult(ToolResult{CallID: "t2", Tool: "y", Content: "r2"})
		c.AddUser(text("u", 15))
		r := c.byName["conversation"]
		if len(r.entries) != 1 || r.entries[0].kind != EntryUser || r.tokens != 15 {
			t.Fatalf("%d entries, %d tokens", len(r.entries), r.tokens)
		}
	})
	t.Run("11.20 removeOldest returns the whole group", func(t *testing.T) {
		c := newCtx(t, "conversation = { kind = \"sliding_window\", max_items = 50, max_tokens = 1000 }\n", Options{})
		c.AddAssistant(text("a", 98), []ToolCall{{ID: "t1", Name: "x"}, {ID: "t2", Name: "y"}})
		c.AddToolResult(ToolResult{CallID: "t1", Tool: "x", Content: text("r", 30)})
		c.AddToolResult(ToolResult{CallID: "t2", Tool: "y", Content: text("s", 20)})
		c.AddUser(text("u", 10))
		r := c.byName["conversation"]
		gone := r.removeOldest()
		sum := 0
		for _, e := range gone {
			sum += e.tokens
		}
		if gone[0].kind != EntryAssistant || sum != 150 || len(r.entries) != 1 || r.tokens != 10 {
			t.Fatalf("removed %d entries worth %d; %d left with %d tokens", len(gone), sum, len(r.entries), r.tokens)
		}
	})
	t.Run("11.21 hashmap evicts the least recently written key", func(t *testing.T) {
		c := newCtx(t, "files = { kind = \"hashmap\", max_tokens = 30 }\n", Options{})
		for _, k := range []string{"a", "b", "c", "d"} {
			call(t, c, "context_write", map[string]string{"region": "files", "key": k, "content": text(k, 10)})
		}
		r := c.byName["files"]
		if len(r.entries) != 3 || r.indexOfKey("a") >= 0 {
			t.Fatalf("keys %v", contents(c, "files"))
		}
	})
	t.Run("D6 LRU follows a logical clock: rewriting a key makes it recent", func(t *testing.T) {
		c := newCtx(t, "files = { kind = \"hashmap\", max_entries = 3 }\n", Options{})
		for _, k := range []string{"a", "b", "c", "a", "d"} {
			call(t, c, "context_write", map[string]string{"region": "files", "key": k, "content": k})
		}
		r := c.byName["files"]
		if r.indexOfKey("b") >= 0 || r.indexOfKey("a") < 0 || r.indexOfKey("d") < 0 {
			t.Fatalf("keys %v", contents(c, "files"))
		}
	})
	t.Run("11.22 hashmap max_entries evicts LRU", func(t *testing.T) {
		c := newCtx(t, "files = { kind = \"hashmap\", max_entries = 2 }\n", Options{})
		for _, k := range []string{"a", "b", "c"} {
			call(t, c, "context_write", map[string]string{"region": "files", "key": k, "content": k})
		}
		r := c.byName["files"]
		if r.indexOfKey("a") >= 0 || r.indexOfKey("c") < 0 {
			t.Fatalf("keys %v", contents(c, "files"))
		}
	})
	t.Run("11.23 hashmap upsert replaces in place", func(t *testing.T) {
		c := newCtx(t, "files = { kind = \"hashmap\" }\n", Options{})
		call(t, c, "context_write", map[string]string{"region": "files", "key": "k", "content": text("old", 10)})
		call(t, c, "context_write", map[string]string{"region": "files", "key": "k", "content": text("new", 15)})
		r := c.byName["files"]
		if len(r.entries) != 1 || r.tokens != 15 || !strings.HasPrefix(r.entries[0].content, "new") {
			t.Fatalf("%d entries %d tokens", len(r.entries), r.tokens)
		}
	})
	t.Run("11.24 hashmap entry bigger than the region is an error", func(t *testing.T) {
		c := newCtx(t, "files = { kind = \"hashmap\", max_tokens = 5 }\n", Options{})
		out := call(t, c, "context_write", map[string]string{"region": "files", "key": "k", "content": text("x", 100)})
		if out != "[error] Entry (100 tokens) exceeds region budget (5 max)" {
			t.Fatal(out)
		}
	})
}

func TestChecklist(t *testing.T) {
	regions := "todos = { kind = \"checklist\", max_tokens = 1000 }\n"
	t.Run("11.8 ids start at 1", func(t *testing.T) {
		c := newCtx(t, regions, Options{})
		if out := call(t, c, "todo_add", map[string]string{"region": "todos", "item": "compute the fee table"}); out != "[ok] added item 1" {
			t.Fatal(out)
		}
		if out := call(t, c, "todo_add", map[string]string{"region": "todos", "item": "check the manual"}); out != "[ok] added item 2" {
			t.Fatal(out)
		}
		if n := len(c.byName["todos"].openItems()); n != 2 {
			t.Fatal(n)
		}
	})
	t.Run("11.9 and 11.57 done closes one item", func(t *testing.T) {
		c := newCtx(t, regions, Options{})
		call(t, c, "todo_add", map[string]string{"region": "todos", "item": "one"})
		call(t, c, "todo_add", map[string]string{"region": "todos", "item": "two"})
		if out := call(t, c, "todo_done", map[string]any{"region": "todos", "id": 1}); !strings.HasPrefix(out, "[ok]") {
			t.Fatal(out)
		}
		open := c.byName["todos"].openItems()
		if len(open) != 1 || open[0].content != "two" || len(c.byName["todos"].entries) != 2 {
			t.Fatal(open)
		}
	})
	t.Run("11.10 an unknown id is an error the model can read", func(t *testing.T) {
		c := newCtx(t, regions, Options{})
		call(t, c, "todo_add", map[string]string{"region": "todos", "item": "one"})
		if out := call(t, c, "todo_done", map[string]any{"region": "todos", "id": 99}); out != "[error] no item 99 in 'todos'" {
			t.Fatal(out)
		}
		if out := call(t, c, "todo_note", map[string]any{"region": "todos", "id": 99, "note": "x"}); out != "[error] no item 99 in 'todos'" {
			t.Fatal(out)
		}
		if out := call(t, c, "todo_note", map[string]any{"region": "todos", "id": 1}); out != "[error] missing 'note' argument" {
			t.Fatal(out)
		}
	})
	t.Run("11.11 render puts open items first", func(t *testing.T) {
		c := newCtx(t, regions, Options{})
		call(t, c, "todo_add", map[string]string{"region": "todos", "item": "already finished"})
		call(t, c, "todo_add", map[string]string{"region": "todos", "item": "still to do"})
		call(t, c, "todo_done", map[string]any{"region": "todos", "id": 1})
		call(t, c, "todo_note", map[string]any{"region": "todos", "id": 2, "note": "half way"})
		want := "## todos\nChecklist (1 open, 1 done):\n[ ] 2 still to do\n    note: half way\n[x] 1 already finished"
		var got string
		for _, b := range c.Assemble().System {
			if b.Region == "todos" {
				got = b.Text
				if b.Cache != CacheUntilChanged && b.Cache != CacheRecentlyChanged {
					t.Errorf("hint %v", b.Cache)
				}
			}
		}
		if got != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("11.12 entries that are not items render nothing", func(t *testing.T) {
		c := newCtx(t, regions, Options{})
		mustWrite(t, c, "todos", "free text")
		if c.byName["todos"].renderChecklist() != "" {
			t.Fatal("rendered a non-item")
		}
	})
	t.Run("11.13 an item over the budget is refused", func(t *testing.T) {
		c := newCtx(t, "todos = { kind = \"checklist\", max_tokens = 4 }\n", Options{})
		out := call(t, c, "todo_add", map[string]string{"region": "todos", "item": text("x", 99)})
		if !strings.HasPrefix(out, "[error] Content exceeds token budget") || len(c.byName["todos"].entries) != 0 {
			t.Fatal(out)
		}
	})
	t.Run("D7 checklist ids are never reused", func(t *testing.T) {
		c := newCtx(t, regions, Options{})
		call(t, c, "todo_add", map[string]string{"region": "todos", "item": "one"})
		call(t, c, "todo_add", map[string]string{"region": "todos", "item": "two"})
		call(t, c, "context_delete", map[string]any{"region": "todos", "index": 1}) // the max id goes
		if out := call(t, c, "todo_add", map[string]string{"region": "todos", "item": "three"}); out != "[ok] added item 3" {
			t.Fatal(out)
		}
		call(t, c, "context_write", map[string]string{"region": "todos", "content": "wiped"})
		if out := call(t, c, "todo_add", map[string]string{"region": "todos", "item": "four"}); out != "[ok] added item 4" {
			t.Fatal(out)
		}
	})
	t.Run("todo on a non-checklist region", func(t *testing.T) {
		c := newCtx(t, regions+"notes = {}\n", Options{})
		out := call(t, c, "todo_add", map[string]string{"region": "notes", "item": "x"})
		if out != "[error] region 'notes' is not a checklist; declare it as kind = \"checklist\" to track items in it" {
			t.Fatal(out)
		}
	})
}

func TestSlidingStrategyCompactD4(t *testing.T) {
	c := newCtx(t, "conversation = { kind = \"sliding_window\", max_items = 5, strategy = \"compact\", compact_count = 3, max_tokens = 10000 }\n", Options{})
	for i := 1; i <= 8; i++ {
		mustWrite(t, c, "conversation", "msg"+string(rune('0'+i))+" decided to use cache_v2")
	}
	if n := len(c.byName["conversation"].entries); n != 8 {
		t.Fatalf("%d entries before the fold", n)
	}
	mustWrite(t, c, "conversation", "msg9")
	got := contents(c, "conversation")
	if len(got) != 7 || !strings.HasPrefix(got[0], "[summary of conversation]") || !strings.Contains(got[0], "msg1") || got[1] != "msg4 decided to use cache_v2" {
		t.Fatalf("got %q", got)
	}
	checkInv(t, c)
}

// Budgets (11.27–11.31) and the seeds' worked numbers.
func TestBudgets(t *testing.T) {
	parse := []struct {
		in   string
		want float64
		err  string
	}{
		{"35%", 0.35, ""}, {"100%", 1, ""}, {"0.6%", 0.006, ""}, {"  35 %  ", 0.35, ""},
		{"lots", 0, `budget 'lots' must end with '%' (e.g. "35%")`},
		{"abc%", 0, "budget 'abc%' is not a valid number"},
		{"0%", 0, "budget '0%' must be greater than 0% and at most 100%"},
		{"-5%", 0, "budget '-5%' must be greater than 0% and at most 100%"},
		{"150%", 0, "budget '150%' must be greater than 0% and at most 100%"},
	}
	for _, p := range parse {
		t.Run("11.27 parse "+p.in, func(t *testing.T) {
			f, err := ParseBudget(p.in)
			if p.err != "" {
				if err == nil || err.Error() != p.err {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil || f < p.want-1e-12 || f > p.want+1e-12 {
				t.Fatalf("%v %v", f, err)
			}
		})
	}
	resolve := []struct {
		name   string
		b      Budget
		window int
		want   int
	}{
		{"absolute ignores the window", Budget{Tokens: 4000}, 1_000_000, 4000},
		{"35% of 1M", Budget{Percent: true, Fraction: 0.35}, 1_000_000, 350_000},
		{"max caps", Budget{Percent: true, Fraction: 0.02, Max: 4000}, 1_000_000, 4000},
		{"min floors", Budget{Percent: true, Fraction: 0.02, Min: 2000}, 8000, 2000},
		{"within bounds", Budget{Percent: true, Fraction: 0.10, Min: 1000, Max: 50000}, 200_000, 20000},
		{"floor over cap wins", Budget{Percent: true, Fraction: 0.5, Min: 9000, Max: 5000}, 200_000, 9000},
		{"20% of 200K is 40,000", Budget{Percent: true, Fraction: 0.20}, 200_000, 40_000},
		{"rounding half away from zero", Budget{Percent: true, Fraction: 0.35}, 8191, 2867}, // 2866.85
		{"rounding a half up", Budget{Percent: true, Fraction: 0.5}, 5, 3},
	}
	for _, r := range resolve {
		t.Run("11.28 resolve "+r.name, func(t *testing.T) {
			if got := r.b.Resolve(r.window); got != r.want {
				t.Fatalf("got %d want %d", got, r.want)
			}
		})
	}
	thresholds := []struct {
		name, region string
		window, want int
	}{
		{"compact_at 80% of 20% of 200K is 32,000", `c = { kind = "compacting", budget = "20%", compact_at = "80%" }`, 200_000, 32_000},
		{"threshold_tokens caps compact_at", `c = { kind = "compacting", budget = "20%", compact_at = "80%", threshold_tokens = 25000 }`, 200_000, 25_000},
		{"budget only defaults to 80%", `c = { kind = "compacting", budget = "20%" }`, 200_000, 32_000},
		{"absolute threshold without compact_at", `c = { kind = "compacting", budget = "20%", threshold_tokens = 8000 }`, 1_000_000, 8000},
		{"max_tokens only gives 80% of it", `c = { kind = "compacting", max_tokens = 10000 }`, 1_000_000, 8000},
		{"capped 35% 80% 32000", `c = { kind = "compacting", budget = "35%", compact_at = "80%", threshold_tokens = 32000 }`, 1_000_000, 32000},
	}
	for _, th := range thresholds {
		t.Run("11.29 threshold "+th.name, func(t *testing.T) {
			bp := mustParse(t, "[agent]\n[context.regions]\n"+th.region+"\n")
			regs, err := bp.Regions("", th.window)
			if err != nil {
				t.Fatal(err)
			}
			if regs[0].ThresholdTokens != th.want {
				t.Fatalf("threshold %d want %d", regs[0].ThresholdTokens, th.want)
			}
		})
	}
	t.Run("11.30 parse budgets with cap and floor", func(t *testing.T) {
		bp := mustParse(t, "[agent]\n[context.regions]\ntask = { kind = \"pinned\", budget = \"2%\", max_tokens = 4000, min_tokens = 500 }\nfree = { kind = \"temporary\", budget = \"25%\" }\nabs = { kind = \"pinned\", max_tokens = 3000 }\n")
		d := bp.RegionDefs
		if d[0].Budget != (Budget{Percent: true, Fraction: 0.02, Max: 4000, Min: 500}) || d[1].Budget.Max != 0 || d[2].Budget != (Budget{Tokens: 3000}) {
			t.Fatalf("%+v %+v %+v", d[0].Budget, d[1].Budget, d[2].Budget)
		}
	})
	t.Run("WithBudgets overrides shares and tokens", func(t *testing.T) {
		bp := mustParse(t, "[agent]\n[context.regions]\na = { budget = \"10%\", max_tokens = 5000 }\nb = { kind = \"pinned\" }\n")
		nb, err := bp.WithBudgets(map[string]string{"a": "20%", "b": "700"})
		if err != nil {
			t.Fatal(err)
		}
		regs, _ := nb.Regions("", 100_000)
		if regs[0].MaxTokens != 5000 || regs[1].MaxTokens != 700 {
			t.Fatalf("%+v", regs)
		}
		if old, _ := bp.Regions("", 100_000); old[1].MaxTokens != DefaultMaxTokens {
			t.Fatal("WithBudgets changed the original")
		}
		for _, bad := range []map[string]string{{"a": "0%"}, {"a": "x"}, {"zz": "10%"}} {
			if _, err := bp.WithBudgets(bad); err == nil {
				t.Errorf("%v accepted", bad)
			}
		}
	})
}

func TestValidation(t *testing.T) {
	codes := func(r Report) []string {
		var out []string
		for _, d := range r.Errors {
			out = append(out, d.Code)
		}
		return out
	}
	cases := []struct {
		name, src string
		window    int
		wantErr   string // code; "" = no errors
		wantLint  string
	}{
		{"11.32 fixed regions leave too little working room", "[agent]\n[context.regions]\np = { kind = \"pinned\", max_tokens = 95000 }\nt = { max_tokens = 5000 }\n", 100000, "working-room", ""},
		{"11.32 enough working room", "[agent]\n[context.regions]\np = { kind = \"pinned\", max_tokens = 4000 }\nt = { max_tokens = 40000 }\n", 100000, "", ""},
		{"11.32 persistent custom counts as fixed", "[agent]\n[context.regions]\np = { kind = \"custom\", script = \"s.rhai\", persistent = true, max_tokens = 95000 }\nt = { max_tokens = 5000 }\n", 100000, "working-room", ""},
		{"11.33 95% pinned is refused", "[agent]\n[context.regions]\np = { kind = \"pinned\", budget = \"95%\" }\n", 100000, "working-room", ""},
		{"working room not enforced below 20,000", "[agent]\n[context.regions]\np = { kind = \"pinned\", budget = \"95%\" }\n", 10000, "", ""},
		{"checklist gate on a non-checklist region is refused", "[agent]\n[context.regions]\nnotes = {}\n[stages.a.transitions.b]\ngate = { require_no_open_items = \"notes\" }\n[stages.b]\n", 100000, "gate-not-checklist", ""},
		{"gate naming an unknown region is refused", "[agent]\n[context.regions]\nnotes = {}\n[stages.a.transitions.b]\ngate = { require_no_open_items = \"todos\" }\n[stages.b]\n", 100000, "gate-unknown-region", ""},
		{"checklist gate accepted", "[agent]\n[context.regions]\ntodos = { kind = \"checklist\" }\n[stages.a.transitions.b]\ngate = { require_no_open_items = \"todos\" }\n[stages.b]\n", 100000, "", ""},
		{"routing into a region the stage cannot see", "[agent]\n[context.regions]\ncodebase = {}\n[stages.a.context.regions]\nnotes = {}\n[stages.a.tool_routing]\ndefault_region = \"codebase\"\n", 100000, "routing-invisible-region", ""},
		{"routing to always-visible regions", "[agent]\n[context.regions]\nnotes = {}\n[stages.a.context.regions]\nnotes = {}\n[stages.a.tool_routing]\ndefault_region = \"tool_results\"\n[stages.a.tool_routing.overrides]\nx = \"conversation\"\n", 100000, "", ""},
		{"D6 max_entries = 0 is a validation error", "[agent]\n[context.regions]\nfiles = { kind = \"hashmap\", max_entries = 0 }\n", 100000, "max-entries-zero", ""},
		{"D8 unknown region key is a lint naming the nearest key", "[agent]\n[context.regions]\nconv = { kind = \"sliding_window\", max_iterms = 3 }\n", 100000, "", "unknown-region-key"},
		{"seed not understood", "[agent]\n[context.regions]\nbrief = { seed = { caller_input = \"brief\" } }\n", 100000, "", "region-seed-not-understood"},
		{"command seed is listed", "[agent]\n[context.regions]\nenv = { seed = { command = \"git log\" } }\n", 100000, "", "command-seed"},
		{"unbounded percentage on a 1M window", "[agent]\n[context.regions]\nsources = { budget = \"30%\" }\n", 1_048_576, "", "unbounded-percentage-budget"},
		{"unknown stage key is a lint", "[agent]\n[stages.a]\ntool_routng = { default_region = \"x\" }\n", 100000, "", "unknown-stage-key"},
		{"eviction_order names an unknown region", "[agent]\n[context]\neviction_order = [\"ghost\"]\n[context.regions]\nnotes = {}\n", 100000, "eviction-order-unknown-region", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "s.rhai"), []byte("fn render(ctx) { \"\" }"), 0o644)
			bp, err := ParseBlueprint("t.leviath", []byte(c.src), dir)
			if err != nil {
				t.Fatal(err)
			}
			rep := bp.Validate(c.window)
			got := codes(rep)
			if c.wantErr == "" && len(got) > 0 {
				t.Fatalf("unexpected errors %v", rep.Errors)
			}
			if c.wantErr != "" && !slices.Contains(got, c.wantErr) {
				t.Fatalf("errors %v, want %s", rep.Errors, c.wantErr)
			}
			if c.wantLint != "" {
				found := false
				for _, l := range rep.Lints {
					found = found || l.Code == c.wantLint
				}
				if !found {
					t.Fatalf("lints %v, want %s", rep.Lints, c.wantLint)
				}
			}
		})
	}
	t.Run("D8 lint names the key and the nearest valid key", func(t *testing.T) {
		bp := mustParse(t, "[agent]\n[context.regions]\nconv = { kind = \"sliding_window\", max_iterms = 3 }\n")
		rep := bp.Validate(100000)
		if len(rep.Lints) != 1 || !strings.Contains(rep.Lints[0].Message, "'max_iterms'") || !strings.Contains(rep.Lints[0].Message, "'max_items'") {
			t.Fatalf("%v", rep.Lints)
		}
	})
	t.Run("11.34 no regions gives the default layout", func(t *testing.T) {
		bp := mustParse(t, "[agent]\n")
		regs, _ := bp.Regions("", 100000)
		if len(regs) != 2 || regs[0].Name != "system" || regs[0].Kind != KindPinned || regs[1].Kind != KindSlidingWindow || regs[1].Def.MaxItems != 10 {
			t.Fatalf("%+v", regs)
		}
	})
	t.Run("implicit task_input seed of a region named task", func(t *testing.T) {
		bp := mustParse(t, "[agent]\n[context.regions]\ntask = { kind = \"pinned\" }\n")
		if s := bp.RegionDefs[0].Seed; s == nil || s.Form != SeedCaller || s.Caller != "task" {
			t.Fatalf("%+v", s)
		}
	})
}

// Window cascade (11.35–11.44, D1, D5).
func TestCascade(t *testing.T) {
	t.Run("11.35 a clearable region is cleared whole", func(t *testing.T) {
		c := newCtx(t, "scratch = { kind = \"clearable\", max_tokens = 5000 }\n", Options{Window: 10000})
		mustWrite(t, c, "scratch", text("a", 1000))
		mustWrite(t, c, "scratch", text("b", 1000))
		c.evict(1000)
		if c.Tokens() != 0 {
			t.Fatal(c.Tokens())
		}
	})
	t.Run("11.36 temporary loses only its oldest entry", func(t *testing.T) {
		c := newCtx(t, "t = { max_tokens = 5000 }\n", Options{Window: 10000})
		for _, s := range []string{"old", "middle", "new"} {
			mustWrite(t, c, "t", text(s, 1000))
		}
		c.evict(500)
		if got := contents(c, "t"); !slices.Equal(got, []string{"middle", "new"}) {
			t.Fatal(got)
		}
	})
	t.Run("11.37 clearable goes first and the cascade stops there", func(t *testing.T) {
		c := newCtx(t, "scratch = { kind = \"clearable\", max_tokens = 5000 }\nt = { max_tokens = 5000 }\n", Options{Window: 10000})
		mustWrite(t, c, "scratch", text("s", 1000))
		mustWrite(t, c, "t", text("a", 1000))
		mustWrite(t, c, "t", text("b", 1000))
		c.evict(500)
		if len(c.byName["scratch"].entries) != 0 || len(c.byName["t"].entries) != 2 {
			t.Fatal("wrong region evicted")
		}
	})
	t.Run("11.38 several clearables until the target is met", func(t *testing.T) {
		c := newCtx(t, "a = { kind = \"clearable\", max_tokens = 5000 }\nb = { kind = \"clearable\", max_tokens = 5000 }\n", Options{Window: 2000})
		mustWrite(t, c, "a", text("a", 500))
		mustWrite(t, c, "b", text("b", 1000))
		c.evict(1400)
		if c.Tokens() != 0 {
			t.Fatal(c.Tokens())
		}
	})
	t.Run("11.39 a compacting region over its threshold is summarised", func(t *testing.T) {
		c := newCtx(t, "impl = { kind = \"compacting\", max_tokens = 1000, threshold_tokens = 500 }\n", Options{Window: 1000})
		mustWrite(t, c, "impl", strings.Repeat("the handler returns error E42 for path /v1/users\n", 48))
		before := c.Tokens()
		c.evict(500)
		got := contents(c, "impl")
		if c.Tokens() >= before || len(got) != 1 || !strings.HasPrefix(got[0], "[summary of impl]") {
			t.Fatalf("%d -> %d, %q", before, c.Tokens(), got)
		}
	})
	t.Run("11.41 pinned over the window is a warning, not a failure", func(t *testing.T) {
		c := newCtx(t, "p = { kind = \"pinned\", max_tokens = 2000 }\n", Options{Window: 1000})
		mustWrite(t, c, "p", text("p", 1500))
		c.Drain()
		c.Assemble()
		found := false
		for _, e := range c.Drain() {
			found = found || (e.Kind == EventWarning && strings.Contains(e.Message, "Pinned regions (1500) exceed total budget (1000)"))
		}
		if !found || len(c.byName["p"].entries) != 1 {
			t.Fatal("no pinned warning")
		}
	})
	t.Run("11.42 sliding windows and pinned regions are never touched", func(t *testing.T) {
		c := newCtx(t, "p = { kind = \"pinned\", max_tokens = 5000 }\nconversation = { kind = \"sliding_window\", max_tokens = 5000 }\n", Options{Window: 4000})
		mustWrite(t, c, "p", text("p", 2000))
		mustWrite(t, c, "conversation", text("c", 1900))
		c.evict(3000)
		if c.Tokens() != 3900 {
			t.Fatal(c.Tokens())
		}
	})
	t.Run("D1 the cascade runs without a [compaction] table", func(t *testing.T) {
		c := newCtx(t, "scratch = { kind = \"clearable\", max_tokens = 5000 }\nt = { max_tokens = 5000 }\n", Options{Window: 10000})
		if c.bp.HasCompaction {
			t.Fatal("fixture has [compaction]")
		}
		mustWrite(t, c, "scratch", text("s", 4600))
		mustWrite(t, c, "t", text("t", 4500))
		c.Assemble() // 91% used: the trigger fires
		if len(c.byName["scratch"].entries) != 0 || c.byName["t"].tokens != 4500 {
			t.Fatal("cascade did not run")
		}
	})
	t.Run("D1 the trigger is configurable", func(t *testing.T) {
		c := newCtx(t, "scratch = { kind = \"clearable\", max_tokens = 5000 }\n", Options{Window: 10000, EvictAt: 0.5, EvictFree: 0.6})
		mustWrite(t, c, "scratch", text("s", 4000))
		c.Assemble()
		if c.Tokens() != 4000 {
			t.Fatal("fired below the trigger")
		}
		mustWrite(t, c, "scratch", text("s", 1000))
		c.Assemble()
		if c.Tokens() != 0 {
			t.Fatal("did not fire at the trigger")
		}
	})
	t.Run("D5 eviction_order decides which region goes first", func(t *testing.T) {
		src := "[context]\neviction_order = [\"t\", \"scratch\"]\n[context.regions]\nscratch = { kind = \"clearable\", max_tokens = 5000 }\nt = { max_tokens = 5000 }\n"
		bp := mustParse(t, "[agent]\n"+src)
		c, err := New(bp, Options{Window: 10000})
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, c, "scratch", text("s", 1000))
		mustWrite(t, c, "t", text("a", 1000))
		c.evict(9000)
		if len(c.byName["scratch"].entries) != 1 || len(c.byName["t"].entries) != 0 {
			t.Fatal("eviction_order ignored")
		}
	})
	t.Run("reject regions are exempt from the cascade", func(t *testing.T) {
		c := newCtx(t, "t = { max_tokens = 5000, admission = \"reject\" }\n", Options{Window: 10000})
		mustWrite(t, c, "t", text("a", 1000))
		c.evict(9500)
		if c.Tokens() != 1000 {
			t.Fatal("reject region evicted")
		}
	})
}

// newCustomCtx builds a window with one custom region backed by a fake script.
func newCustomCtx(t *testing.T, region string, s *fakeScript, opt Options) *Context {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "brain.rhai"), []byte("fn render(ctx) {}"), 0o644); err != nil {
		t.Fatal(err)
	}
	bp, err := ParseBlueprint("t.leviath", []byte("[agent]\n[context.regions]\n"+region), dir)
	if err != nil {
		t.Fatal(err)
	}
	opt.Scripts = fakeScripts{map[string]*fakeScript{"brain.rhai": s}}
	if opt.Window == 0 {
		opt.Window = 100
	}
	c, err := New(bp, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCustomRegions(t *testing.T) {
	const decl = "brain = { kind = \"custom\", script = \"brain.rhai\", max_tokens = 100 }\n"
	dropSuccesses := func(ctx ScriptContext) ([]int, error) {
		var out []int
		for i, e := range ctx.Entries {
			if !strings.Contains(e.Content, "ERROR") {
				out = append(out, i)
			}
		}
		return out, nil
	}
	t.Run("11.43 on_overflow chooses what the cascade drops", func(t *testing.T) {
		s := &fakeScript{hooks: map[string]int{"render": 1, "on_overflow": 1}, onOverflow: dropSuccesses}
		c := newCustomCtx(t, decl, s, Options{Window: 100, EvictAt: 1})
		for _, x := range []string{"ok one", "ERROR two", "ok three"} {
			mustWrite(t, c, "brain", text(x, 30))
		}
		c.evict(40)
		if got := contents(c, "brain"); !slices.Equal(got, []string{"ERROR two"}) {
			t.Fatal(got)
		}
	})
	t.Run("11.44 on_overflow at write time frees room", func(t *testing.T) {
		s := &fakeScript{hooks: map[string]int{"render": 1, "on_overflow": 1}, onOverflow: func(ScriptContext) ([]int, error) { return []int{0}, nil }}
		c := newCustomCtx(t, decl, s, Options{Window: 1000})
		mustWrite(t, c, "brain", text("first", 90))
		mustWrite(t, c, "brain", text("next", 20))
		if got := contents(c, "brain"); !slices.Equal(got, []string{"next"}) || c.Tokens() != 20 {
			t.Fatal(got)
		}
	})
	t.Run("seed 001 on_overflow shortfall is made up oldest-first", func(t *testing.T) {
		s := &fakeScript{hooks: map[string]int{"render": 1, "on_overflow": 1}, onOverflow: func(ScriptContext) ([]int, error) { return nil, nil }}
		c := newCustomCtx(t, decl, s, Options{Window: 1000})
		mustWrite(t, c, "brain", text("first", 90))
		mustWrite(t, c, "brain", text("next", 50))
		if got := contents(c, "brain"); !slices.Equal(got, []string{"next"}) {
			t.Fatal(got)
		}
	})
	t.Run("seed 001 on_overflow error warns and evicts oldest-first", func(t *testing.T) {
		s := &fakeScript{hooks: map[string]int{"render": 1, "on_overflow": 1}, onOverflow: func(ScriptContext) ([]int, error) { return []int{7}, nil }}
		c := newCustomCtx(t, decl, s, Options{Window: 1000})
		mustWrite(t, c, "brain", text("first", 90))
		mustWrite(t, c, "brain", text("next", 50))
		warned := false
		for _, e := range c.Drain() {
			warned = warned || (e.Kind == EventWarning && strings.Contains(e.Message, "invalid indices"))
		}
		if got := contents(c, "brain"); !warned || !slices.Equal(got, []string{"next"}) {
			t.Fatal(got, warned)
		}
	})
	t.Run("seed 001 on_write replaces, drops, or fails open", func(t *testing.T) {
		s := &fakeScript{hooks: map[string]int{"render": 1, "on_write": 1}, onWrite: func(_ ScriptContext, e ScriptEntry) (*ScriptEntry, bool, error) {
			switch {
			case strings.HasPrefix(e.Content, "noisy"):
				return &ScriptEntry{Content: "head"}, true, nil
			case strings.HasPrefix(e.Content, "drop"):
				return nil, false, nil
			case strings.HasPrefix(e.Content, "boom"):
				return nil, false, errors.New("script error")
			}
			return nil, true, nil
		}}
		c := newCustomCtx(t, decl, s, Options{Window: 1000})
		for _, x := range []string{"noisy\nlines", "drop me", "boom", "plain"} {
			mustWrite(t, c, "brain", x)
		}
		if got := contents(c, "brain"); !slices.Equal(got, []string{"head", "boom", "plain"}) {
			t.Fatal(got)
		}
	})
	t.Run("seed 001 render error falls back to a plain block", func(t *testing.T) {
		s := &fakeScript{hooks: map[string]int{"render": 1}, render: func(ScriptContext) (ScriptRender, error) { return ScriptRender{}, errors.New("bad shape") }}
		c := newCustomCtx(t, decl, s, Options{Window: 1000})
		mustWrite(t, c, "brain", "fact")
		req := c.Assemble()
		if len(req.System) != 1 || req.System[0].Text != "[brain]:\nfact" || req.System[0].Cache != CacheNever {
			t.Fatalf("%+v", req.System)
		}
	})
	t.Run("render emits system blocks and preamble messages", func(t *testing.T) {
		s := &fakeScript{hooks: map[string]int{"render": 1}, render: func(ctx ScriptContext) (ScriptRender, error) {
			return ScriptRender{System: []string{"<brain>"}, Messages: []ScriptMessage{{Role: "user", Content: "<context>" + ctx.Entries[0].Content + "</context>"}}}, nil
		}}
		c := newCustomCtx(t, "brain = { kind = \"custom\", script = \"brain.rhai\", persistent = true, max_tokens = 100 }\n", s, Options{Window: 1000})
		mustWrite(t, c, "brain", "fact")
		c.AddUser("hello")
		req := c.Assemble()
		if req.System[0].Text != "<brain>" || req.System[0].Cache != CacheAlways || req.Messages[0].Blocks[0].Text != "<context>fact</context>" || req.Messages[1].Blocks[0].Text != "hello" {
			t.Fatalf("%+v %+v", req.System, req.Messages)
		}
	})
	t.Run("load errors: no render, wrong arity, no engine", func(t *testing.T) {
		for name, s := range map[string]*fakeScript{
			"script must define fn render(ctx)":                                {hooks: map[string]int{}},
			"fn render must take exactly one parameter (ctx), found 2":         {hooks: map[string]int{"render": 2}},
			"fn on_write must take exactly one parameter (ctx), found 0":       {hooks: map[string]int{"render": 1, "on_write": 0}},
			"custom region script failed to compile: brain.rhai: syntax error": nil,
		} {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "brain.rhai"), []byte("x"), 0o644)
			bp, err := ParseBlueprint("t.leviath", []byte("[agent]\n[context.regions]\n"+decl), dir)
			if err != nil {
				t.Fatal(err)
			}
			scripts := map[string]*fakeScript{}
			if s != nil {
				scripts["brain.rhai"] = s
			}
			_, err = New(bp, Options{Window: 1000, Scripts: fakeScripts{scripts}})
			if err == nil || !strings.Contains(err.Error(), name) || !strings.HasPrefix(err.Error(), "region 'brain': ") {
				t.Errorf("%s: got %v", name, err)
			}
			if _, err := New(bp, Options{Window: 1000}); err == nil {
				t.Error("custom region without a script engine accepted")
			}
		}
	})
}

func TestPerStageResolution(t *testing.T) {
	src := "[agent]\n[context.regions]\ncode = { kind = \"compacting\", budget = \"20%\" }\nfacts = { kind = \"pinned\", budget = \"50%\" }\n[stages.plan]\n[stages.build.context.regions]\nfacts = { kind = \"pinned\", budget = \"99.5%\" }\nwork = { budget = \"5%\" }\n"
	bp := mustParse(t, src)
	windows := map[string]int{"plan": 200_000, "build": 1_000_000}
	t.Run("Resolved makes every budget absolute and keeps thresholds", func(t *testing.T) {
		rb := bp.Resolved(200_000)
		regs, _ := rb.Regions("", 8192) // the window no longer matters
		if regs[0].MaxTokens != 40_000 || regs[0].ThresholdTokens != 32_000 || rb.RegionDefs[0].Budget.Percent {
			t.Fatalf("%+v", regs[0])
		}
		again, _ := rb.Resolved(50).Regions("", 50)
		if again[0].MaxTokens != 40_000 || again[0].ThresholdTokens != 32_000 {
			t.Fatal("resolving twice changed the numbers")
		}
	})
	t.Run("each stage layout resolves against its own window", func(t *testing.T) {
		rb := bp.ResolvedStages(func(s string) int { return windows[s] })
		g, _ := rb.Regions("", 0)
		st, _ := rb.Regions("build", 0)
		if g[1].MaxTokens != 100_000 || st[0].MaxTokens != 995_000 || st[1].MaxTokens != 50_000 {
			t.Fatalf("%+v %+v", g, st)
		}
	})
	t.Run("working room is judged per stage window", func(t *testing.T) {
		rep := bp.ValidateStages(func(s string) int { return windows[s] })
		if len(rep.Errors) != 1 || !strings.HasPrefix(rep.Errors[0].Message, "stage 'build': Invalid layout: context layout leaves only 5000 working tokens") {
			t.Fatalf("%v", rep.Errors)
		}
	})
}
