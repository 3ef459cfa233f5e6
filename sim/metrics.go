package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// MetricDef describes one metric: every report, benchmark and figure reads
// this one list.
type MetricDef struct {
	Key    string // JSON and CSV key
	Name   string // human name
	Unit   string // %, tokens, USD, s, count, ratio, index
	Higher bool   // true when a higher value is better
	Help   string // the exact definition (DESIGN.md §6)
}

var metricDefs = []MetricDef{
	{"task_retained_pct", "task retained", "%", true, "share of requests that contain the whole task text verbatim"},
	{"task_first_loss", "task first lost", "index", true, "1-based index of the first request without the whole task; requests+1 when it was never lost"},
	{"fact_recall_pct", "fact recall", "%", true, "share of planted-fact probes whose fact text is in the request at the probe's inference (any block, summaries included)"},
	{"reference_recall_pct", "reference recall", "%", true, "share of derived probes (identifiers a later assistant turn used) whose text is in the request at that turn"},
	{"prefix_stability_pct", "prefix stability", "%", true, "mean over consecutive requests of tokens in their longest common prefix ÷ tokens of the later request"},
	{"prefix_stability_p10_pct", "prefix stability p10", "%", true, "10th percentile of the per-request prefix stability"},
	{"cache_hit_pct", "cache hit", "%", true, "cache-read tokens ÷ all input tokens, under the profile's cache model"},
	{"input_tokens", "input tokens", "tokens", false, "sum of request tokens over all inference requests (= uncached + cache write + cache read)"},
	{"cache_read_tokens", "cache read tokens", "tokens", true, "input tokens served from the prompt cache"},
	{"cache_write_tokens", "cache write tokens", "tokens", false, "input tokens written to the prompt cache"},
	{"uncached_tokens", "uncached tokens", "tokens", false, "input tokens neither read from nor written to the cache"},
	{"output_tokens", "output tokens", "tokens", false, "tokens the model generated over all requests"},
	{"waste_pct", "token waste", "%", false, "re-prefill + dead + refetch waste (disjoint parts), ÷ all input tokens"},
	{"waste_reprefill_pct", "re-prefill waste", "%", false, "tokens sent in an earlier request and processed again uncached (prefix broke or expired), ÷ all input tokens"},
	{"waste_dead_pct", "dead waste", "%", false, "tokens of content no later probe uses (task and system prompt excepted), ÷ all input tokens"},
	{"waste_refetch_pct", "refetch waste", "%", false, "tokens of tool results re-issued because their first copy had been evicted, ÷ all input tokens"},
	{"cost_usd", "cost", "USD", false, "uncached × input + cache write × write price + cache read × read price + output × output price, plus the summariser's calls"},
	{"virtual_seconds", "virtual time", "s", false, "total virtual time of the run"},
	{"ttft_mean_s", "mean time to first token", "s", false, "mean over requests of the base latency plus uncached prefill tokens ÷ prefill speed"},
	{"input_growth", "input growth", "ratio", false, "mean request tokens of the last quarter of requests ÷ the first quarter"},
	{"peak_request_tokens", "peak request", "tokens", false, "largest request, in tokens"},
	{"over_window_requests", "requests over the window", "count", false, "requests larger than the window, which a provider would refuse (a system prompt or a kept message that alone exceeds it)"},
	{"evictions", "evictions", "count", false, "blocks the policy dropped or cleared"},
	{"compactions", "compactions", "count", false, "summarisations the policy (or recorded agent) made"},
	{"lost_facts", "lost facts", "count", false, "distinct facts a probe missed and the agent could not fetch again"},
	{"requests", "requests", "count", false, "inference requests in the run, refetch turns included"},
}

// MetricDefs returns every metric in report order.
func MetricDefs() []MetricDef { return append([]MetricDef(nil), metricDefs...) }

var metricIndex = func() map[string]int {
	m := make(map[string]int, len(metricDefs))
	for i, d := range metricDefs {
		m[d.Key] = i
	}
	return m
}()

// numMetrics is len(metricDefs); init checks that the two agree.
const numMetrics = 26

// Metrics holds one value per MetricDefs entry. A metric that does not apply
// to a run (fact recall of a trace without probes) is NaN, and null in JSON.
type Metrics struct {
	v [numMetrics]float64
}

func init() {
	if len(metricDefs) != len(Metrics{}.v) {
		panic("sim: Metrics array and metricDefs disagree")
	}
}

// Get returns the metric called key; NaN for an unknown key.
func (m *Metrics) Get(key string) float64 {
	i, ok := metricIndex[key]
	if !ok {
		return math.NaN()
	}
	return m.v[i]
}

// Set sets the metric called key; it reports false for an unknown key.
func (m *Metrics) Set(key string, v float64) bool {
	i, ok := metricIndex[key]
	if ok {
		m.v[i] = v
	}
	return ok
}

// MarshalJSON writes {key: value} in MetricDefs order, NaN as null. Numbers
// use the shortest representation that round-trips, so output is stable.
func (m Metrics) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, d := range metricDefs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(d.Key))
		b.WriteByte(':')
		b.WriteString(formatMetric(m.v[i]))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func formatMetric(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "null"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// UnmarshalJSON reads what MarshalJSON writes; unknown keys are an error.
func (m *Metrics) UnmarshalJSON(data []byte) error {
	var raw map[string]*float64
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	for i := range m.v {
		m.v[i] = math.NaN()
	}
	for k, v := range raw {
		i, ok := metricIndex[k]
		if !ok {
			return fmt.Errorf("unknown metric %q", k)
		}
		if v != nil {
			m.v[i] = *v
		}
	}
	return nil
}
