package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// FuzzParseBlueprint: the loader, validation and New never panic, and every
// load error names the file. Its seeds are kilobytes long, so run it with a
// short minimisation: go test -fuzz FuzzParseBlueprint -fuzzminimizetime 1s
func FuzzParseBlueprint(f *testing.F) {
	// The real blueprints' region and routing tables (whole files are 20-40 KB,
	// which slows the mutator to a crawl; TestRealBlueprintsLoadAndValidate
	// covers them whole).
	for _, p := range realBlueprintPaths(f) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		s := string(data)
		if i := strings.Index(s, "[context.regions]"); i >= 0 {
			f.Add([]byte("[agent]\n" + s[i:]))
		}
	}
	for _, s := range []string{
		"[agent]\n",
		"[agent]\n[context.regions]\ntask = { kind = \"pinned\", budget = \"2%\", min_tokens = 100 }\nconv = { kind = \"sliding_window\", strategy = \"compact\", compact_count = 1, max_items = 2 }\n",
		"[agent]\n[context.regions]\nc = { kind = \"compacting\", budget = \"1e1%\", compact_at = \"50%\" }\nh = { kind = \"compact_history\", source_region = \"c\" }\n",
		"[agent]\n[context]\neviction_order = [\"x\"]\n[context.regions]\nx = { kind = \"hash_map\", max_entries = 0 }\n",
		"[agent]\nentry_stage = \"b\"\n[stages.a.transitions.b]\ngate = { require_no_open_items = \"t\" }\n[stages.b.context.regions]\nt = { kind = \"checklist\" }\n",
		"[agent]\n[stages.a.tool_routing.overrides]\nx = { region = \"y\", max_result_tokens = 3 }\n",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		bp, err := ParseBlueprint("fuzz.leviath", data, dir)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.leviath") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, w := range []int{8192, 200_000} {
			bp.Validate(w)
			if _, err := bp.Regions("", w); err != nil {
				t.Fatal(err)
			}
			for _, s := range bp.Stages() {
				if _, err := bp.Regions(s, w); err != nil {
					t.Fatal(err)
				}
			}
		}
		c, err := New(bp, Options{Window: 200_000})
		if err != nil {
			return
		}
		c.AddUser("hello")
		c.Assemble()
		if err := c.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
	})
}

// fuzzLayout has every kind, small budgets, and two stages.
const fuzzLayout = `[agent]
[context.regions]
task = { kind = "pinned", max_tokens = 60 }
notes = { kind = "temporary", max_tokens = 80 }
sources = { kind = "temporary", max_tokens = 80, admission = "reject" }
scratch = { kind = "clearable", max_tokens = 60 }
code = { kind = "compacting", max_tokens = 120, threshold_tokens = 90, volatility = "grows" }
hist = { kind = "compact_history", source_region = "code", max_tokens = 40 }
files = { kind = "hashmap", max_tokens = 70, max_entries = 3 }
todos = { kind = "checklist", max_tokens = 50 }
decisions = { kind = "sliding_window", max_items = 3, strategy = "compact", compact_count = 2, max_tokens = 90 }
conversation = { kind = "sliding_window", max_items = 6, strategy = "bulk", overflow = 2, max_tokens = 200 }
[stages.a]
system_prompt = "Work."
[stages.a.tool_routing]
default_region = "conversation"
[stages.a.tool_routing.overrides]
read_file = "code"
bash = "scratch"
grep = "notes"
[stages.a.transitions.b]
transform = "compact"
gate = { require_no_open_items = "todos", max_attempts = 1 }
[stages.b]
system_prompt = "Check."
[stages.b.context.regions]
notes = { kind = "temporary", max_tokens = 30 }
conversation = { kind = "sliding_window", max_items = 4, max_tokens = 150 }
[stages.b.transitions.a]
transform = "clear"
`

