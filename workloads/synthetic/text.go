package synthetic

import (
	"fmt"
	"math/rand/v2"
	"path"
	"strconv"
	"strings"
)

// Content builders. Each one writes realistic text of about the asked size
// and places the given fact lines verbatim in it, spread over the body so that
// a fact is not always at the top where a truncating policy would keep it.

// spread returns, for n insertions into a body of about lines lines, the line
// indexes at which to insert them (ascending, distinct in practice).
func spread(r *rand.Rand, n, lines int) []int {
	at := make([]int, n)
	for i := range at {
		lo := lines * i / max(n, 1)
		hi := lines * (i + 1) / max(n, 1)
		at[i] = lo + r.IntN(max(hi-lo, 1))
	}
	return at
}

// codeStmt returns one statement of Go-like code at indent depth 1.
func codeStmt(r *rand.Rand, pkg string) string {
	n, v, a := pick(r, nouns), pick(r, verbs), pick(r, adjectives)
	switch r.IntN(10) {
	case 0:
		return fmt.Sprintf("\tif err := s.%s(ctx, %s); err != nil {\n\t\treturn fmt.Errorf(\"%s: %s %s: %%w\", err)\n\t}", camel(v, n), camel(a, n), pkg, v, n)
	case 1:
		return fmt.Sprintf("\t%s := make([]%s, 0, len(%s))", camel(a, n), title(n), plural(n))
	case 2:
		return fmt.Sprintf("\tfor _, %s := range s.%s {\n\t\tif %s.%s() {\n\t\t\tcontinue\n\t\t}\n\t\t%s.%s(%s)\n\t}", n[:1], plural(n), n[:1], title(a), n[:1], title(v), camel(a, "count"))
	case 3:
		return "\ts.mu.Lock()\n\tdefer s.mu.Unlock()"
	case 4:
		return fmt.Sprintf("\t// %s the %s %s before the lease expires; see %s.", title(v), a, n, camel(v, n, "deadline"))
	case 5:
		return fmt.Sprintf("\tdeadline := time.Now().Add(%d * time.Millisecond)", 50*(1+r.IntN(40)))
	case 6:
		return fmt.Sprintf("\tlog.Printf(\"%s: %s %%s (%s=%%d)\", %s.ID, %s)", pkg, v, n, n[:1], camel(n, "count"))
	case 7:
		return fmt.Sprintf("\tswitch %s.State {\n\tcase State%s:\n\t\treturn nil\n\tcase State%s:\n\t\ts.%s(%s)\n\t}", n[:1], title(a), title(pick(r, adjectives)), camel(v, n), n[:1])
	case 8:
		return fmt.Sprintf("\tif len(%s) > max%s {\n\t\treturn Err%s%s\n\t}", plural(n), title(plural(n)), title(a), title(n))
	default:
		return fmt.Sprintf("\t%s, ok := s.%s[%s.Key]\n\tif !ok {\n\t\treturn nil, ErrNo%s\n\t}\n\t_ = %s", n, camel(n, "index"), n[:1], title(n), n)
	}
}

