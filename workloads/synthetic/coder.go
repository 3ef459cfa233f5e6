package synthetic

import (
	"fmt"
	"math/rand/v2"
	"path"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// CoderParams parameterise the coder workload: read, grep, edit and test
// loops over a repository model, through the stages of the coder blueprint.
type CoderParams struct {
	Common
	Probes Probes  `toml:"probes"`
	Repo   Repo    `toml:"repo"`
	Stages []Stage `toml:"stages"`
}

// Repo is the repository model.
type Repo struct {
	// Files in the repository (before Scale).
	Files int `toml:"files"`
	// FileBytes is the size of a source file as read_file shows it.
	FileBytes LogNormal `toml:"file_bytes"`
	// FactsPerFile planted in each file (constants a later step needs).
	FactsPerFile int `toml:"facts_per_file"`
	// RereadShare of reads go back to a file read before.
	RereadShare float64 `toml:"reread_share"`
	// GrepMatches is the number of lines a grep returns.
	GrepMatches LogNormal `toml:"grep_matches"`
	// TestLines is the length of a test run's output.
	TestLines LogNormal `toml:"test_lines"`
	// FailShare of test runs fail, with an assertion message as a fact.
	FailShare float64 `toml:"fail_share"`
	// WriteBytes is the size of a new file's content in a write_file call.
	WriteBytes LogNormal `toml:"write_bytes"`
}

var coderTools = []string{"bash", "edit_file", "grep", "list_dir", "read_file", "write_file"}

func (p *CoderParams) validate() error {
	if err := p.Common.check(); err != nil {
		return err
	}
	if err := p.Common.checkTools(coderTools); err != nil {
		return err
	}
	if err := p.Probes.check(); err != nil {
		return err
	}
	r := &p.Repo
	for _, e := range []error{
		checkRange("repo.files", r.Files, 1, maxCount),
		r.FileBytes.checkBounded("repo.file_bytes", maxBytes),
		checkRange("repo.facts_per_file", r.FactsPerFile, 0, 100),
		checkShare("repo.reread_share", r.RereadShare),
		r.GrepMatches.checkBounded("repo.grep_matches", maxCount),
		r.TestLines.checkBounded("repo.test_lines", 100*maxCount),
		checkShare("repo.fail_share", r.FailShare),
		r.WriteBytes.checkBounded("repo.write_bytes", maxBytes),
		checkStages(p.Stages, coderTools),
	} {
		if e != nil {
			return e
		}
	}
	return nil
}

func (p *CoderParams) generate(g *gen) error {
	w := newRepoWorld(g, &p.Repo)
	if err := w.task(g); err != nil {
		return err
	}
	return g.runStages(p.Stages, p.Probes, w)
}

// repoFile is one file of the repository model. Its content is regenerated
// from its own seed on every read, so a file read twice reads the same.
type repoFile struct {
	path  string
	bytes int
	seed  uint64
	facts []trace.Fact // planted at the first read
	lines []string     // the fact lines as they appear in the file
	read  bool
}

type repoWorld struct {
	p      *Repo
	files  []*repoFile
	next   int // next unread file
	read   []*repoFile
	focus  string // the package the task is about
	giant  *repoFile
	giantN int // the step at which the giant read happens; -1: none
}

func newRepoWorld(g *gen, p *Repo) *repoWorld {
	w := &repoWorld{p: p, giantN: -1}
	seen := map[string]bool{}
	n := g.scaled(p.Files, 1)
	for len(w.files) < n {
		fp := repoPath(g.rng)
		if seen[fp] {
			fp = strings.TrimSuffix(fp, ".go") + fmt.Sprintf("_%d.go", len(w.files))
		}
		seen[fp] = true
		w.files = append(w.files, &repoFile{path: fp, bytes: int(p.FileBytes.Draw(g.rng)), seed: g.rng.Uint64()})
	}
	w.focus = path.Base(path.Dir(w.files[0].path))
	return w
}

func (w *repoWorld) task(g *gen) error {
	r := g.rng
	fn := title(camel(pick(r, verbs), pick(r, nouns)))
	var facts []trace.Fact
	for i := range g.c.Task.Facts {
		facts = append(facts, g.plant(func(a int) string {
			switch (i + a) % 3 {
			case 0:
				return fmt.Sprintf("do not change the exported signature of %s.%s", title(w.focus)+"Service", title(camel(pick(r, verbs), pick(r, adjectives), pick(r, nouns))))
			case 1:
				return fmt.Sprintf("the %s deploy key rotates on %ss", pick(r, services), pick(r, weekdays))
			default:
				return fmt.Sprintf("keep %s under %d ms at p99", camel(pick(r, verbs), pick(r, nouns), "latency"), 20+r.IntN(980))
			}
		}))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Fix the %s accounting in the %s service: %s double-counts %s when a %s %s expires mid-request. ",
		pick(r, nouns), w.focus, fn, plural(pick(r, nouns)), pick(r, adjectives), pick(r, nouns))
	b.WriteString("Add a regression test, keep the change small, and run the package tests before you finish.")
	return g.taskWithFacts(b.String(), "Constraints", facts)
}

func (w *repoWorld) pickFile(g *gen) *repoFile {
	if len(w.read) > 0 && (w.next >= len(w.files) || g.rng.Float64() < w.p.RereadShare) {
		return w.read[g.rng.IntN(len(w.read))]
	}
	f := w.files[w.next]
	w.next++
	return f
}

// readFile renders f, planting its facts at the first read.
func (w *repoWorld) readFile(g *gen, f *repoFile, nfacts int) string {
	if !f.read {
		f.read = true
		w.read = append(w.read, f)
		for range nfacts {
			fact := g.plant(func(int) string {
				name := camel(pick(g.rng, adjectives), pick(g.rng, nouns), pick(g.rng, []string{"limit", "timeout", "retries", "window", "batch", "quota"}))
				return fmt.Sprintf("%s = %d", name, 2+g.rng.IntN(99998))
			})
			f.facts = append(f.facts, fact)
			f.lines = append(f.lines, fmt.Sprintf("const %s // agreed in review; see %s", fact.Text, pick(g.rng, services)))
		}
	}
	r := rand.New(rand.NewPCG(g.seed, f.seed))
	return codeFile(r, f.path, f.bytes, f.lines)
}

func (w *repoWorld) tool(g *gen, name string, n int) (step, error) {
	r := g.rng
	if n == w.giantN {
		f := w.giant
		text := w.readFile(g, f, 2)
		return step{
			say:  fmt.Sprintf("The generated tables in %s decide the %s path; I'll read the whole file.", f.path, pick(r, nouns)),
			call: g.call("read_file", map[string]any{"path": f.path}), text: text, facts: f.facts, ref: f.path, refetch: true,
		}, nil
	}
	switch name {
	case "read_file":
		f := w.pickFile(g)
		text := w.readFile(g, f, w.p.FactsPerFile)
		return step{
			say:  fmt.Sprintf("Let me read %s to see how the %s is %s.", f.path, pick(r, nouns), past(pick(r, verbs))),
			call: g.call("read_file", map[string]any{"path": f.path}), text: text, facts: f.facts, ref: f.path, refetch: true,
		}, nil
	case "list_dir":
		dir := "internal/" + pick(r, pkgNames)
		return step{
			say:  fmt.Sprintf("Listing %s to find where the %s logic lives.", dir, pick(r, nouns)),
			call: g.call("list_dir", map[string]any{"path": dir}), text: dirListing(r, dir, 6+r.IntN(30)),
		}, nil
	case "grep":
		pat := title(camel(pick(r, verbs), pick(r, nouns)))
		fact := g.plant(func(int) string {
			return fmt.Sprintf("ERR-%04d: %s %s in %s", r.IntN(10000), pick(r, adjectives), pick(r, nouns), pick(r, pkgNames))
		})
		line := fmt.Sprintf("%s:%d:\treturn fmt.Errorf(\"%s\")", repoPath(r), 10+r.IntN(900), fact.Text)
		return step{
			say:  fmt.Sprintf("Searching for callers of %s.", pat),
			call: g.call("grep", map[string]any{"pattern": pat, "path": "internal/"}),
			text: grepOutput(r, pat, w.p.GrepMatches.DrawInt(r), []string{line}), facts: []trace.Fact{fact}, ref: "grep " + pat, refetch: true,
		}, nil
	case "bash":
		pkg := pick(r, pkgNames)
		var fail string
		var facts []trace.Fact
		if r.Float64() < w.p.FailShare {
			f := g.plant(func(int) string {
				return fmt.Sprintf("%s_test.go:%d: %s() = %d, want %d", pick(r, nouns), 20+r.IntN(600), title(camel(pick(r, verbs), pick(r, nouns))), r.IntN(5000), r.IntN(5000))
			})
			fail, facts = f.Text, []trace.Fact{f}
		}
		cmd := fmt.Sprintf("go test ./internal/%s/...", pkg)
		return step{
			say:  fmt.Sprintf("Running the %s tests.", pkg),
			call: g.call("bash", map[string]any{"command": cmd}), text: testOutput(r, pkg, w.p.TestLines.DrawInt(r), fail),
			facts: facts, ref: cmd, refetch: true,
		}, nil
	case "edit_file":
		// An agent edits what it has read.
		f := w.files[0]
		if len(w.read) > 0 {
			f = w.read[r.IntN(len(w.read))]
		}
		old := strings.TrimSpace(codeStmt(r, w.focus))
		return step{
			say: fmt.Sprintf("Editing %s so the %s is only counted once.", f.path, pick(r, nouns)),
			call: g.call("edit_file", map[string]any{"path": f.path, "old_string": old,
				"new_string": old + "\n" + strings.TrimSpace(codeStmt(r, w.focus))}),
			text: fmt.Sprintf("The file %s has been updated.", f.path),
		}, nil
	case "write_file":
		p := fmt.Sprintf("internal/%s/%s_%s_test.go", w.focus, pick(r, nouns), pick(r, verbs))
		content := codeFile(r, p, int(w.p.WriteBytes.Draw(r)), nil)
		return step{
			say:  fmt.Sprintf("Adding a regression test in %s.", p),
			call: g.call("write_file", map[string]any{"path": p, "content": content}),
			text: fmt.Sprintf("File created successfully at: %s", p),
		}, nil
	}
	return step{}, fmt.Errorf("tool %q not modelled", name)
}

func (w *repoWorld) userTurn(g *gen, stage string) (string, string, []trace.Fact) {
	r := g.rng
	var plan strings.Builder
	fmt.Fprintf(&plan, "## Plan\n")
	for i := range 3 + r.IntN(4) {
		f := w.files[r.IntN(len(w.files))]
		fmt.Fprintf(&plan, "%d. In %s, %s the %s %s before %s it.\n", i+1, f.path, pick(r, verbs), pick(r, adjectives), pick(r, nouns), gerund(pick(r, verbs)))
	}
	fmt.Fprintf(&plan, "\n## Files\n- internal/%s/\n\nDoes this plan look right (%s stage)?", w.focus, stage)
	fact := g.plant(func(int) string {
		return fmt.Sprintf("the staging cluster %s-%s-%d is frozen until %s", pick(r, codenames), pick(r, regions), 1+r.IntN(99), pick(r, weekdays))
	})
	answer := fmt.Sprintf("Approve - proceed to implementation. One thing to keep in mind: %s, so test against a local stack.", fact.Text)
	return plan.String(), answer, []trace.Fact{fact}
}

func (w *repoWorld) worker(g *gen, i, bytes int) (string, []trace.Fact) {
	r := g.rng
	fact := g.plant(func(int) string {
		return fmt.Sprintf("%s is called from %d places outside %s", title(camel(pick(r, verbs), pick(r, nouns))), 2+r.IntN(200), w.focus)
	})
	return fmt.Sprintf("worker %d: %s\n%s", i+1, fact.Text, prose(r, "the "+w.focus+" package", bytes, nil)), []trace.Fact{fact}
}

func (w *repoWorld) final(g *gen) string {
	return fmt.Sprintf("Done. The %s accounting in %s no longer double-counts; I added a regression test and the package tests pass. %d files read.",
		pick(g.rng, nouns), w.focus, len(w.read))
}

// BurstParams parameterise the burst workload, the seeds' example: a small
// coding task, some turns, one giant file read in the middle, more turns,
// then probes for the task and the early facts.
type BurstParams struct {
	CoderParams
	Giant Giant `toml:"giant"`
}

// Giant is the one giant file read of the burst workload.
type Giant struct {
	// WindowTokens is the window the read is sized against (a mid-size one).
	WindowTokens int `toml:"window_tokens"`
	// Share of WindowTokens the file takes (0.6 to 0.8 is the seeds' case).
	Share float64 `toml:"share"`
	// At is where in the run the read happens, as a share of the steps.
	At float64 `toml:"at"`
	// Path of the giant file.
	Path string `toml:"path"`
}

func (p *BurstParams) validate() error {
	if err := p.CoderParams.validate(); err != nil {
		return err
	}
	switch {
	case p.Giant.WindowTokens < 1024 || p.Giant.WindowTokens > 10_000_000:
		return keyErr("giant.window_tokens", "%d: want 1024..10000000", p.Giant.WindowTokens)
	case !(p.Giant.Share > 0 && p.Giant.Share <= 4):
		return keyErr("giant.share", "%v: want a share in (0, 4]", p.Giant.Share)
	case !(p.Giant.At >= 0 && p.Giant.At <= 1):
		return keyErr("giant.at", "%v: want a share in [0, 1]", p.Giant.At)
	case p.Giant.Path == "":
		return keyErr("giant.path", "missing")
	}
	return nil
}

func (p *BurstParams) generate(g *gen) error {
	w := newRepoWorld(g, &p.Repo)
	total := 0
	for _, st := range p.Stages {
		if st.FanOut == nil && st.Steps > 0 {
			total += g.scaled(st.Steps, 1)
		}
	}
	w.giantN = min(int(p.Giant.At*float64(total)), total-1)
	w.giant = &repoFile{path: p.Giant.Path, bytes: int(p.Giant.Share * float64(p.Giant.WindowTokens) * 4), seed: g.rng.Uint64()}
	if err := w.task(g); err != nil {
		return err
	}
	return g.runStages(p.Stages, p.Probes, w)
}

func (p *CoderParams) reset(set func(string) bool) {
	if set("stages") {
		p.Stages = nil
	}
}

func (p *CoderParams) tools() []string { return stageTools(p.Stages) }
