package importers

import (
	"bufio"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// Aider chat history Markdown (spec/TRACES.md §6). "#### " lines are the user,
// "> " lines are tool and system output, the rest is the model's reply. A
// "> Tokens: …" line ends one model call and gives its (rounded) usage, so an
// assistant turn is emitted when the next user message, reply or session
// starts: usage, then the reply with tool calls synthesised from the "> "
// lines that follow it (edits applied, commands run, files added), then their
// results.

type aiderTurn struct {
	text  strings.Builder
	usage *trace.Usage
	tools []aiderTool
	t     float64
	open  bool
}

type aiderTool struct {
	raw, arg, out string
}

func importAider(b *builder, br *bufio.Reader) error {
	b.estimateSystem() // the history has no system prompt, repo map or file contents
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	var (
		line    int
		t       float64
		model   string
		user    strings.Builder
		userOK  bool
		tn      aiderTurn
		inIntro bool // the "> " banner after "# aider chat started at"
		started bool
		nCalls  int
	)
	flushUser := func() error {
		if !userOK {
			return nil
		}
		userOK = false
		text := strings.TrimRight(user.String(), "\n ")
		user.Reset()
		return b.user(text, t, false)
	}
	flushTurn := func() error {
		if !tn.open {
			return nil
		}
		text := strings.Trim(tn.text.String(), "\n")
		out := &turn{T: tn.t, Text: text, Usage: tn.usage}
		var ids []string
		for _, tl := range tn.tools {
			nCalls++
			id := "aider-call-" + strconv.Itoa(nCalls)
			args, _ := json.Marshal(map[string]string{"path": tl.arg})
			if tl.raw == "aider_run" {
				args, _ = json.Marshal(map[string]string{"command": tl.arg})
			}
			out.Calls = append(out.Calls, trace.ToolCall{ID: id, RawName: tl.raw, Args: args})
			ids = append(ids, id)
		}
		if err := b.assistant(out); err != nil {
			return err
		}
		for i, tl := range tn.tools {
			if _, err := b.toolResult(ids[i], "", tl.out, false, tn.t, 0, false); err != nil {
				return err
			}
		}
		tn = aiderTurn{}
		return nil
	}
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), " \t\r")
		switch {
		case strings.HasPrefix(s, "# aider chat started at "):
			if err := flushUser(); err != nil {
				return err
			}
			if err := flushTurn(); err != nil {
				return err
			}
			if started {
				// A new aider process starts with an empty chat: the
				// context is reset, which replays as a compaction without
				// a summary.
				if err := b.compaction(trace.Compaction{Trigger: "session"}, t); err != nil {
					return err
				}
			}
			started = true
			ts, err := time.ParseInLocation("2006-01-02 15:04:05", strings.TrimPrefix(s, "# aider chat started at "), time.UTC)
			if err != nil {
				if err := b.warn(line, "aider: session start %q: want YYYY-MM-DD HH:MM:SS", s); err != nil {
					return err
				}
			} else {
				t = b.clock(ts)
			}
			inIntro = true
		case strings.HasPrefix(s, "#### ") || s == "####":
			inIntro = false
			if err := flushTurn(); err != nil {
				return err
			}
			user.WriteString(strings.TrimPrefix(strings.TrimPrefix(s, "####"), " "))
			user.WriteByte('\n')
			userOK = true
		case strings.HasPrefix(s, "> ") || s == ">":
			body := strings.TrimSpace(strings.TrimPrefix(s, ">"))
			if inIntro {
				if m, ok := strings.CutPrefix(body, "Main model: "); ok {
					model, _, _ = strings.Cut(m, " ")
					b.setModel(model)
				}
				continue
			}
			if err := flushUser(); err != nil {
				return err
			}
			if u, ok := aiderTokens(body, model); ok {
				if tn.open && tn.usage != nil {
					if err := flushTurn(); err != nil {
						return err
					}
				}
				if !tn.open {
					tn = aiderTurn{open: true, t: t}
				}
				tn.usage = u
				continue
			}
			if !tn.open {
				continue // output with no reply before it (a command the user ran)
			}
			switch {
			case strings.HasPrefix(body, "Applied edit to "):
				f := strings.TrimPrefix(body, "Applied edit to ")
				tn.tools = append(tn.tools, aiderTool{raw: "aider_edit", arg: f, out: body})
			case strings.HasPrefix(body, "Running "):
				c := strings.TrimPrefix(body, "Running ")
				tn.tools = append(tn.tools, aiderTool{raw: "aider_run", arg: c, out: body})
			case strings.HasPrefix(body, "Add file to the chat?"):
				tn.tools = append(tn.tools, aiderTool{raw: "aider_add_file", arg: body, out: body})
			default:
				if n := len(tn.tools); n > 0 && tn.tools[n-1].raw == "aider_run" {
					tn.tools[n-1].out += "\n" + body // command output follows "Running"
				}
			}
		default:
			if inIntro && s == "" {
				continue
			}
			inIntro = false
			if userOK {
				if s == "" {
					if err := flushUser(); err != nil {
						return err
					}
					continue
				}
				if err := flushUser(); err != nil {
					return err
				}
			}
			if tn.open && (tn.usage != nil || len(tn.tools) > 0) && s != "" {
				if err := flushTurn(); err != nil { // a new reply after a finished call
					return err
				}
			}
			if !tn.open {
				if s == "" {
					continue
				}
				tn = aiderTurn{open: true, t: t}
			}
			tn.text.WriteString(s)
			tn.text.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return &trace.ParseError{File: b.name, Line: line + 1, Err: err}
	}
	if err := flushUser(); err != nil {
		return err
	}
	return flushTurn()
}

// aiderTokens parses "Tokens: 3.2k sent, 66 received." and the cached form
// "Tokens: 2.5k sent, 1.2k cache write, 3.0k cache hit, 66 received."; figures
// are rounded to 0.1k by Aider. "sent" includes the cached parts.
func aiderTokens(body, model string) (*trace.Usage, bool) {
	rest, ok := strings.CutPrefix(body, "Tokens: ")
	if !ok {
		return nil, false
	}
	rest, _, _ = strings.Cut(rest, ". Cost")
	var sent, write, hit, recv int
	found := false
	for part := range strings.SplitSeq(rest, ",") {
		part = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(part), "."))
		num, label, ok := strings.Cut(part, " ")
		if !ok {
			continue
		}
		n, ok := aiderNum(num)
		if !ok {
			continue
		}
		switch label {
		case "sent":
			sent, found = n, true
		case "cache write":
			write = n
		case "cache hit":
			hit = n
		case "received":
			recv = n
		}
	}
	if !found {
		return nil, false
	}
	// Aider prints the provider's prompt_tokens, which counts cached tokens inside.
	return openAIUsage(model, sent, hit, write, recv), true
}

func aiderNum(s string) (int, bool) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1e3, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, strings.TrimSuffix(s, "M")
	}
	s = strings.ReplaceAll(s, ",", "")
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1e12 {
		return 0, false
	}
	return int(f*mult + 0.5), true
}
