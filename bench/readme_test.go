package bench

import (
	"bytes"
	"strings"
	"testing"
)

func TestUpdateReadme(t *testing.T) {
	readme := []byte("# x\n\nintro\n\n" + headlineBegin + "\nold table\n" + headlineEnd + "\n\n## Metrics\n\n" + metricsBegin + "\nold\n" + metricsEnd + "\ntail\n")
	report := []byte("# ctxsim results\n\n## Headline\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Workloads\n\n- x\n")
	out, err := UpdateReadme(readme, report)
	if err != nil {
		t.Fatal(err)
	}
	h, m, err := ReadmeBlocks(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(h) != "| a | b |\n|---|---|\n| 1 | 2 |" {
		t.Errorf("headline block %q", h)
	}
	if !bytes.Equal(m, MetricDefinitions()) || !bytes.Contains(m, []byte("`task_retained_pct`")) {
		t.Errorf("metrics block %q", m)
	}
	if !strings.HasPrefix(string(out), "# x\n\nintro\n\n") || !strings.HasSuffix(string(out), "tail\n") {
		t.Errorf("text outside the markers changed:\n%s", out)
	}
	again, _ := UpdateReadme(out, report)
	if !bytes.Equal(again, out) {
		t.Error("updating twice changes the README")
	}
	if _, err := UpdateReadme([]byte("no markers"), report); err == nil {
		t.Error("README without markers: no error")
	}
	if _, err := UpdateReadme(readme, []byte("# no headline")); err == nil {
		t.Error("report without a headline: no error")
	}
}
