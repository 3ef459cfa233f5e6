package synthetic

import (
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// LogAnalyzerParams parameterise the log-analyzer workload: huge tool
// outputs from reading and aggregating logs, through the stages of the
// log-analyzer blueprint.
type LogAnalyzerParams struct {
	Common
	Probes Probes  `toml:"probes"`
	Logs   Logs    `toml:"logs"`
	Stages []Stage `toml:"stages"`
}

// Logs is the model of the logs under analysis.
type Logs struct {
	// Files of logs (before Scale).
	Files int `toml:"files"`
	// ReadBytes is the size of one read_file of a log (a window of lines).
	ReadBytes LogNormal `toml:"read_bytes"`
	// FactsPerRead planted in each read (anomalous lines).
	FactsPerRead int `toml:"facts_per_read"`
	// AggregateRows is the length of a bash aggregation's output.
	AggregateRows LogNormal `toml:"aggregate_rows"`
	// ReportBytes is the size of the report written with write_file.
	ReportBytes LogNormal `toml:"report_bytes"`
}

var logTools = []string{"bash", "list_dir", "read_file", "write_file"}

func (p *LogAnalyzerParams) validate() error {
	for _, e := range []error{
		p.Common.check(),
		p.Common.checkTools(logTools),
		p.Probes.check(),
		checkRange("logs.files", p.Logs.Files, 1, maxCount),
		p.Logs.ReadBytes.checkBounded("logs.read_bytes", maxBytes),
		checkRange("logs.facts_per_read", p.Logs.FactsPerRead, 0, 100),
		p.Logs.AggregateRows.checkBounded("logs.aggregate_rows", 100*maxCount),
		p.Logs.ReportBytes.checkBounded("logs.report_bytes", maxBytes),
		checkStages(p.Stages, logTools),
	} {
		if e != nil {
			return e
		}
	}
	return nil
}

type logWorld struct {
	p     *Logs
	files []string
	clock logClock
	svc   string
}

func (p *LogAnalyzerParams) generate(g *gen) error {
	r := g.rng
	w := &logWorld{p: &p.Logs, svc: pick(r, services)}
	for i := range g.scaled(p.Logs.Files, 1) {
		s := services[i%len(services)]
		w.files = append(w.files, fmt.Sprintf("/var/log/%s/%s.log.%d", s, s, i/len(services)))
	}
	var facts []trace.Fact
	for i := range g.c.Task.Facts {
		facts = append(facts, g.plant(func(a int) string {
			switch (i + a) % 3 {
			case 0:
				h := r.IntN(20)
				return fmt.Sprintf("the incident window is %02d:%02dZ to %02d:%02dZ", h, r.IntN(60), h+1+r.IntN(3), r.IntN(60))
			case 1:
				return fmt.Sprintf("ignore health checks from %s", ipPort(r))
			default:
				return fmt.Sprintf("the on-call engineer for %s is %s", pick(r, services), title(pick(r, codenames)))
			}
		}))
	}
	intro := fmt.Sprintf("The %s error rate spiked on March 14. The logs are under /var/log/. Find the root cause, quantify it with counts and timestamps, and write report.md.", w.svc)
	if err := g.taskWithFacts(intro, "Notes from the incident channel", facts); err != nil {
		return err
	}
	return g.runStages(p.Stages, p.Probes, w)
}

// anomaly returns a fact: one anomalous thing a log shows.
func (w *logWorld) anomaly(g *gen) trace.Fact {
	r := g.rng
	return g.plant(func(a int) string {
		switch r.IntN(3) {
		case 0:
			return fmt.Sprintf("ERR-%04d in %s/%s.go:%d", r.IntN(10000), pick(r, pkgNames), pick(r, nouns), 10+r.IntN(990))
		case 1:
			return fmt.Sprintf("upstream %s timed out after %dms", ipPort(r), 1000*(1+r.IntN(60)))
		default:
			return fmt.Sprintf("request_id=%s retried %d times", hexID(r, 12), 3+r.IntN(40))
		}
	})
}

func (w *logWorld) tool(g *gen, name string, _ int) (step, error) {
	r := g.rng
	switch name {
	case "read_file":
		f := pick(r, w.files)
		off := 1 + 1000*r.IntN(500)
		var facts []trace.Fact
		var lines []string
		for range w.p.FactsPerRead {
			fa := w.anomaly(g)
			facts, lines = append(facts, fa), append(lines, fa.Text)
		}
		size := int(w.p.ReadBytes.Draw(r))
		return step{say: fmt.Sprintf("Reading %s from line %d.", f, off),
			call: g.call("read_file", map[string]any{"path": f, "offset": off, "limit": size / 150}),
			text: logChunk(r, &w.clock, size, lines), facts: facts, ref: f, refetch: true}, nil
	case "bash":
		f := pick(r, w.files)
		cmd := fmt.Sprintf("awk '$3==\"ERROR\" || $3==\"WARN\"' %s | awk '{print $4, $NF}' | sort | uniq -c | sort -rn | head -%d", f, 20+r.IntN(200))
		fa := w.anomaly(g)
		return step{say: "Counting errors by service and status.", call: g.call("bash", map[string]any{"command": cmd}),
			text: aggregateOutput(r, w.p.AggregateRows.DrawInt(r), []string{fa.Text}), facts: []trace.Fact{fa}, ref: "aggregate of " + f, refetch: true}, nil
	case "list_dir":
		var b strings.Builder
		b.WriteString("/var/log/\n")
		for _, f := range w.files {
			fmt.Fprintf(&b, "  %s  (%d MB)\n", f, 1+r.IntN(900))
		}
		return step{say: "Listing the log files.", call: g.call("list_dir", map[string]any{"path": "/var/log"}), text: b.String()}, nil
	case "write_file":
		return step{say: "Writing the report.", call: g.call("write_file", map[string]any{"path": "report.md",
			"content": "# Incident report: " + w.svc + "\n\n" + prose(r, "the "+w.svc+" outage", int(w.p.ReportBytes.Draw(r)), nil)}),
			text: "File created successfully at: report.md"}, nil
	}
	return step{}, fmt.Errorf("tool %q not modelled", name)
}

func (w *logWorld) userTurn(g *gen, stage string) (string, string, []trace.Fact) {
	r := g.rng
	f := g.plant(func(int) string {
		return fmt.Sprintf("the %s deploy at %02d:%02dZ was rolled back", pick(r, services), r.IntN(24), r.IntN(60))
	})
	return fmt.Sprintf("Findings so far are in (%s). Anything I should know before I go on?", stage),
		fmt.Sprintf("Yes: %s. Check whether the errors stop after that.", f.Text), []trace.Fact{f}
}

func (w *logWorld) worker(g *gen, i, bytes int) (string, []trace.Fact) {
	r := g.rng
	fa := w.anomaly(g)
	f := w.files[i%len(w.files)]
	var b strings.Builder
	fmt.Fprintf(&b, "info | swept %s | %d lines, 00:00Z to 23:59Z\n", f, 10000+r.IntN(2_000_000))
	fmt.Fprintf(&b, "critical | %s | %d occurrences\n", fa.Text, 1+r.IntN(5000))
	for b.Len() < bytes {
		fmt.Fprintf(&b, "%s | %s on %s | %d occurrences between %02d:%02dZ and %02d:%02dZ\n", pick(r, []string{"warning", "info"}),
			pick(r, logMsgs), pick(r, services), 1+r.IntN(900), r.IntN(12), r.IntN(60), 12+r.IntN(12), r.IntN(60))
	}
	return b.String(), []trace.Fact{fa}
}

func (w *logWorld) final(g *gen) string {
	return fmt.Sprintf("The report is in report.md. Root cause: the %s errors follow the upstream timeouts; evidence and counts are in the findings.", w.svc)
}

func (p *LogAnalyzerParams) reset(set func(string) bool) {
	if set("stages") {
		p.Stages = nil
	}
}

func (p *LogAnalyzerParams) tools() []string { return stageTools(p.Stages) }