// codeFile renders a Go-like source file as a read_file tool shows it, with
// line numbers, about target bytes long, with each fact line inserted as a
// top-level declaration.
func codeFile(r *rand.Rand, p string, target int, factLines []string) string {
	pkg := path.Base(path.Dir(p))
	var body []string
	body = append(body, fmt.Sprintf("// Package %s %s %s %s for the %s service.", pkg, third(pick(r, verbs)), pick(r, adjectives), plural(pick(r, nouns)), pkg),
		"package "+pkg, "", "import (", "\t\"context\"", "\t\"errors\"", "\t\"fmt\"", "\t\"log\"", "\t\"sync\"", "\t\"time\"", ")", "")
	size := 0
	for _, l := range body {
		size += len(l) + 8
	}
	for size < target {
		n, v := pick(r, nouns), pick(r, verbs)
		typ := title(pick(r, adjectives)) + title(n)
		var blk []string
		switch r.IntN(3) {
		case 0:
			blk = append(blk, fmt.Sprintf("// %s holds the %s state of one %s.", typ, pick(r, adjectives), n), "type "+typ+" struct {")
			for range 2 + r.IntN(5) {
				blk = append(blk, fmt.Sprintf("\t%s %s", title(camel(pick(r, adjectives), pick(r, nouns))), pick(r, goTypes)))
			}
			blk = append(blk, "}", "")
		default:
			fn := title(camel(v, n))
			blk = append(blk, fmt.Sprintf("// %s %s the %s and reports whether it changed.", fn, third(v), n),
				fmt.Sprintf("func (s *%s) %s(ctx context.Context, %s *%s) (bool, error) {", title(pkg)+"Service", fn, n[:1], title(n)))
			for range 2 + r.IntN(5) {
				blk = append(blk, strings.Split(codeStmt(r, pkg), "\n")...)
			}
			blk = append(blk, "\treturn true, nil", "}", "")
		}
		for _, l := range blk {
			size += len(l) + 8
		}
		body = append(body, blk...)
	}
	// Insert the facts as declarations, back to front so indexes hold.
	at := spread(r, len(factLines), len(body))
	for i := len(factLines) - 1; i >= 0; i-- {
		k := at[i]
		for k < len(body) && body[k] != "" { // after a blank line: top level
			k++
		}
		decl := []string{"", factLines[i]}
		body = append(body[:k], append(decl, body[k:]...)...)
	}
	buf := make([]byte, 0, size+256)
	for i, l := range body {
		// "%6d\t%s\n", without fmt: this loop writes most of the bytes.
		var num [20]byte
		d := strconv.AppendInt(num[:0], int64(i+1), 10)
		for range 6 - len(d) {
			buf = append(buf, ' ')
		}
		buf = append(buf, d...)
		buf = append(buf, '\t')
		buf = append(buf, l...)
		buf = append(buf, '\n')
	}
	return string(buf)
}

// dirListing renders a list_dir result.
func dirListing(r *rand.Rand, dir string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/\n", dir)
	for range n {
		if r.IntN(5) == 0 {
			fmt.Fprintf(&b, "  %s/\n", pick(r, pkgNames))
			continue
		}
		fmt.Fprintf(&b, "  %s_%s.go  (%d bytes)\n", pick(r, nouns), pick(r, verbs), 400+r.IntN(30000))
	}
	return b.String()
}

// grepOutput renders a grep result of n matching lines, with the fact lines
// among them.
func grepOutput(r *rand.Rand, pattern string, n int, factLines []string) string {
	lines := make([]string, 0, n+len(factLines))
	for range n {
		stmt := strings.TrimSpace(strings.Split(codeStmt(r, pick(r, pkgNames)), "\n")[0])
		lines = append(lines, fmt.Sprintf("%s:%d:\t%s", repoPath(r), 10+r.IntN(900), stmt))
	}
	for i, at := range spread(r, len(factLines), len(lines)) {
		lines = append(lines[:at], append([]string{factLines[i]}, lines[at:]...)...)
	}
	return strings.Join(lines, "\n") + "\n"
}

// testOutput renders `go test -v` output of about n lines; failLine, when not
// empty, is a failing assertion inside a FAIL block.
func testOutput(r *rand.Rand, pkg string, n int, failLine string) string {
	var b strings.Builder
	failAt := -1
	if failLine != "" {
		failAt = r.IntN(max(n/3, 1))
	}
	tests := max(n/3, 1)
	for i := range tests {
		name := "Test" + title(camel(pick(r, verbs), pick(r, adjectives), pick(r, nouns)))
		fmt.Fprintf(&b, "=== RUN   %s\n", name)
		if r.IntN(3) == 0 {
			fmt.Fprintf(&b, "    %s_test.go:%d: %s %s with %d %ss\n", pick(r, nouns), 20+r.IntN(400), pick(r, verbs), pick(r, adjectives), 1+r.IntN(64), pick(r, nouns))
		}
		if i == failAt {
			fmt.Fprintf(&b, "    %s\n--- FAIL: %s (%.2fs)\n", failLine, name, float64(r.IntN(900))/100)
			continue
		}
		fmt.Fprintf(&b, "--- PASS: %s (%.2fs)\n", name, float64(r.IntN(90))/100)
	}
	status := "ok  "
	if failAt >= 0 {
		b.WriteString("FAIL\n")
		status = "FAIL"
	}
	fmt.Fprintf(&b, "%s\tgithub.com/acme/platform/internal/%s\t%.3fs\n", status, pkg, float64(100+r.IntN(5000))/1000)
	return b.String()
}

