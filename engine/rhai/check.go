package rhai

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/ctxsim/ctxsim/engine"
)

// CheckBlueprint compiles every custom region's script of bp (the global
// layout and each stage's) as engine.New would, without starting a window,
// and returns the hard load errors in ENGINE.md §9.2's words: an unreadable
// script, a compile error (with line and column), no fn render(ctx), or a
// hook with the wrong number of parameters. `validate` reports these.
func (e *Engine) CheckBlueprint(bp *engine.Blueprint) []error {
	type use struct{ region, script string }
	var uses []use
	seen := map[use]bool{}
	add := func(defs []*engine.RegionDef) {
		for _, d := range defs {
			u := use{d.Name, d.Script}
			if d.Kind == engine.KindCustom && !seen[u] {
				seen[u] = true
				uses = append(uses, u)
			}
		}
	}
	add(bp.RegionDefs)
	for _, st := range bp.StageDefs {
		add(st.Regions)
	}
	sort.SliceStable(uses, func(i, j int) bool { return uses[i].region < uses[j].region })
	var errs []error
	checked := map[string]error{} // script path → its problem (nil: fine)
	for _, u := range uses {
		problem, done := checked[u.script]
		if !done {
			problem = e.checkScript(bp.Dir, u.script)
			checked[u.script] = problem
		}
		if problem != nil {
			errs = append(errs, fmt.Errorf("region '%s': %w", u.region, problem))
		}
	}
	return errs
}

func (e *Engine) checkScript(dir, path string) error {
	src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
	if err != nil {
		return fmt.Errorf("cannot read custom region script '%s': %v", path, unwrapPathError(err))
	}
	s, err := Compile(path, src, e.lim)
	if err != nil {
		return fmt.Errorf("custom region script failed to compile: %s: %v", path, err)
	}
	return CheckHooks(path, s)
}

// CheckHooks checks seed 001's hook contract on a compiled script: render
// is required and every hook takes exactly one parameter (ctx).
func CheckHooks(path string, s *Script) error {
	n, ok := hookArity(s, "render")
	if !ok {
		return fmt.Errorf("custom region script failed to compile: %s: script must define fn render(ctx)", path)
	}
	if n != 1 {
		return fmt.Errorf("custom region script failed to compile: %s: fn render must take exactly one parameter (ctx), found %d", path, n)
	}
	for _, h := range []string{"on_write", "on_overflow"} {
		if n, ok := hookArity(s, h); ok && n != 1 {
			return fmt.Errorf("custom region script failed to compile: %s: fn %s must take exactly one parameter (ctx), found %d", path, h, n)
		}
	}
	return nil
}

// hookArity is a hook's parameter count: 1 when any overload takes one
// (that is the one hooks call), else the smallest.
func hookArity(s *Script, name string) (int, bool) {
	ar := s.Arities(name)
	if len(ar) == 0 {
		return 0, false
	}
	for _, n := range ar {
		if n == 1 {
			return 1, true
		}
	}
	return ar[0], true
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