// FuzzOperations runs random operation sequences and checks the invariants
// after each one: no region over budget after a successful write, pinned
// content never evicted, token sums consistent.
func FuzzOperations(f *testing.F) {
	f.Add([]byte{0, 10, 1, 20, 2, 30, 3, 40, 4, 50, 5, 60, 6, 70, 7, 80, 8, 90, 9, 100, 10, 110, 11, 120})
	f.Add([]byte("a sequence of operations that is long enough to exercise eviction, compaction and stages"))
	f.Add([]byte{2, 255, 2, 255, 2, 255, 2, 255, 12, 0, 12, 0, 9, 3, 9, 4})
	bp, err := ParseBlueprint("fuzz.leviath", []byte(fuzzLayout), f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	regions := []string{"task", "notes", "sources", "scratch", "code", "hist", "files", "todos", "decisions", "conversation"}
	tools := []string{"read_file", "bash", "grep", "web_fetch"}
	f.Fuzz(func(t *testing.T, ops []byte) {
		c, err := New(bp, Options{Window: 1000, Task: "the task"})
		if err != nil {
			t.Fatal(err)
		}
		var pending []ToolCall
		var prev *Request // the last request, when the assembler has not been reset since
		callN := 0
		for i := 0; i+1 < len(ops) && i < 400; i += 2 {
			op, arg := ops[i]%14, int(ops[i+1])
			reg := regions[arg%len(regions)]
			size := 1 + arg*3
			body := fmt.Sprintf("item %d %s", i, strings.Repeat("x", size))
			pinnedBefore := c.byName["task"].tokens
			touchesPinned := false
			switch op {
			case 0:
				c.AddUser(body)
			case 1:
				callN++
				tc := ToolCall{ID: fmt.Sprint("c", callN), Name: tools[arg%len(tools)], Args: json.RawMessage(`{"path":"f.go"}`)}
				pending = append(pending, tc)
				c.AddAssistant("calling", []ToolCall{tc})
			case 2:
				if len(pending) > 0 {
					tc := pending[0]
					pending = pending[1:]
					c.AddToolResult(ToolResult{CallID: tc.ID, Tool: tc.Name, Content: body})
				}
			case 3:
				c.Write(reg, body)
			case 4:
				touchesPinned = reg == "task"
				args, _ := json.Marshal(map[string]string{"region": reg, "content": body, "key": fmt.Sprint("k", arg%4)})
				c.CallTool("context_write", args)
			case 5:
				args, _ := json.Marshal(map[string]string{"region": reg, "content": body, "key": fmt.Sprint("k", arg%4)})
				c.CallTool("context_append", args)
			case 6:
				touchesPinned = reg == "task"
				args, _ := json.Marshal(map[string]any{"region": reg, "oldest": arg % 3})
				c.CallTool("context_delete", args)
			case 7:
				args, _ := json.Marshal(map[string]string{"region": "todos", "item": body[:min(len(body), 20)]})
				c.CallTool("todo_add", args)
			case 8:
				args, _ := json.Marshal(map[string]any{"region": "todos", "id": arg % 5})
				c.CallTool("todo_done", args)
			case 9:
				next := "b"
				if c.Stage() == "b" {
					next = "a"
				}
				c.Transition(next)
			case 10:
				req := c.Assemble().Clone()
				if _, _, err := checkSame(prev, req); err != nil {
					t.Fatalf("after op %d: %v", i/2, err)
				}
				prev = req
			case 11:
				if err := sameAsFresh(c, c.Assemble()); err != nil {
					t.Fatalf("after op %d: %v", i/2, err)
				}
				prev = nil // sameAsFresh reset the assembler
			case 12:
				c.evict(arg * 4)
			case 13:
				c.CallTool("context_list", nil)
			}
			if err := c.CheckInvariants(); err != nil {
				t.Fatalf("after op %d (%d, %d): %v", i/2, op, arg, err)
			}
			if !touchesPinned && c.byName["task"].tokens < pinnedBefore {
				t.Fatalf("after op %d (%d, %d): pinned task lost content", i/2, op, arg)
			}
		}
		req := c.Assemble()
		if err := sameAsFresh(c, req); err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, b := range req.System {
			sum += b.Tokens
		}
		for _, m := range req.Messages {
			sum += m.Tokens()
		}
		if sum != req.Tokens {
			t.Fatalf("request says %d tokens, blocks sum to %d", req.Tokens, sum)
		}
	})
}

// sameAsFresh re-renders every region from scratch and compares: the
// incremental caches must give exactly what a full render gives.
func sameAsFresh(c *Context, req *Request) error {
	fresh := assembleAfresh(c)
	if len(fresh.System) != len(req.System) || len(fresh.Messages) != len(req.Messages) {
		return fmt.Errorf("incremental request has %d blocks and %d messages, fresh has %d and %d", len(req.System), len(req.Messages), len(fresh.System), len(fresh.Messages))
	}
	for i := range req.System {
		a, b := req.System[i], fresh.System[i]
		if a.Text != b.Text || a.Hash != b.Hash || a.Tokens != b.Tokens || a.Cache != b.Cache {
			return fmt.Errorf("system block %d (%s) differs from a fresh render", i, a.Region)
		}
	}
	for i := range req.Messages {
		if len(req.Messages[i].Blocks) != len(fresh.Messages[i].Blocks) {
			return fmt.Errorf("message %d differs from a fresh render", i)
		}
		for j := range req.Messages[i].Blocks {
			if req.Messages[i].Blocks[j].Hash != fresh.Messages[i].Blocks[j].Hash {
				return fmt.Errorf("message %d block %d differs from a fresh render", i, j)
			}
		}
	}
	return nil
}

// assembleAfresh drops every cache of c's rendering and assembly, and
// assembles c's request from scratch.
func assembleAfresh(c *Context) *Request {
	for _, r := range c.regions {
		r.rend = rendered{}
		for _, e := range r.entries {
			e.msg = nil
		}
	}
	c.asm = assembler{}
	return c.Assemble()
}
