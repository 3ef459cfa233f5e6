package bench

// Direction says which way a metric improves.
type Direction int

// The directions of a metric.
const (
	Neutral Direction = iota // neither better nor worse (a count that describes the run)
	Higher                   // higher is better
	Lower                    // lower is better
)

// String returns "higher", "lower" or "neutral".
func (d Direction) String() string {
	switch d {
	case Higher:
		return "higher"
	case Lower:
		return "lower"
	default:
		return "neutral"
	}
}

// Metric describes one metric of a run: its key in cell files, CSV and JSON,
// its unit, and how go test -bench reports it.
type Metric struct {
	Name      string    // key, e.g. "task_retained_pct"
	Label     string    // short human label for tables and figures
	Unit      string    // unit for people: "%", "tokens", "USD", "s", ...
	BenchUnit string    // unit for b.ReportMetric: no spaces, e.g. "task%"
	Dir       Direction // which way is better
	Exact     bool      // deterministic given the cell: benchstat may assume=exact
	Doc       string    // one-line definition (DESIGN.md §6)
}

// Metrics lists every metric a run reports, in report order. The names are the
// ones DESIGN.md §6 defines; the simulator's meters produce them.
func Metrics() []Metric {
	return []Metric{
		{"task_retained_pct", "task retained", "%", "task%", Higher, true, "share of requests that contain the whole task text verbatim"},
		{"task_first_loss", "first task loss", "request", "first-loss-req", Higher, true, "index of the first request that lost the task (-1: never lost)"},
		{"fact_recall_pct", "fact recall", "%", "recall%", Higher, true, "share of planted-fact probes whose text is in the request at the probe's inference"},
		{"reference_recall_pct", "reference recall", "%", "ref-recall%", Higher, true, "share of derived reference probes (identifiers a later turn used) still in the request"},
		{"prefix_stability_pct", "prefix stability", "%", "prefix%", Higher, true, "mean over consecutive requests of common-prefix tokens ÷ tokens of the later request"},
		{"prefix_stability_p10_pct", "prefix stability p10", "%", "prefix-p10%", Higher, true, "10th percentile of the per-request prefix stability"},
		{"cache_hit_pct", "cache hit", "%", "hit%", Higher, true, "cache-read tokens ÷ all input tokens under the model's cache model"},
		{"input_tokens", "input tokens", "tokens", "in-tok/run", Lower, true, "all input tokens over the run's requests"},
		{"cache_read_tokens", "cache-read tokens", "tokens", "cache-read-tok/run", Neutral, true, "input tokens read from the prompt cache"},
		{"cache_write_tokens", "cache-write tokens", "tokens", "cache-write-tok/run", Neutral, true, "input tokens written to the prompt cache"},
		{"uncached_tokens", "uncached tokens", "tokens", "uncached-tok/run", Lower, true, "input tokens neither read from nor written to the cache"},
		{"output_tokens", "output tokens", "tokens", "out-tok/run", Neutral, true, "output tokens over the run, summariser calls included"},
		{"waste_pct", "waste", "%", "waste%", Lower, true, "re-prefill + dead + refetch tokens ÷ all input tokens"},
		{"waste_reprefill_pct", "waste: re-prefill", "%", "waste-reprefill%", Lower, true, "tokens sent before and re-processed uncached ÷ all input tokens"},
		{"waste_dead_pct", "waste: dead", "%", "waste-dead%", Lower, true, "tokens of content no later probe uses (task and instructions excepted) ÷ all input tokens"},
		{"waste_refetch_pct", "waste: refetch", "%", "waste-refetch%", Lower, true, "tokens of tool calls re-issued because their result was evicted ÷ all input tokens"},
		{"cost_usd", "cost", "USD", "usd/run", Lower, true, "uncached, cache-write, cache-read and output tokens at the model's prices, summariser included"},
		{"virtual_seconds", "virtual time", "s", "virtual-s/run", Lower, true, "total virtual time of the run"},
		{"ttft_mean_s", "mean TTFT", "s", "ttft-s", Lower, true, "mean modelled time to first token per request"},
		{"input_growth", "input growth", "×", "growth-x", Lower, true, "mean request tokens of the last quarter ÷ the first quarter"},
		{"peak_request_tokens", "peak request", "tokens", "peak-tok", Neutral, true, "largest request of the run"},
		{"evictions", "evictions", "count", "evictions/run", Neutral, true, "entries or messages the policy evicted"},
		{"compactions", "compactions", "count", "compactions/run", Neutral, true, "summarisations the policy performed"},
		{"lost_facts", "lost facts", "count", "lost-facts/run", Lower, true, "probes missed on facts that cannot be fetched again"},
		{"requests", "requests", "count", "requests/run", Neutral, true, "inference requests in the run"},
	}
}

// metricIndex maps a metric name to its position in Metrics.
func metricIndex() map[string]int {
	m := make(map[string]int)
	for i, d := range Metrics() {
		m[d.Name] = i
	}
	return m
}
