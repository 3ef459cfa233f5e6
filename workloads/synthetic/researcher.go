package synthetic

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// ResearcherParams parameterise the researcher workload: search, fetch big
// pages and write findings, through the stages of the deep-researcher
// blueprint.
type ResearcherParams struct {
	Common
	Probes Probes  `toml:"probes"`
	Web    Web     `toml:"web"`
	Stages []Stage `toml:"stages"`
}

// Web is the web model.
type Web struct {
	// PageBytes is the size of a fetched page as web_fetch returns it.
	PageBytes LogNormal `toml:"page_bytes"`
	// FactsPerPage planted in each page (figures a report would cite).
	FactsPerPage int `toml:"facts_per_page"`
	// ResultsPerSearch listed by one web_search.
	ResultsPerSearch int `toml:"results_per_search"`
	// RevisitShare of fetches go back to a page fetched before.
	RevisitShare float64 `toml:"revisit_share"`
	// ReportBytes is the size of a report draft written with write_file.
	ReportBytes LogNormal `toml:"report_bytes"`
}

var researcherTools = []string{"read_file", "web_fetch", "web_search", "write_file"}

func (p *ResearcherParams) validate() error {
	for _, e := range []error{
		p.Common.check(),
		p.Common.checkTools(researcherTools),
		p.Probes.check(),
		p.Web.PageBytes.checkBounded("web.page_bytes", maxBytes),
		checkRange("web.facts_per_page", p.Web.FactsPerPage, 0, 100),
		checkRange("web.results_per_search", p.Web.ResultsPerSearch, 1, 100),
		checkShare("web.revisit_share", p.Web.RevisitShare),
		p.Web.ReportBytes.checkBounded("web.report_bytes", maxBytes),
		checkStages(p.Stages, researcherTools),
	} {
		if e != nil {
			return e
		}
	}
	return nil
}

type page struct {
	url, title string
	bytes      int
	seed       uint64
	facts      []trace.Fact
	fetched    bool
}

type webWorld struct {
	p       *Web
	topic   string
	pool    []*page // found by searches, not yet fetched
	fetched []*page
	notes   *page // the local notes file read_file reads
}

func (p *ResearcherParams) generate(g *gen) error {
	r := g.rng
	w := &webWorld{p: &p.Web, topic: pick(r, topics)}
	w.notes = &page{url: "notes/brief.md", title: "Brief: " + w.topic, bytes: int(p.Web.PageBytes.Draw(r)) / 4, seed: r.Uint64()}
	metric, group := pick(r, metrics), pick(r, groups)
	var facts []trace.Fact
	for i := range g.c.Task.Facts {
		facts = append(facts, g.plant(func(a int) string {
			switch (i + a) % 3 {
			case 0:
				return fmt.Sprintf("cite at least %d primary sources", 3+r.IntN(20))
			case 1:
				return fmt.Sprintf("the report is due %s %s %d", pick(r, weekdays), pick(r, months), 1+r.IntN(28))
			default:
				return fmt.Sprintf("treat figures from %s as secondary", pick(r, orgs))
			}
		}))
	}
	intro := fmt.Sprintf("Research %s: how has %s changed for %s since %d, and why? Write a cited report to report.md.", w.topic, metric, group, 2019+r.IntN(4))
	if err := g.taskWithFacts(intro, "Requirements", facts); err != nil {
		return err
	}
	return g.runStages(p.Stages, p.Probes, w)
}

func (w *webWorld) claim(g *gen) (trace.Fact, string) {
	r := g.rng
	f := g.plant(func(int) string {
		return fmt.Sprintf("%s measured %s at %d.%d%% for %s in %d", title(pick(r, orgs)), pick(r, metrics), r.IntN(100), r.IntN(10), pick(r, groups), 2018+r.IntN(8))
	})
	return f, f.Text + "."
}