// logClock is a log timestamp generator: lines advance by a few
// milliseconds each, as a busy service's log does.
type logClock struct{ ms int64 }

func (c *logClock) next(r *rand.Rand) string {
	c.ms += int64(1 + r.IntN(400))
	s := c.ms / 1000
	return fmt.Sprintf("2026-03-%02dT%02d:%02d:%02d.%03dZ", 14+int(s/86400)%14, (s/3600)%24, (s/60)%60, s%60, c.ms%1000)
}

// logLine renders one structured log line.
func logLine(r *rand.Rand, c *logClock) string {
	lvl := "INFO "
	switch x := r.IntN(20); {
	case x == 0:
		lvl = "ERROR"
	case x < 3:
		lvl = "WARN "
	case x < 6:
		lvl = "DEBUG"
	}
	return fmt.Sprintf("%s %s [%s] %s request_id=%s method=%s path=/v1/%s status=%d latency_ms=%d",
		c.next(r), lvl, pick(r, services), pick(r, logMsgs), hexID(r, 10),
		pick(r, []string{"GET", "GET", "POST", "PUT", "DELETE"}), plural(pick(r, nouns)),
		pick(r, []int{200, 200, 200, 201, 204, 304, 400, 404, 429, 500, 503}), 1+r.IntN(900))
}

// logChunk renders about target bytes of log lines with the fact lines among
// them.
func logChunk(r *rand.Rand, c *logClock, target int, factLines []string) string {
	var b strings.Builder
	b.Grow(target + 256)
	// Facts go in at spread byte offsets, as they are met, so that the
	// timestamps stay in order.
	at := spread(r, len(factLines), target)
	next := 0
	for b.Len() < target || next < len(factLines) {
		if next < len(factLines) && b.Len() >= at[next] {
			fmt.Fprintf(&b, "%s ERROR [%s] %s\n", c.next(r), pick(r, services), factLines[next])
			next++
			continue
		}
		b.WriteString(logLine(r, c))
		b.WriteByte('\n')
	}
	return b.String()
}

// aggregateOutput renders the output of a log aggregation command (awk,
// sort | uniq -c) of n rows, with fact rows among them.
func aggregateOutput(r *rand.Rand, n int, factLines []string) string {
	var lines []string
	lines = append(lines, fmt.Sprintf("%8s  %-18s %-6s %s", "count", "service", "status", "message"))
	for range n {
		lines = append(lines, fmt.Sprintf("%8d  %-18s %-6d %s", 1+r.IntN(20000), pick(r, services),
			pick(r, []int{200, 400, 404, 429, 500, 502, 503}), pick(r, logMsgs)))
	}
	for i, at := range spread(r, len(factLines), len(lines)-1) {
		at++
		lines = append(lines[:at], append([]string{"   note:  " + factLines[i]}, lines[at:]...)...)
	}
	return strings.Join(lines, "\n") + "\n"
}

