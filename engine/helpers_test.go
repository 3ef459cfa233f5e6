package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// text returns a string of exactly n tokens (bytes/4) starting with tag.
func text(tag string, n int) string {
	if n*4 < len(tag) {
		panic("tag longer than the token count")
	}
	return tag + strings.Repeat(".", n*4-len(tag))
}

// newCtx builds a live window from a [context.regions] body.
func newCtx(t testing.TB, regions string, opt Options) *Context {
	t.Helper()
	bp := mustParse(t, "[agent]\nname = \"t\"\n[context.regions]\n"+regions)
	if opt.Window == 0 {
		opt.Window = 100_000
	}
	c, err := New(bp, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func contents(c *Context, region string) []string {
	var out []string
	for _, e := range c.byName[region].entries {
		out = append(out, strings.TrimRight(e.content, "."))
	}
	return out
}

func mustWrite(t testing.TB, c *Context, region, s string) {
	t.Helper()
	if err := c.Write(region, s); err != nil {
		t.Fatal(err)
	}
}

func call(t testing.TB, c *Context, tool string, args any) string {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.CallTool(tool, raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkInv(t testing.TB, c *Context) {
	t.Helper()
	if err := c.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// fakeScripts is a tiny ScriptEngine for custom-region tests.
type fakeScripts struct{ scripts map[string]*fakeScript }

func (f fakeScripts) Compile(path string, src []byte) (RegionScript, error) {
	s, ok := f.scripts[path]
	if !ok {
		return nil, fmt.Errorf("syntax error at 1:1")
	}
	return s, nil
}

type fakeScript struct {
	hooks      map[string]int
	render     func(ScriptContext) (ScriptRender, error)
	onWrite    func(ScriptContext, ScriptEntry) (*ScriptEntry, bool, error)
	onOverflow func(ScriptContext) ([]int, error)
}

func (s *fakeScript) HasHook(name string) (int, bool) { n, ok := s.hooks[name]; return n, ok }
func (s *fakeScript) Render(ctx ScriptContext) (ScriptRender, error) {
	if s.render == nil {
		return ScriptRender{}, nil
	}
	return s.render(ctx)
}
func (s *fakeScript) OnWrite(ctx ScriptContext, e ScriptEntry) (*ScriptEntry, bool, error) {
	return s.onWrite(ctx, e)
}
func (s *fakeScript) OnOverflow(ctx ScriptContext) ([]int, error) { return s.onOverflow(ctx) }