// render regenerates a page from its seed, planting its facts first time.
func (w *webWorld) render(g *gen, pg *page, nfacts int) string {
	var sentences []string
	if !pg.fetched {
		pg.fetched = true
		for range nfacts {
			f, _ := w.claim(g)
			pg.facts = append(pg.facts, f)
		}
	}
	for _, f := range pg.facts {
		sentences = append(sentences, f.Text+".")
	}
	r := rand.New(rand.NewPCG(g.seed, pg.seed))
	return webPage(r, pg.url, pg.title, w.topic, pg.bytes, sentences)
}

func (w *webWorld) tool(g *gen, name string, _ int) (step, error) {
	r := g.rng
	switch name {
	case "web_search":
		q := fmt.Sprintf("%s %s %s", w.topic, pick(r, metrics), pick(r, groups))
		var b strings.Builder
		for i := range w.p.ResultsPerSearch {
			pg := &page{url: pageURL(r, w.topic), title: fmt.Sprintf("%s: %s %s", title(w.topic), pick(r, adjectives), pick(r, metrics)),
				bytes: int(w.p.PageBytes.Draw(r)), seed: r.Uint64()}
			w.pool = append(w.pool, pg)
			fmt.Fprintf(&b, "%d. %s\n   %s\n   %s\n\n", i+1, pg.title, pg.url, sentence(r, w.topic))
		}
		return step{say: fmt.Sprintf("Searching for %q.", q), call: g.call("web_search", map[string]any{"query": q}), text: b.String()}, nil
	case "web_fetch":
		var pg *page
		switch {
		case len(w.fetched) > 0 && (len(w.pool) == 0 || r.Float64() < w.p.RevisitShare):
			pg = w.fetched[r.IntN(len(w.fetched))]
		case len(w.pool) > 0:
			pg, w.pool = w.pool[0], w.pool[1:]
		default: // nothing searched yet: a page the agent knew of
			pg = &page{url: pageURL(r, w.topic), title: title(w.topic) + " overview", bytes: int(w.p.PageBytes.Draw(r)), seed: r.Uint64()}
		}
		if !pg.fetched {
			w.fetched = append(w.fetched, pg)
		}
		text := w.render(g, pg, w.p.FactsPerPage)
		return step{say: fmt.Sprintf("Fetching %s.", pg.url), call: g.call("web_fetch", map[string]any{"url": pg.url}),
			text: text, facts: pg.facts, ref: pg.url, refetch: true}, nil
	case "read_file":
		text := w.render(g, w.notes, 1)
		return step{say: "Re-reading the brief.", call: g.call("read_file", map[string]any{"path": w.notes.url}),
			text: text, facts: w.notes.facts, ref: w.notes.url, refetch: true}, nil
	case "write_file":
		return step{say: "Writing the report draft.", call: g.call("write_file", map[string]any{"path": "report.md",
			"content": "# " + title(w.topic) + "\n\n" + prose(r, w.topic, int(w.p.ReportBytes.Draw(r)), nil)}),
			text: "File created successfully at: report.md"}, nil
	}
	return step{}, fmt.Errorf("tool %q not modelled", name)
}

func (w *webWorld) userTurn(g *gen, stage string) (string, string, []trace.Fact) {
	r := g.rng
	f := g.plant(func(int) string {
		return fmt.Sprintf("the client is %s and only cares about %s data", title(pick(r, codenames))+" "+title(plural(pick(r, nouns))), pick(r, regions))
	})
	ask := fmt.Sprintf("Before I go on with %s: should the report cover every region, or is there a focus?", stage)
	return ask, fmt.Sprintf("Good question: %s. Keep the rest brief.", f.Text), []trace.Fact{f}
}

func (w *webWorld) worker(g *gen, i, bytes int) (string, []trace.Fact) {
	f, s := w.claim(g)
	return fmt.Sprintf("### Sub-question %d\n%s\n\n%s", i+1, s, prose(g.rng, w.topic, bytes, nil)), []trace.Fact{f}
}

func (w *webWorld) final(g *gen) string {
	return fmt.Sprintf("The report is in report.md: %d sources read, each claim cited.", len(w.fetched))
}

func (p *ResearcherParams) reset(set func(string) bool) {
	if set("stages") {
		p.Stages = nil
	}
}

func (p *ResearcherParams) tools() []string { return stageTools(p.Stages) }
