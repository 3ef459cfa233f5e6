package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// grows regions are cut into chunks of about CacheChunkTokens and an open
// last chunk is extended in place, and a sliding window keeps the messages
// before its first change: whatever the writes, deletions, compactions and
// turns, each request is what a full render gives, and a request already
// returned never changes.
func TestGrowsChunksIncremental(t *testing.T) {
	const layout = `[agent]
[context.regions]
task = { kind = "pinned", max_tokens = 100 }
notes = { kind = "pinned", max_tokens = 30000, volatility = "grows" }
code = { kind = "compacting", max_tokens = 30000, threshold_tokens = 20000, volatility = "grows" }
hist = { kind = "compact_history", source_region = "code", max_tokens = 3000 }
conversation = { kind = "sliding_window", max_items = 10, max_tokens = 20000 }
`
	bp, err := ParseBlueprint("grows.leviath", []byte(layout), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 9))
			c, err := New(bp, Options{Window: 200_000, Task: "the task"})
			if err != nil {
				t.Fatal(err)
			}
			type snap struct {
				text string
				hash uint64
			}
			var prev *Request
			var pending []string // tool calls awaiting results
			var prevSnap []snap
			for i := range 300 {
				reg := []string{"notes", "code"}[rng.IntN(2)]
				size := 40 + rng.IntN(6000)
				body := fmt.Sprintf("entry %d of %s\n%s", i, reg, strings.Repeat("y", size))
				switch n := rng.IntN(26); {
				case n >= 20:
					// The conversation: replies with tool calls, their
					// results (merged into one user message), user turns.
					switch n {
					case 20, 21:
						pending = append(pending, fmt.Sprint("c", i))
						c.AddAssistant("calling", []ToolCall{{ID: pending[len(pending)-1], Name: "bash", Args: json.RawMessage(`{}`)}})
					case 22, 23, 24:
						if len(pending) > 0 {
							c.AddToolResult(ToolResult{CallID: pending[0], Tool: "bash", Content: body[:min(len(body), 200)]})
							pending = pending[1:]
						}
					default:
						c.AddUser(body[:min(len(body), 100)])
					}
				case n < 16:
					_ = c.Write(reg, body) // a full pinned region refuses: fine
				case n < 18:
					args, _ := json.Marshal(map[string]any{"region": reg, "oldest": 1 + rng.IntN(3)})
					c.CallTool("context_delete", args)
				default:
					c.Assemble()
					prevSnap = nil // prev is valid until the next-but-one Assemble only
				}
				if rng.IntN(3) == 0 {
					continue // several writes between requests
				}
				req := c.Assemble()
				for j, s := range prevSnap {
					if b := prevBlock(prev, j); b.Text != s.text || b.Hash != s.hash {
						t.Fatalf("op %d: an earlier request's block %d changed", i, j)
					}
				}
				prev, prevSnap = req, nil
				for j := 0; prevBlock(req, j) != nil; j++ {
					b := prevBlock(req, j)
					prevSnap = append(prevSnap, snap{strings.Clone(b.Text), b.Hash})
				}
				// sameAsFresh drops the caches: compare on a copy of the
				// request, then carry on from the fresh state half the time.
				if rng.IntN(2) == 0 {
					if err := sameAsFresh(c, req); err != nil {
						t.Fatalf("op %d: %v", i, err)
					}
				}
			}
		})
	}
}

// prevBlock is a request's block j, counting system blocks then the blocks
// of each message; nil past the end.
func prevBlock(req *Request, j int) *Block {
	if j < len(req.System) {
		return &req.System[j]
	}
	j -= len(req.System)
	for i := range req.Messages {
		if j < len(req.Messages[i].Blocks) {
			return &req.Messages[i].Blocks[j]
		}
		j -= len(req.Messages[i].Blocks)
	}
	return nil
}

// pairedLocally is a shortcut for stripOrphans: whenever it holds,
// stripping would change nothing.
func TestPairedLocallyImpliesNoOrphans(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	var paired, unpaired int
	for n := range 2000 {
		var msgs []Message
		var calls []string // the previous message's tool calls
		for i := range 1 + rng.IntN(8) {
			m := Message{Role: RoleUser}
			if i%2 == 0 {
				m.Role = RoleAssistant
			}
			if rng.IntN(2) == 0 {
				m.Blocks = append(m.Blocks, Block{Type: BlockText, Text: "x"})
			}
			var next []string
			if m.Role == RoleAssistant {
				for k := range rng.IntN(3) {
					id := fmt.Sprint("c", i, "_", k)
					next = append(next, id)
					m.Blocks = append(m.Blocks, Block{Type: BlockToolUse, ToolCallID: id})
				}
			} else {
				for _, id := range calls {
					if rng.IntN(10) > 0 { // now and then a call's result is missing
						m.Blocks = append(m.Blocks, Block{Type: BlockToolResult, ToolCallID: id})
					}
				}
			}
			if rng.IntN(10) == 0 { // a stray block, paired or not elsewhere
				typ := []BlockType{BlockToolUse, BlockToolResult}[rng.IntN(2)]
				m.Blocks = append(m.Blocks, Block{Type: typ, ToolCallID: fmt.Sprint("c", rng.IntN(8), "_0")})
			}
			calls = next
			msgs = append(msgs, m)
		}
		if !pairedLocally(msgs) {
			unpaired++
			continue
		}
		paired++
		var a assembler
		got := a.stripOrphans(append([]Message(nil), msgs...))
		if len(got) != len(msgs) {
			t.Fatalf("case %d: paired locally, yet stripping left %d of %d messages", n, len(got), len(msgs))
		}
		for i := range got {
			if len(got[i].Blocks) != len(msgs[i].Blocks) {
				t.Fatalf("case %d: paired locally, yet stripping changed message %d", n, i)
			}
		}
	}
	if paired < 50 || unpaired < 50 {
		t.Fatalf("generator covers too little: %d paired, %d unpaired", paired, unpaired)
	}
}