// sentence returns one sentence of expository prose about topic.
func sentence(r *rand.Rand, topic string) string {
	switch r.IntN(6) {
	case 0:
		return fmt.Sprintf("%s %s tends to %s when the %s of %s are %s.", pick(r, sentenceOpeners), topic, pick(r, verbs), plural(pick(r, nouns)), pick(r, groups), pick(r, adjectives))
	case 1:
		return fmt.Sprintf("%s reported that %s for %s moved only slightly over the period.", title(pick(r, orgs)), pick(r, metrics), pick(r, groups))
	case 2:
		return fmt.Sprintf("The main trade-off is between %s and %s, and most %s choose the former.", pick(r, metrics), pick(r, metrics), pick(r, groups))
	case 3:
		return fmt.Sprintf("%s the %s %s matters more than the choice of tooling.", pick(r, sentenceOpeners), pick(r, adjectives), pick(r, nouns))
	case 4:
		return fmt.Sprintf("Several %s said they %s their %s weekly, which keeps %s predictable.", pick(r, groups), pick(r, verbs), plural(pick(r, nouns)), pick(r, metrics))
	default:
		return fmt.Sprintf("It is worth separating %s from %s, since the two are often conflated in %s coverage.", topic, pick(r, topics), pick(r, adjectives))
	}
}

// prose renders paragraphs of about target bytes about topic, with the fact
// sentences among them.
func prose(r *rand.Rand, topic string, target int, factSentences []string) string {
	var paras []string
	size := 0
	for size < target {
		var p strings.Builder
		for range 3 + r.IntN(4) {
			if p.Len() > 0 {
				p.WriteByte(' ')
			}
			p.WriteString(sentence(r, topic))
		}
		size += p.Len() + 2
		paras = append(paras, p.String())
	}
	for i, at := range spread(r, len(factSentences), len(paras)) {
		paras[at] += " " + factSentences[i]
	}
	return strings.Join(paras, "\n\n")
}

// webPage renders a fetched page as a web_fetch tool returns it (markdown).
func webPage(r *rand.Rand, url, heading, topic string, target int, factSentences []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nSource: %s\nPublished: %d-%02d-%02d\n\n", heading, url, 2019+r.IntN(7), 1+r.IntN(12), 1+r.IntN(28))
	body := prose(r, topic, target, factSentences)
	paras := strings.Split(body, "\n\n")
	for i, p := range paras {
		if i > 0 && i%3 == 0 {
			fmt.Fprintf(&b, "## %s %s\n\n", title(pick(r, adjectives)), plural(pick(r, nouns)))
		}
		b.WriteString(p)
		b.WriteString("\n\n")
	}
	return b.String()
}

// pageURL returns a plausible article URL about topic.
func pageURL(r *rand.Rand, topic string) string {
	slug := strings.ReplaceAll(topic, " ", "-")
	return fmt.Sprintf("https://%s/%d/%s-%s", pick(r, domains), 2019+r.IntN(7), slug, hexID(r, 6))
}

// chatUser renders a user's chat turn of about target bytes about topic.
func chatUser(r *rand.Rand, topic string, target int) string {
	var b strings.Builder
	for b.Len() < target {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		n, a, v := pick(r, nouns), pick(r, adjectives), pick(r, verbs)
		switch r.IntN(7) {
		case 0:
			fmt.Fprintf(&b, "Can you draft a short checklist for %s?", topic)
		case 1:
			fmt.Fprintf(&b, "What should we do about the %s %s first?", a, n)
		case 2:
			fmt.Fprintf(&b, "I talked to my %s about %s and they think we should %s the %s before %s.", pick(r, relations), topic, v, n, pick(r, months))
		case 3:
			fmt.Fprintf(&b, "That makes sense, but the %s still feels %s to me.", n, a)
		case 4:
			fmt.Fprintf(&b, "Could you compare %s and %s for %s in two or three sentences?", plural(n), plural(pick(r, nouns)), topic)
		case 5:
			fmt.Fprintf(&b, "Thanks. Last week the %s went %s again, so I'd rather not %s it on a %s.", n, a, v, pick(r, weekdays))
		default:
			fmt.Fprintf(&b, "How long would it take to %s all the %s %s?", v, a, plural(n))
		}
	}
	return b.String()
}

