package importers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/internal/tomlfile"
)

// The canonical tool names that blueprints route on.
const (
	ToolReadFile  = "read_file"
	ToolWriteFile = "write_file"
	ToolEditFile  = "edit_file"
	ToolBash      = "bash"
	ToolGrep      = "grep"
	ToolGlob      = "glob"
	ToolListDir   = "list_dir"
	ToolWebFetch  = "web_fetch"
	ToolWebSearch = "web_search"
	ToolTask      = "task"
	ToolTodo      = "todo"
	ToolPlan      = "plan"
	ToolThink     = "think"
	ToolFinish    = "finish"
)

// defaultTools maps the agents' own tool names to canonical ones. A key
// "name:command" applies when the call's arguments carry that "command"
// (str_replace_editor view vs create) or, for SWE-agent 0.x, when the action
// starts with that word.
var defaultTools = map[string]string{
	// Claude Code
	"Read": ToolReadFile, "Write": ToolWriteFile, "Edit": ToolEditFile, "MultiEdit": ToolEditFile,
	"NotebookEdit": ToolEditFile, "NotebookRead": ToolReadFile, "Bash": ToolBash, "BashOutput": ToolBash,
	"KillShell": ToolBash, "KillBash": ToolBash, "Grep": ToolGrep, "Glob": ToolGlob, "LS": ToolListDir,
	"WebFetch": ToolWebFetch, "WebSearch": ToolWebSearch, "Task": ToolTask, "TodoWrite": ToolTodo,
	"TodoRead": ToolTodo, "ExitPlanMode": ToolPlan,
	// Codex CLI
	"shell": ToolBash, "shell_command": ToolBash, "exec_command": ToolBash, "local_shell": ToolBash,
	"apply_patch": ToolEditFile, "update_plan": ToolTodo, "read_file": ToolReadFile, "list_dir": ToolListDir,
	"grep_files": ToolGrep, "view_image": ToolReadFile, "web_search": ToolWebSearch,
	// OpenHands
	"terminal": ToolBash, "execute_bash": ToolBash, "bash": ToolBash, "execute_ipython_cell": ToolBash,
	"file_editor": ToolEditFile, "file_editor:view": ToolReadFile, "file_editor:create": ToolWriteFile,
	"str_replace_editor": ToolEditFile, "str_replace_editor:view": ToolReadFile,
	"str_replace_editor:create": ToolWriteFile, "task_tracker": ToolTodo, "finish": ToolFinish,
	"think": ToolThink, "browser": ToolWebFetch, "fetch": ToolWebFetch, "glob": ToolGlob, "grep": ToolGrep,
	// SWE-agent 0.x commands (first word of the action)
	"open": ToolReadFile, "goto": ToolReadFile, "scroll_down": ToolReadFile, "scroll_up": ToolReadFile,
	"create": ToolWriteFile, "edit": ToolEditFile, "search_dir": ToolGrep, "search_file": ToolGrep,
	"find_file": ToolGlob, "submit": ToolFinish,
	// Aider (synthesised from its "> " lines)
	"aider_edit": ToolEditFile, "aider_run": ToolBash, "aider_add_file": ToolReadFile,
}

// ToolMap maps agents' tool names to canonical names. Build one with
// NewToolMap.
type ToolMap struct {
	extra map[string]string // the user's entries, looked up first
}

// NewToolMap returns the default table extended (and overridden) by extra.
func NewToolMap(extra map[string]string) (*ToolMap, error) {
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		v := extra[k]
		if k == "" || strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("tool map: entry %q = %q: want a non-empty name and canonical name", k, v)
		}
	}
	return &ToolMap{extra: maps.Clone(extra)}, nil
}

func (t *ToolMap) lookup(k string) (string, bool) {
	if v, ok := t.extra[k]; ok {
		return v, true
	}
	v, ok := defaultTools[k]
	return v, ok
}

// LoadToolMap reads a TOML table of extra mappings:
//
//	[tools]
//	MyReader = "read_file"
//	"str_replace_editor:view" = "read_file"
func LoadToolMap(r io.Reader, name string) (map[string]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var doc struct {
		Tools map[string]string `toml:"tools"`
	}
	if _, err := tomlfile.Decode(data, name, &doc); err != nil {
		var te *tomlfile.Error
		if errors.Is(err, tomlfile.ErrUnknownKey) && errors.As(err, &te) {
			// The likely slip is a mapping outside the table: show its shape.
			te.Err = fmt.Errorf("%w; want a [tools] table of name = \"canonical_name\"", te.Err)
		}
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(doc.Tools)) {
		if k == "" {
			return nil, tomlfile.At(data, name, "tools", errors.New("an empty tool name"))
		}
		if strings.TrimSpace(doc.Tools[k]) == "" {
			return nil, tomlfile.At(data, name, "tools."+quoteKey(k), errors.New("empty canonical name"))
		}
	}
	return doc.Tools, nil
}

// quoteKey writes a tool name as a TOML key, quoted unless it is bare.
func quoteKey(k string) string {
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return strconv.Quote(k)
		}
	}
	return k
}

// Canonical returns the canonical name of raw given its JSON arguments, and
// whether the table knew it. Unknown names map to their lower-case form.
func (t *ToolMap) Canonical(raw string, args json.RawMessage) (string, bool) {
	if len(args) > 0 && args[0] == '{' && len(args) < 1<<16 && t.hasSub(raw) {
		var a struct {
			Command any `json:"command"`
		}
		if json.Unmarshal(args, &a) == nil {
			if c, ok := a.Command.(string); ok && c != "" {
				if v, ok := t.lookup(raw + ":" + c); ok {
					return v, true
				}
			}
		}
	}
	if v, ok := t.lookup(raw); ok {
		return v, true
	}
	if v, ok := t.lookup(strings.ToLower(raw)); ok {
		return v, true
	}
	return strings.ToLower(raw), false
}

// subNames are the raw names with "name:command" entries in the default table.
var subNames = func() map[string]bool {
	m := map[string]bool{}
	for k := range defaultTools {
		if name, _, ok := strings.Cut(k, ":"); ok {
			m[name] = true
		}
	}
	return m
}()

func (t *ToolMap) hasSub(raw string) bool {
	if subNames[raw] {
		return true
	}
	for k := range t.extra {
		if strings.HasPrefix(k, raw+":") {
			return true
		}
	}
	return false
}