// A one-block region that rolls off its oldest entries keeps the rest of
// its last text instead of joining every entry again, and a grows region
// keeps its chunks from where the new cuts meet an old one: with appends, front
// evictions, deletions and clears between requests, each request is what a
// full render gives, and a request already returned never changes.
func TestRollingRegionIncremental(t *testing.T) {
	const layout = `[agent]
[context.regions]
task = { kind = "pinned", max_tokens = 100 }
scratch = { kind = "clearable", max_tokens = 2000 }
results = { kind = "temporary", max_tokens = 1500, volatility = "rewritten" }
log = { kind = "clearable", max_tokens = 12000, volatility = "grows" }
`
	bp, err := ParseBlueprint("rolling.leviath", []byte(layout), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			c, err := New(bp, Options{Window: 100_000, Task: "the task"})
			if err != nil {
				t.Fatal(err)
			}
			var prev *Request
			var prevText []string
			for i := range 400 {
				reg := []string{"scratch", "results", "log", "log"}[rng.IntN(4)]
				switch n := rng.IntN(40); {
				case n == 0:
					args, _ := json.Marshal(map[string]any{"region": reg, "oldest": 1 + rng.IntN(3)})
					c.CallTool("context_delete", args)
				case n == 1:
					args, _ := json.Marshal(map[string]any{"region": reg, "index": rng.IntN(4)})
					c.CallTool("context_delete", args)
				case n == 2:
					args, _ := json.Marshal(map[string]any{"region": reg, "content": "reset"})
					c.CallTool("context_write", args)
				default:
					_ = c.Write(reg, fmt.Sprintf("entry %d\n%s", i, strings.Repeat("z", rng.IntN([]int{40, 400, 2000, 12000}[rng.IntN(4)]))))
				}
				if rng.IntN(3) == 0 {
					continue // several writes between requests
				}
				req := c.Assemble()
				for j, s := range prevText {
					if prev.System[j].Text != s {
						t.Fatalf("op %d: an earlier request's block %d changed", i, j)
					}
				}
				prev, prevText = req, nil
				for _, b := range req.System {
					prevText = append(prevText, b.Text)
				}
				if rng.IntN(2) == 0 {
					if err := sameAsFresh(c, req); err != nil {
						t.Fatalf("op %d: %v", i, err)
					}
				}
			}
		})
	}
}

// A request's slices are reused from the next-but-one Assemble on; a Clone
// stays as it was.
func TestRequestClone(t *testing.T) {
	c := newCtx(t, "notes = { kind = \"temporary\", max_tokens = 5000 }\nconv = { kind = \"sliding_window\", max_items = 10 }\n", Options{})
	mustWrite(t, c, "notes", "first")
	c.AddUser("hello")
	kept := c.Assemble().Clone()
	want := new(strings.Builder)
	kept.WriteText(want)
	for i := range 4 {
		mustWrite(t, c, "notes", fmt.Sprint("more ", i))
		c.AddAssistant(fmt.Sprint("reply ", i), nil)
		c.AddUser(fmt.Sprint("ask ", i))
		c.Assemble()
	}
	got := new(strings.Builder)
	kept.WriteText(got)
	if got.String() != want.String() {
		t.Fatalf("a cloned request changed:\n%s\nwas\n%s", got, want)
	}
}

// TestAppendCopiesEveryField guards the write-barrier-free copies: a field
// added to Block or Message must be copied when a slot already holds the same
// strings (or block slice), or requests would carry stale values.
func TestAppendCopiesEveryField(t *testing.T) {
	text, region := "same text", "same region"
	src := Block{Region: region, Text: text}
	v := reflect.ValueOf(&src).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() == reflect.String || f.Kind() == reflect.Slice {
			continue // compared, not copied over: the fast path needs them equal
		}
		f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem()
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(uint64(i + 1))
		default:
			t.Fatalf("Block.%s: kind %s not covered by this test; extend it and appendBlocks", v.Type().Field(i).Name, f.Kind())
		}
	}
	dst := make([]Block, 0, 2)
	dst = append(dst, Block{}, Block{Region: region, Text: text})[:1] // a stale slot with the same strings
	if got := appendBlocks(dst, []Block{src}, 0); !reflect.DeepEqual(got[1], src) {
		t.Errorf("appendBlocks over a slot with the same strings:\n got %+v\nwant %+v", got[1], src)
	}
	// A slot known to hold the block as a request left it is left as it
	// is, the fields finishSystem sets included.
	old := src
	old.Cache, old.Breakpoint = 0, false
	if got := appendBlocks([]Block{old}[:0], []Block{src}, 1); !reflect.DeepEqual(got[0], old) {
		t.Errorf("appendBlocks over a slot with the same block:\n got %+v\nwant %+v", got[0], old)
	}

	blocks := []Block{src}
	msg := Message{Blocks: blocks, Role: RoleAssistant, Breakpoint: true}
	if n := reflect.TypeOf(msg).NumField(); n != 3 {
		t.Fatalf("Message has %d fields: extend appendMessages and this test", n)
	}
	mdst := make([]Message, 0, 2)
	mdst = append(mdst, Message{}, Message{Blocks: blocks})[:1]
	if got := appendMessages(mdst, []Message{msg}); !reflect.DeepEqual(got[1], msg) {
		t.Errorf("appendMessages over a slot with the same blocks:\n got %+v\nwant %+v", got[1], msg)
	}
}

