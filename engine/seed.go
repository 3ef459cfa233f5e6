package engine

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

const seedTruncMarker = "\n[...truncated by leviath: seed exceeded this region's budget]"

// trimSeed cuts seed text to the region budget: (max-1)*4 bytes, marker
// included (ENGINE.md §3.14).
func trimSeed(text string, maxTokens int) string {
	allowed := max(maxTokens-1, 0) * 4
	if TextLen(text) <= allowed {
		return text
	}
	if allowed < len(seedTruncMarker) {
		return ""
	}
	return truncateUTF8(text, allowed-len(seedTruncMarker)) + seedTruncMarker
}

// seed fills every global-layout region that declares a seed.
func (c *Context) seed() error {
	taken := false
	var callerKeys []string
	for _, d := range c.bp.RegionDefs {
		s := d.Seed
		if s == nil {
			continue
		}
		if s.Form == SeedCaller {
			callerKeys = append(callerKeys, s.Caller)
			if s.Caller == "task" {
				taken = true
			}
		}
		text, err := c.seedText(d, s)
		if err != nil {
			return fmt.Errorf("seed region '%s': %w", d.Name, err)
		}
		if text == "" {
			if d.Required && s.Form != SeedCaller {
				c.warn(d.Name, "required region's seed produced nothing")
			}
			continue
		}
		r := c.byName[d.Name]
		text = trimSeed(text, r.max)
		if text == "" {
			c.emit(Event{Kind: EventDrop, Region: d.Name, Message: "seed does not fit the region at all"})
			continue
		}
		if err := c.write(r, c.newEntry(EntryText, text)); err != nil {
			c.emit(Event{Kind: EventDrop, Region: d.Name, Message: "seed not stored: " + err.Error()})
		}
	}
	if c.opt.Task != "" && !taken {
		sort.Strings(callerKeys)
		return fmt.Errorf("new context: blueprint %s refuses a task: %w; it reads the caller inputs [%s]", c.bp.Name, ErrTaskNotAccepted, strings.Join(callerKeys, ", "))
	}
	return nil
}

func (c *Context) seedText(d *RegionDef, s *Seed) (string, error) {
	switch s.Form {
	case SeedCaller:
		if s.Caller == "task" {
			return c.opt.Task, nil
		}
		return c.opt.Inputs[s.Caller], nil
	case SeedLiteral:
		return s.Text, nil
	case SeedFiles:
		var parts []string
		for _, f := range s.Files {
			p, err := c.inWorkDir(f)
			if err != nil {
				return "", err
			}
			if p == "" {
				continue
			}
			data, err := os.ReadFile(p)
			if err != nil {
				continue // a missing optional file seeds nothing
			}
			parts = append(parts, fmt.Sprintf("--- %s ---\n%s", f, data))
		}
		return strings.Join(parts, "\n\n"), nil
	case SeedGlob:
		if c.opt.WorkDir == "" {
			c.warn(d.Name, "glob seed skipped: no working directory")
			return "", nil
		}
		matches, err := globWorkDir(c.opt.WorkDir, s.Pattern)
		if err != nil {
			return "", err
		}
		var parts []string
		for _, m := range matches {
			data, err := os.ReadFile(filepath.Join(c.opt.WorkDir, filepath.FromSlash(m)))
			if err != nil {
				continue
			}
			parts = append(parts, fmt.Sprintf("--- %s ---\n%s", m, data))
		}
		return strings.Join(parts, "\n\n"), nil
	case SeedRhai:
		p, err := c.inWorkDir(s.Script)
		if err != nil || p == "" {
			return "", err
		}
		ev, ok := c.opt.Scripts.(SeedEvaluator)
		if !ok {
			c.warn(d.Name, "rhai seed skipped: the script engine cannot evaluate seeds")
			return "", nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("cannot read rhai seed '%s': %w", s.Script, err)
		}
		return ev.EvalSeed(s.Script, src)
	case SeedCommand:
		if !c.opt.AllowCommandSeeds {
			c.warn(d.Name, fmt.Sprintf("command seed %q refused: command seeds are not allowed for this run", s.Command))
			return "", nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", s.Command)
		cmd.Dir = c.opt.WorkDir
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("command seed %q: %w", s.Command, err)
		}
		return out.String(), nil
	case SeedTools:
		c.warn(d.Name, fmt.Sprintf("tool seed (%s) not run: the engine has no tools", strings.Join(s.Tools, ", ")))
		return "", nil
	}
	return "", nil
}

// inWorkDir resolves a seed path inside the working directory; a path that
// leaves it is refused. "" with no error means there is no working directory.
func (c *Context) inWorkDir(p string) (string, error) {
	rel := filepath.FromSlash(p)
	if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("seed path '%s' leaves the working directory", p)
	}
	if c.opt.WorkDir == "" {
		return "", nil
	}
	return filepath.Join(c.opt.WorkDir, rel), nil
}

// globWorkDir expands a pattern with ** inside dir; every match is checked
// to stay inside.
func globWorkDir(dir, pattern string) ([]string, error) {
	if strings.HasPrefix(pattern, "/") || !filepath.IsLocal(filepath.FromSlash(strings.ReplaceAll(pattern, "**", "x"))) {
		return nil, fmt.Errorf("glob seed '%s' leaves the working directory", pattern)
	}
	re, err := globRegexp(pattern)
	if err != nil {
		return nil, err
	}
	var out []string
	err = filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if de.IsDir() {
			if de.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || !filepath.IsLocal(rel) {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if re.MatchString(rel) {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func globRegexp(pattern string) (*regexp.Regexp, error) {
	if _, err := path.Match(strings.ReplaceAll(pattern, "**", "*"), ""); err != nil {
		return nil, fmt.Errorf("glob seed '%s': %w", pattern, err)
	}
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		ch := pattern[i]
		switch {
		case ch == '*' && i+1 < len(pattern) && pattern[i+1] == '*':
			i++
			if i+1 < len(pattern) && pattern[i+1] == '/' {
				i++
				b.WriteString("(?:.*/)?")
			} else {
				b.WriteString(".*")
			}
		case ch == '*':
			b.WriteString("[^/]*")
		case ch == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// scriptCtx builds the ctx a custom-region hook sees.
func (c *Context) scriptCtx(r *region) ScriptContext {
	ents := make([]ScriptEntry, len(r.entries))
	for i, e := range r.entries {
		ents[i] = scriptEntry(e)
	}
	return ScriptContext{
		Region:          ScriptRegion{Name: r.name, Budget: r.max, CurrentTokens: r.tokens, EntryCount: len(r.entries)},
		Entries:         ents,
		StageName:       c.Stage(),
		StageIterations: c.iter,
		Model:           c.opt.Model,
		Window:          ScriptWindow{TotalTokens: c.total, MaxTokens: c.opt.Window},
	}
}

func scriptEntry(e *entry) ScriptEntry {
	return ScriptEntry{
		Content: ExpandFiller(e.content), Tokens: e.tokens, Timestamp: int64(e.stamp), Key: e.key, HasKey: e.hasKey,
		Kind: e.kind.String(), ToolCalls: e.calls, ToolCallID: e.callID, ToolName: e.tool, IsError: e.isError,
	}
}