// chatReply renders an assistant's chat reply of about target bytes: a lead
// sentence, numbered suggestions and a closing question.
func chatReply(r *rand.Rand, topic string, target int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Here is how I would approach %s.\n\n", topic)
	for i := 1; b.Len() < target; i++ {
		n, a, v := pick(r, nouns), pick(r, adjectives), pick(r, verbs)
		switch r.IntN(4) {
		case 0:
			fmt.Fprintf(&b, "%d. %s the %s %s first; it is the part most likely to slip.\n", i, title(v), a, n)
		case 1:
			fmt.Fprintf(&b, "%d. Keep a list of every %s and who owns it, and review it each %s.\n", i, n, pick(r, weekdays))
		case 2:
			fmt.Fprintf(&b, "%d. Budget about %d hours to %s the %s; %s ones take longer.\n", i, 1+r.IntN(12), v, plural(n), a)
		default:
			fmt.Fprintf(&b, "%d. %s\n", i, sentence(r, topic))
		}
	}
	fmt.Fprintf(&b, "\nWould you like me to turn this into a schedule for %s?", pick(r, months))
	return b.String()
}

// toolSchemas are the JSON schemas an agent's system prompt declares, per
// canonical tool, in the shape providers' tool definitions take.
var toolSchemas = map[string]string{
	"read_file":  `{"name":"read_file","description":"Read a file from the working directory. Returns the content with line numbers. Use offset and limit for large files.","input_schema":{"type":"object","properties":{"path":{"type":"string","description":"Path relative to the working directory"},"offset":{"type":"integer","description":"First line to read, 1-based"},"limit":{"type":"integer","description":"Number of lines to read"}},"required":["path"]}}`,
	"list_dir":   `{"name":"list_dir","description":"List the entries of a directory with their sizes.","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`,
	"grep":       `{"name":"grep","description":"Search file contents with a regular expression. Returns matching lines as path:line:text.","input_schema":{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"},"glob":{"type":"string"}},"required":["pattern"]}}`,
	"edit_file":  `{"name":"edit_file","description":"Replace an exact string in a file. old_string must match exactly once.","input_schema":{"type":"object","properties":{"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"}},"required":["path","old_string","new_string"]}}`,
	"write_file": `{"name":"write_file","description":"Create or overwrite a file with the given content.","input_schema":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}}`,
	"bash":       `{"name":"bash","description":"Run a shell command in the working directory and return its combined output. Long-running commands time out after 120 seconds.","input_schema":{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer"}},"required":["command"]}}`,
	"web_search": `{"name":"web_search","description":"Search the web. Returns titles, URLs and snippets.","input_schema":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}`,
	"web_fetch":  `{"name":"web_fetch","description":"Fetch a URL and return its main content as markdown.","input_schema":{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}}`,
}

// systemGuidelines pad a system prompt to its size: the standing rules an
// agent's prompt repeats whatever the task.
var systemGuidelines = []string{
	"Read the relevant code or sources before you change or claim anything.",
	"Prefer small, verifiable steps; run the checks after each change.",
	"Never invent file paths, figures or citations; say what you could not find.",
	"Keep answers short and concrete, and quote exact identifiers and numbers.",
	"Do not run destructive commands without the user's explicit approval.",
	"When a tool call fails, read the error and adjust instead of retrying blindly.",
	"Report what you did, what you verified and what is left, in that order.",
}

// systemPrompt renders a system prompt of about size bytes: a preamble, the
// schemas of tools, then numbered guidelines. It draws no randomness: a real
// system prompt is the same on every run.
func systemPrompt(tools []string, size int) string {
	var b strings.Builder
	b.WriteString("You are an autonomous agent working in a sandboxed environment on the user's behalf.\n")
	if len(tools) > 0 {
		b.WriteString("\n# Tools\n")
		for _, t := range tools {
			if s, ok := toolSchemas[t]; ok {
				b.WriteString(s)
				b.WriteByte('\n')
			}
		}
	}
	b.WriteString("\n# Guidelines\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%d. %s\n", i+1, systemGuidelines[i%len(systemGuidelines)])
	}
	return b.String()
}