// Request.SameSystem and SameMessages are exactly the lengths of the runs a
// direct comparison of consecutive requests finds: over random writes,
// deletions, compactions, turns and folds of windows, a count too high
// would make a caller keep a stale block, one too low costs it work.
func TestRequestSame(t *testing.T) {
	const layout = `[agent]
[context.regions]
task = { kind = "pinned", max_tokens = 100 }
notes = { kind = "pinned", max_tokens = 30000, volatility = "grows" }
code = { kind = "compacting", max_tokens = 30000, threshold_tokens = 20000, volatility = "grows" }
hist = { kind = "compact_history", source_region = "code", max_tokens = 3000 }
keys = { kind = "hashmap", max_tokens = 2000 }
scratch = { kind = "clearable", max_tokens = 2000 }
conversation = { kind = "sliding_window", max_items = 10, max_tokens = 20000, strategy = "bulk", overflow = 4 }
decisions = { kind = "sliding_window", max_items = 3, max_tokens = 5000 }
`
	bp, err := ParseBlueprint("same.leviath", []byte(layout), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var partSys, partMsgs, dropped int
	for _, seed := range []uint64{1, 2, 3, 4} {
		rng := rand.New(rand.NewPCG(seed, 5))
		c, err := New(bp, Options{Window: 200_000, Task: "the task"})
		if err != nil {
			t.Fatal(err)
		}
		var prev *Request
		var pending []string
		for i := range 600 {
			body := fmt.Sprintf("entry %d\n%s", i, strings.Repeat("y", 40+rng.IntN([]int{100, 3000, 6000}[rng.IntN(3)])))
			switch n := rng.IntN(30); {
			case n < 3:
				pending = append(pending, fmt.Sprint("c", i))
				c.AddAssistant([]string{"", "calling"}[rng.IntN(2)], []ToolCall{{ID: pending[len(pending)-1], Name: "bash", Args: json.RawMessage(`{"n":1}`)}})
			case n < 7:
				if len(pending) > 0 {
					c.AddToolResult(ToolResult{CallID: pending[0], Tool: "bash", Content: body[:min(len(body), 300)]})
					pending = pending[1:]
				}
			case n < 9:
				c.AddUser(body[:min(len(body), 100)])
			case n < 10:
				c.AddAssistant("done", nil)
			case n < 11:
				_ = c.Write("decisions", body[:min(len(body), 80)])
			case n < 12:
				args, _ := json.Marshal(map[string]any{"region": "keys", "key": fmt.Sprint("k", rng.IntN(4)), "content": body[:50]})
				c.CallTool("context_write", args)
			case n < 14:
				_ = c.Write("scratch", body[:min(len(body), 200)])
			case n < 15:
				args, _ := json.Marshal(map[string]any{"region": []string{"notes", "code", "scratch", "conversation"}[rng.IntN(4)], "oldest": 1 + rng.IntN(3)})
				c.CallTool("context_delete", args)
			default:
				_ = c.Write([]string{"notes", "code"}[rng.IntN(2)], body)
			}
			if rng.IntN(3) == 0 {
				continue
			}
			prevHash, havePrev := c.asm.prevSysHash, c.asm.havePrev
			req := c.Assemble().Clone()
			if got, want := dumpRequest(req)+windowSums(c), freshDump(c, prevHash, havePrev); got != want {
				t.Fatalf("seed %d op %d: request differs from a fresh render:\n%s\nwant\n%s", seed, i, got, want)
			}
			wantSys, wantMsgs, err := checkSame(prev, req)
			if err != nil {
				t.Fatalf("seed %d op %d: %v", seed, i, err)
			}
			if wantSys > 0 && wantSys < len(req.System) {
				partSys++
			}
			if wantMsgs > 0 && wantMsgs < len(req.Messages) {
				partMsgs++
			}
			if req.DroppedMessages > 0 && wantMsgs > 0 {
				dropped++
			}
			prev = req
		}
	}
	t.Log(partSys, partMsgs, dropped)
	if partSys < 50 || partMsgs < 50 || dropped < 20 {
		t.Fatalf("generator covers too little: %d partly same systems, %d message lists, %d after a drop", partSys, partMsgs, dropped)
	}
}

// equalBlock is the field-by-field comparison the Same counts stand for.
func equalBlock(x, y Block) bool {
	if !bytes.Equal(x.Args, y.Args) {
		return false
	}
	x.Args, y.Args = nil, nil
	x.Cache, y.Cache, x.Breakpoint, y.Breakpoint = 0, 0, false, false
	return reflect.DeepEqual(x, y)
}

// checkSame compares req's Same counts with a direct comparison against
// prev, a clone of the request before (nil: none known, nothing checked),
// and returns the counts it found.
func checkSame(prev, req *Request) (sys, msgs int, err error) {
	if err := checkMarks(req); err != nil {
		return 0, 0, err
	}
	if prev == nil {
		return req.SameSystem, req.SameMessages, nil
	}
	for sys < min(len(prev.System), len(req.System)) && equalBlock(prev.System[sys], req.System[sys]) {
		sys++
	}
	d := req.DroppedMessages
	if d < 0 || d > len(prev.Messages) {
		return 0, 0, fmt.Errorf("%d messages dropped of %d", d, len(prev.Messages))
	}
	for ; msgs < min(len(prev.Messages)-d, len(req.Messages)); msgs++ {
		x, y := prev.Messages[d+msgs], req.Messages[msgs]
		if x.Role != y.Role || len(x.Blocks) != len(y.Blocks) || !slices.EqualFunc(x.Blocks, y.Blocks, equalBlock) {
			break
		}
	}
	if req.SameSystem != sys || req.SameMessages != msgs {
		return sys, msgs, fmt.Errorf("same system %d messages %d, want %d and %d", req.SameSystem, req.SameMessages, sys, msgs)
	}
	return sys, msgs, nil
}

// checkMarks compares req's SystemBreakpoints and FlaggedMessage with the
// flags of its blocks and messages.
func checkMarks(req *Request) error {
	want := [2]int{-1, -1}
	n := 0
	for i := range req.System {
		if req.System[i].Breakpoint {
			if n == len(want) {
				return fmt.Errorf("more than %d system breakpoints", n)
			}
			want[n] = i
			n++
		}
	}
	flagged := -1
	for i := range req.Messages {
		if req.Messages[i].Breakpoint {
			if flagged >= 0 {
				return fmt.Errorf("messages %d and %d flagged", flagged, i)
			}
			flagged = i
		}
	}
	if req.SystemBreakpoints != want || req.FlaggedMessage != flagged {
		return fmt.Errorf("system breakpoints %v, flagged message %d; want %v and %d", req.SystemBreakpoints, req.FlaggedMessage, want, flagged)
	}
	return nil
}

// dumpRequest prints every field of a request but the Same counts.
func dumpRequest(req *Request) string {
	r := *req
	r.SameSystem, r.SameMessages, r.DroppedMessages = 0, 0, 0
	return fmt.Sprintf("%+v", r)
}

// windowSums prints the sums the sliding windows keep of their messages.
func windowSums(c *Context) string {
	var b strings.Builder
	for _, r := range c.regions {
		if r.kind == KindSlidingWindow && !r.hidden {
			sums := slices.Clone(r.rend.msgInfo)
			for i := range sums {
				base := &r.rend.base
				sums[i].tokens, sums[i].users, sums[i].bad = sums[i].tokens-base.tokens, sums[i].users-base.users, sums[i].bad-base.bad
				sums[i].at -= r.rend.atOff
			}
			fmt.Fprintf(&b, "\n%s: %+v", r.name, sums)
		}
	}
	return b.String()
}

// freshDump is dumpRequest and windowSums of what a fresh assembler makes of c, which is
// left as it was, given the system hash of the request before (which the
// message breakpoint depends on).
func freshDump(c *Context, prevHash uint64, havePrev bool) string {
	type regionState struct {
		rend                                          rendered
		dirtyFrom, shifted, shiftedBytes, changedFrom int
		msgs                                          []*Message
	}
	saved := make([]regionState, len(c.regions))
	for i, r := range c.regions {
		s := &saved[i]
		s.dirtyFrom, s.shifted, s.shiftedBytes, s.changedFrom = r.dirtyFrom, r.shifted, r.shiftedBytes, r.changedFrom
		s.rend, r.rend = r.rend, rendered{}
		for _, e := range r.entries {
			s.msgs = append(s.msgs, e.msg)
			e.msg = nil
		}
	}
	asm := c.asm
	c.asm = assembler{prevSysHash: prevHash, havePrev: havePrev}
	out := dumpRequest(c.Assemble()) + windowSums(c)
	c.asm = asm
	for i, r := range c.regions {
		s := &saved[i]
		r.dirtyFrom, r.shifted, r.shiftedBytes, r.changedFrom = s.dirtyFrom, s.shifted, s.shiftedBytes, s.changedFrom
		r.rend = s.rend
		for j, e := range r.entries {
			e.msg = s.msgs[j]
		}
	}
	return out
}

// Assemble learns what changed from the regions rather than by comparing
// every region's version: over random writes and stage changes (which hide,
// show, add and reorder regions), each request is what a fresh assembler
// makes of the same state.
func TestAssembleAcrossStages(t *testing.T) {
	const layout = `[agent]
[context.regions]
task = { kind = "pinned", max_tokens = 100 }
notes = { kind = "pinned", max_tokens = 30000, volatility = "grows" }
code = { kind = "compacting", max_tokens = 30000, threshold_tokens = 20000, volatility = "grows" }
keys = { kind = "hashmap", max_tokens = 2000 }
scratch = { kind = "clearable", max_tokens = 2000 }
conversation = { kind = "sliding_window", max_items = 10, max_tokens = 20000 }
[stages.plan]
system_prompt = "plan it"
[stages.build]
system_prompt = "build it"
[stages.build.context.regions]
code = { kind = "compacting", max_tokens = 20000, threshold_tokens = 15000 }
todo = { kind = "temporary", max_tokens = 3000 }
conversation = { kind = "sliding_window", max_items = 6, max_tokens = 20000 }
[stages.review]
system_prompt = "review it"
[stages.review.context.regions]
notes = { kind = "pinned", max_tokens = 30000 }
todo = { kind = "temporary", max_tokens = 3000 }
log = { kind = "sliding_window", max_items = 4, max_tokens = 5000 }
`
	bp, err := ParseBlueprint("stages.leviath", []byte(layout), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stages, changes := 0, 0
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, 7))
		c, err := New(bp, Options{Window: 200_000, Task: "the task"})
		if err != nil {
			t.Fatal(err)
		}
		var pending []string
		for i := range 500 {
			body := fmt.Sprintf("entry %d\n%s", i, strings.Repeat("z", 40+rng.IntN(2000)))
			switch n := rng.IntN(24); {
			case n < 2:
				if err := c.EnterStage([]string{"plan", "build", "review"}[rng.IntN(3)]); err == nil {
					stages++
				}
			case n < 5:
				pending = append(pending, fmt.Sprint("c", i))
				c.AddAssistant("calling", []ToolCall{{ID: pending[len(pending)-1], Name: "bash", Args: json.RawMessage(`{"n":1}`)}})
			case n < 8:
				if len(pending) > 0 {
					c.AddToolResult(ToolResult{CallID: pending[0], Tool: "bash", Content: body[:min(len(body), 300)]})
					pending = pending[1:]
				}
			case n < 10:
				c.AddUser(body[:min(len(body), 100)])
			case n < 11:
				args, _ := json.Marshal(map[string]any{"region": "keys", "key": fmt.Sprint("k", rng.IntN(4)), "content": body[:50]})
				c.CallTool("context_write", args)
			case n < 13:
				args, _ := json.Marshal(map[string]any{"region": []string{"notes", "code", "todo", "log"}[rng.IntN(4)], "oldest": 1 + rng.IntN(3)})
				c.CallTool("context_delete", args)
			default:
				_ = c.Write([]string{"notes", "code", "scratch", "todo", "log"}[rng.IntN(5)], body)
			}
			if rng.IntN(3) == 0 {
				continue
			}
			prevHash, havePrev := c.asm.prevSysHash, c.asm.havePrev
			req := c.Assemble()
			if err := checkMarks(req); err != nil {
				t.Fatalf("seed %d op %d: %v", seed, i, err)
			}
			before := dumpRequest(req.Clone()) + windowSums(c)
			if want := freshDump(c, prevHash, havePrev); before != want {
				t.Fatalf("seed %d op %d: request differs from a fresh render:\n%s\nwant\n%s", seed, i, before, want)
			}
			changes++
		}
	}
	if stages < 20 || changes < 500 {
		t.Fatalf("generator covers too little: %d stage changes, %d requests", stages, changes)
	}
}

// grewOne, the fast path for a build in which one region changed in place,
// gives what renderChanged and keptLayout give: two contexts given the same
// writes, deletions, compactions and turns, one on the general path only,
// make the same requests and keep the same sums.
func TestGrewOneAsGeneral(t *testing.T) {
	// The second layout has few enough hint runs for RecentlyChanged
	// retagging (finishSystem), which the newest of notes and code takes.
	layouts := []string{`[agent]
[context.regions]
task = { kind = "pinned", max_tokens = 100 }
notes = { kind = "pinned", max_tokens = 30000, volatility = "grows" }
code = { kind = "compacting", max_tokens = 30000, threshold_tokens = 20000, volatility = "grows" }
hist = { kind = "compact_history", source_region = "code", max_tokens = 3000 }
scratch = { kind = "temporary", max_tokens = 4000 }
stage_instructions = { kind = "pinned", max_tokens = 2000, volatility = "rewritten" }
conversation = { kind = "sliding_window", max_items = 10, max_tokens = 20000 }
`, `[agent]
[context.regions]
task = { kind = "pinned", max_tokens = 100 }
notes = { kind = "compacting", max_tokens = 30000, threshold_tokens = 20000, volatility = "grows" }
code = { kind = "compacting", max_tokens = 30000, threshold_tokens = 20000, volatility = "grows" }
conversation = { kind = "sliding_window", max_items = 10, max_tokens = 20000 }
`}
	dump := func(c *Context, req *Request) string {
		a := &c.asm
		return fmt.Sprintf("%+v\nlead=%d marks=%+v sums=%+v layout=%d", *req, a.sysLead, a.sysMarks, a.sysSums, len(a.layout))
	}
	retagged := 0
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6} {
		bp, err := ParseBlueprint("grows.leviath", []byte(layouts[seed%2]), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 13))
		cs := fastAndGeneral(t, bp)
		var pending []string
		for i := range 400 {
			reg := []string{"notes", "code", "code", "code", "scratch", "stage_instructions"}[rng.IntN(6)]
			body := fmt.Sprintf("entry %d of %s\n%s", i, reg, strings.Repeat("y", 40+rng.IntN(3000)))
			n := rng.IntN(30)
			id := fmt.Sprint("c", i)
			args, _ := json.Marshal(map[string]any{"region": reg, "oldest": 1 + rng.IntN(3)})
			if n == 20 || n == 21 {
				pending = append(pending, id)
			}
			for _, c := range cs {
				switch {
				case n == 20 || n == 21:
					c.AddAssistant("calling", []ToolCall{{ID: id, Name: "bash", Args: json.RawMessage(`{}`)}})
				case n >= 22 && n <= 24 && len(pending) > 0:
					c.AddToolResult(ToolResult{CallID: pending[0], Tool: "bash", Content: body[:min(len(body), 200)]})
				case n >= 25:
					c.AddUser(body[:min(len(body), 100)])
				case n < 17:
					_ = c.Write(reg, body)
				case n < 19:
					c.CallTool("context_delete", args)
				}
			}
			if n >= 22 && n <= 24 && len(pending) > 0 {
				pending = pending[1:]
			}
			if rng.IntN(4) == 0 {
				continue // several writes between requests
			}
			fast, slow := cs[0].Assemble(), cs[1].Assemble()
			if cs[1].asm.sysMarks.retag >= 0 {
				retagged++
			}
			if got, want := dump(cs[0], fast), dump(cs[1], slow); got != want {
				t.Fatalf("seed %d op %d: the fast path's request differs:\n%s\nwant\n%s", seed, i, got, want)
			}
		}
	}
	if retagged < 100 {
		t.Fatalf("only %d requests retagged: the layouts cover too little", retagged)
	}
}

// A fold writes its summary into the history's chunk slab, where the
// history's first chunk goes (summaryBuf): every request is as a fresh
// render of the same entries makes it, whether the chunk takes the summary
// there, more summaries are appended after it, or something else follows
// the open chunk in the slab (a fold not kept).
func TestFoldedSummaryInChunkSlab(t *testing.T) {
	const layout = `[agent]
[context.regions]
code = { kind = "compacting", max_tokens = 300, threshold_tokens = 200, volatility = "grows" }
hist = { kind = "compact_history", source_region = "code", max_tokens = 300, volatility = "grows" }
conversation = { kind = "sliding_window", max_items = 6, max_tokens = 400 }
[compaction]
max_summary_tokens = 60
[stages.a]
system_prompt = "Work."
[stages.a.tool_routing]
default_region = "conversation"
[stages.a.tool_routing.overrides]
read_file = "code"
`
	bp, err := ParseBlueprint("fold.leviath", []byte(layout), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// inc renders incrementally; fresh, fed alike, renders from scratch.
	inc, err := New(bp, Options{Window: 4000})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := New(bp, Options{Window: 4000})
	if err != nil {
		t.Fatal(err)
	}
	folds := 0
	for i := range 200 {
		content := fmt.Sprintf("file %d\nvalue-%d-%x\n%s", i, i, i*7919, strings.Repeat("a line of code\n", i%7))
		for _, c := range []*Context{inc, fresh} {
			tc := ToolCall{ID: fmt.Sprint("c", i), Name: "read_file", Args: json.RawMessage(`{"path":"f.go"}`)}
			if err := c.AddAssistant("", []ToolCall{tc}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.AddToolResult(ToolResult{CallID: tc.ID, Tool: "read_file", Content: content}); err != nil {
				t.Fatal(err)
			}
		}
		for _, ev := range inc.Drain() {
			if ev.Kind == EventRecompact {
				folds++
			}
		}
		fresh.Drain()
		switch rd := &inc.byName["hist"].rend; i % 11 {
		case 5:
			// As a fold not kept leaves the slab: text after the open chunk.
			rd.text.WriteString("not a chunk")
		case 9:
			// Or a new slab, here as long as the old up to the open chunk's end.
			n := rd.at
			if k := len(rd.blocks); k > 0 {
				n += len(rd.blocks[k-1].Text)
			}
			rd.text = strings.Builder{}
			rd.text.Grow(chunkSlabBytes)
			rd.text.WriteString(strings.Repeat("#", n))
		}
		got, want := inc.Assemble(), assembleAfresh(fresh)
		if len(got.System) != len(want.System) {
			t.Fatalf("step %d: %d system blocks, fresh %d", i, len(got.System), len(want.System))
		}
		for k := range got.System {
			if a, b := got.System[k], want.System[k]; a.Text != b.Text || a.Hash != b.Hash || a.Tokens != b.Tokens {
				t.Fatalf("step %d: system block %d (%s) is %q, fresh %q", i, k, a.Region, a.Text, b.Text)
			}
		}
	}
	if folds < 3 {
		t.Fatalf("%d folds, want several", folds)
	}
}

// oneWindow, the message side of a request with one sliding window, gives
// what the general walk of the windows gives: two contexts given the same
// turns, tool results (runs of them merge into one message), blank turns,
// deletions and bulk drops, one on the general path only, make the same
// requests and keep the same state, and a request stays as it was until
// the next-but-one Assemble.
func TestOneWindowAsGeneral(t *testing.T) {
	const layout = `[agent]
[context.regions]
task = { kind = "pinned", max_tokens = 100 }
code = { kind = "compacting", max_tokens = 30000, threshold_tokens = 20000, volatility = "grows" }
conversation = { kind = "sliding_window", max_items = 12, max_tokens = 20000, strategy = "bulk", overflow = 5 }
`
	bp, err := ParseBlueprint("one.leviath", []byte(layout), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dump := func(c *Context, req *Request) string {
		a := &c.asm
		return fmt.Sprintf("%+v\nlead=%d ok=%d marked=%d flagged=%d moved=%v live=%d%s", *req, a.lead, a.msgsOK, a.msgsMarked, a.flagged, a.moved, len(a.liveWins), windowSums(c))
	}
	var fixed, drops, bad, paired int
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6} {
		rng := rand.New(rand.NewPCG(seed, 17))
		cs := fastAndGeneral(t, bp)
		var pending []string
		var held, kept *Request // the last request, as handed out, and its clone
		for i := range 1500 {
			body := fmt.Sprintf("entry %d\n%s", i, strings.Repeat("y", 20+rng.IntN(400)))
			n, pick, results := rng.IntN(40), rng.IntN(3), min(len(pending), 1+rng.IntN(3))
			var calls []ToolCall
			if n < 14 {
				for j := range 1 + rng.IntN(3) {
					calls = append(calls, ToolCall{ID: fmt.Sprint("c", i, "-", j), Name: "bash", Args: json.RawMessage(`{}`)})
				}
			}
			args, _ := json.Marshal(map[string]any{"region": "conversation", "oldest": 1 + pick})
			for _, c := range cs {
				switch {
				case n < 14:
					c.AddAssistant([]string{"", "calling", "calling"}[pick], calls)
					if n >= 5 {
						// Answered at once, as one message.
						for _, tc := range calls {
							c.AddToolResult(ToolResult{CallID: tc.ID, Tool: "bash", Content: body})
						}
					}
				case n < 20:
					// Results answered later, in order, some in runs.
					for _, id := range pending[:results] {
						c.AddToolResult(ToolResult{CallID: id, Tool: "bash", Content: body})
					}
				case n == 25:
					c.AddUser("  ") // a blank turn: finishing drops it
				case n < 25:
					c.AddUser([]string{body[:30], "go on"}[pick%2])
				case n < 29:
					c.AddAssistant([]string{"done", "ok", " "}[min(pick, n-26)], nil)
				case n < 30:
					c.CallTool("context_delete", args)
				default:
					_ = c.Write("code", body)
				}
			}
			if n < 5 {
				for _, tc := range calls {
					pending = append(pending, tc.ID)
				}
			}
			if n >= 14 && n < 20 {
				pending = pending[results:]
			}
			if rng.IntN(3) == 0 {
				continue // several changes between requests
			}
			fast, slow := cs[0].Assemble(), cs[1].Assemble()
			if got, want := dump(cs[0], fast), dump(cs[1], slow); got != want {
				t.Fatalf("seed %d op %d: the fast path's request differs:\n%s\nwant\n%s", seed, i, got, want)
			}
			if held == nil {
			} else if got, want := dumpRequest(held), dumpRequest(kept); got != want {
				t.Fatalf("seed %d op %d: the request before changed:\n%s\nwas\n%s", seed, i, got, want)
			}
			if cs[0].asm.spareMarked >= 0 && cs[0].asm.spareMarked < cs[0].asm.lead {
				fixed++
			}
			if fast.DroppedMessages > 0 {
				drops++
			}
			if cs[0].asm.msgsOK == 0 {
				bad++
			} else {
				paired++
			}
			held, kept = fast, fast.Clone()
		}
	}
	if fixed < 100 || drops < 100 || bad < 100 || paired < 100 {
		t.Fatalf("generator covers too little: %d marked slots kept, %d drops, %d requests finished in full, %d paired", fixed, drops, bad, paired)
	}
}

// Block.set writes every field: a slot reused from a retired message keeps
// nothing of it.
func TestBlockSetWritesAll(t *testing.T) {
	stale := Block{Region: "r", Text: "t", Tokens: 9, Hash: 9, ToolCallID: "i", ToolName: "n", Args: json.RawMessage(`{}`),
		Role: RoleAssistant, Type: BlockToolUse, Cache: CacheAlways, Volatility: VolatilityStable, Breakpoint: true, IsError: true}
	if n, want := reflect.TypeOf(stale).NumField(), 13; n != want {
		t.Fatalf("Block has %d fields, not %d: extend Block.set, then this test", n, want)
	}
	for _, want := range []Block{
		{Region: "c", Role: RoleUser, Type: BlockText, Text: "x", Tokens: 1, Hash: 2, Cache: CacheSlidingPrefix, Volatility: VolatilityRewritten},
		{Region: "c", Role: RoleUser, Type: BlockToolResult, Text: "x", Tokens: 1, Hash: 2, ToolCallID: "id", ToolName: "bash", IsError: true, Cache: CacheSlidingPrefix, Volatility: VolatilityRewritten},
	} {
		b := stale
		b.set(want.Region, want.Role, want.Type, want.Text, want.Tokens, want.Hash, want.ToolCallID, want.ToolName, want.Args, want.IsError)
		if !reflect.DeepEqual(b, want) {
			t.Errorf("set over a stale block:\n got %+v\nwant %+v", b, want)
		}
	}
}

// A window's retired messages are reused oldest first, from the
// next-but-one Assemble on, and only maxRetired are kept: past that the
// oldest are let go.
func TestRetiredRing(t *testing.T) {
	var rd rendered
	const extra = 5
	msgs := make([]Message, maxRetired+extra)
	for round := range 3 { // the ring wraps
		for i := range msgs {
			msgs[i].Blocks = make([]Block, 1)
			rd.retire(&msgs[i], uint64(10*round+1))
		}
		rd.now = uint64(10*round + 2)
		if m := rd.newMessage(RoleUser, 1); m == &msgs[extra] || rd.retiredN != maxRetired {
			t.Fatalf("round %d: a message retired at the last Assemble was reused, or %d held", round, rd.retiredN)
		}
		rd.now++
		for i := extra; i < len(msgs); i++ {
			if m := rd.newMessage(RoleUser, 1); m != &msgs[i] {
				t.Fatalf("round %d: reuse %d is not the message retired %dth", round, i-extra, i)
			}
		}
		if rd.retiredN != 0 {
			t.Fatalf("round %d: %d left", round, rd.retiredN)
		}
	}
}

// fastAndGeneral makes two contexts of bp, the second with the assembler's
// fast paths off (assembler.general), to be fed alike and compared.
func fastAndGeneral(t *testing.T, bp *Blueprint) [2]*Context {
	t.Helper()
	var cs [2]*Context
	for k := range cs {
		var err error
		if cs[k], err = New(bp, Options{Window: 200_000, Task: "the task"}); err != nil {
			t.Fatal(err)
		}
	}
	cs[1].asm.general = true
	return cs
}

// A Context that lends its requests (LendRequests) gives the requests that
// one that copies them gives, but for the Breakpoint flags, the system
// blocks' RecentlyChanged retags, and SameMessages, which may be less (never
// more than the run that is the same: checked against a copy of the last
// request), as SameSystem may for the first request lent after others. The
// second window, written now and then and emptied again, takes requests to
// the copying path and back; code's open chunk grows in place.
func TestLentAsCopied(t *testing.T) {
	const layout = `[agent]
[context.regions]
task = { kind = "pinned", max_tokens = 100 }
code = { kind = "compacting", max_tokens = 30000, threshold_tokens = 20000, volatility = "grows" }
conversation = { kind = "sliding_window", max_items = 12, max_tokens = 20000, strategy = "bulk", overflow = 5 }
notes = { kind = "sliding_window", max_items = 3, max_tokens = 2000 }
facts = { kind = "pinned", max_tokens = 3000, volatility = "stable" }
scratch = { kind = "temporary", max_tokens = 4000 }
scratch2 = { kind = "temporary", max_tokens = 4000 }
`
	bp, err := ParseBlueprint("lent.leviath", []byte(layout), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// unflagged prints a request's messages without their Breakpoint flags.
	unflagged := func(req *Request) string {
		r := *req
		r.Messages = nil
		for _, m := range req.Messages {
			m.Breakpoint = false
			m.Blocks = slices.Clone(m.Blocks)
			for j := range m.Blocks {
				m.Blocks[j].Breakpoint = false
			}
			r.Messages = append(r.Messages, m)
		}
		r.System = slices.Clone(req.System)
		for j := range r.System {
			b := &r.System[j]
			b.Breakpoint = false
			if b.Cache == CacheRecentlyChanged {
				b.Cache = CacheUntilChanged
			}
		}
		r.SameSystem, r.SameMessages, r.DroppedMessages = 0, 0, 0
		return fmt.Sprintf("%+v", r)
	}
	var lower, total, copying, inPlace, added int
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6} {
		rng := rand.New(rand.NewPCG(seed, 23))
		cs := fastAndGeneral(t, bp)
		cs[1].asm.general = false
		if seed != 6 {
			cs[0].LendRequests() // else from op 600 on
		}
		var pending []string
		var last *Request // a copy of the last lent request
		for i := range 1500 {
			body := fmt.Sprintf("entry %d\n%s", i, strings.Repeat("y", 20+rng.IntN(400)))
			n, pick, results := rng.IntN(44), rng.IntN(3), min(len(pending), 1+rng.IntN(3))
			var calls []ToolCall
			if n < 14 {
				for j := range 1 + rng.IntN(3) {
					calls = append(calls, ToolCall{ID: fmt.Sprint("c", i, "-", j), Name: "bash", Args: json.RawMessage(`{}`)})
				}
			}
			args, _ := json.Marshal(map[string]any{"region": "conversation", "oldest": 1 + pick})
			clear, _ := json.Marshal(map[string]any{"region": "notes", "oldest": 3})
			for _, c := range cs {
				switch {
				case n < 14:
					c.AddAssistant([]string{"", "calling", "calling"}[pick], calls)
					if n >= 5 {
						for _, tc := range calls {
							c.AddToolResult(ToolResult{CallID: tc.ID, Tool: "bash", Content: body})
						}
					}
				case n < 20:
					for _, id := range pending[:results] {
						c.AddToolResult(ToolResult{CallID: id, Tool: "bash", Content: body})
					}
				case n == 25:
					c.AddUser("  ") // a blank turn: finishing drops it
				case n < 25:
					c.AddUser([]string{body[:30], "go on"}[pick%2])
				case n < 29:
					c.AddAssistant([]string{"done", "ok", " "}[min(pick, n-26)], nil)
				case n < 30:
					c.CallTool("context_delete", args)
				case n < 34:
					_ = c.Write("code", body)
				case n < 36:
					_ = c.Write("notes", body[:min(len(body), 30)])
				case n < 37:
					_ = c.Write("facts", body[:min(len(body), 20)]) // warned of once full
					if pick > 0 {
						_ = c.Write("code", body) // two regions changed
					}
				case n < 39:
					_ = c.Write("scratch", body[:min(len(body), 60)]) // after code
					if pick == 0 {
						_ = c.Write("scratch2", body[:min(len(body), 60)]) // a build not in place, after code
					}
				default:
					c.CallTool("context_delete", clear)
				}
			}
			if n < 5 {
				for _, tc := range calls {
					pending = append(pending, tc.ID)
				}
			}
			if n >= 14 && n < 20 {
				pending = pending[results:]
			}
			if rng.IntN(3) == 0 {
				continue // several changes between requests
			}
			first := false // the first request lent
			if seed == 6 && i >= 600 && !cs[0].asm.lend {
				cs[0].LendRequests()
				first = true
			}
			var sys0 *Block // the last request's first system block
			if last != nil && len(cs[0].asm.system) > 0 {
				sys0 = &cs[0].asm.system[0]
			}
			lent, copied := cs[0].Assemble(), cs[1].Assemble()
			if len(lent.System) > 0 && &lent.System[0] == sys0 && lent.SameSystem < len(lent.System) {
				inPlace++ // grewInPlace
				if last != nil && len(lent.System) == len(last.System)+1 {
					added++ // a chunk added, the blocks after it moved
				}
			}
			if got, want := unflagged(lent), unflagged(copied); got != want {
				t.Fatalf("seed %d op %d: the lent request differs:\n%s\nwant\n%s", seed, i, got, want)
			}
			for k, b := range lent.System {
				if cs[0].asm.lend && (b.Breakpoint || b.Cache == CacheRecentlyChanged) {
					t.Fatalf("seed %d op %d: lent system block %d is flagged or retagged: %+v", seed, i, k, b)
				}
			}
			if got, want := fmt.Sprint(cs[0].Drain()), fmt.Sprint(cs[1].Drain()); got != want {
				t.Fatalf("seed %d op %d: the lent request's events differ:\n%s\nwant\n%s", seed, i, got, want)
			}
			// Less only for the first request lent after some that were not.
			if lent.SameSystem > copied.SameSystem || lent.SameSystem < copied.SameSystem && last != nil && !first {
				t.Fatalf("seed %d op %d: %d system blocks the same, of %d", seed, i, lent.SameSystem, copied.SameSystem)
			}
			if last != nil {
				for k := range lent.SameSystem {
					if !sameBlock(&last.System[k], &lent.System[k]) {
						t.Fatalf("seed %d op %d: system block %d is not the last request's", seed, i, k)
					}
				}
			}
			same, drop := lent.SameMessages, lent.DroppedMessages
			if same > copied.SameMessages {
				t.Fatalf("seed %d op %d: %d messages the same, of %d", seed, i, same, copied.SameMessages)
			}
			if last != nil && same > 0 {
				if drop+same > len(last.Messages) {
					t.Fatalf("seed %d op %d: %d dropped and %d the same, of %d", seed, i, drop, same, len(last.Messages))
				}
				for k := range same {
					if !sameMessage(&last.Messages[drop+k], &lent.Messages[k]) {
						t.Fatalf("seed %d op %d: message %d is not the last request's %d", seed, i, k, drop+k)
					}
				}
			}
			if same < copied.SameMessages {
				lower++
			}
			if !cs[0].asm.lent {
				copying++
			}
			total++
			last = lent.Clone()
		}
	}
	if lower*10 > total || copying < 100 || inPlace < 100 || added < 10 {
		t.Fatalf("%d of %d requests say fewer messages are the same; %d took the copying path, %d grew in place (%d by a chunk)", lower, total, copying, inPlace, added)
	}
}

func sameMessage(x, y *Message) bool {
	if x.Role != y.Role || len(x.Blocks) != len(y.Blocks) {
		return false
	}
	for j := range x.Blocks {
		if !sameBlock(&x.Blocks[j], &y.Blocks[j]) {
			return false
		}
	}
	return true
}
