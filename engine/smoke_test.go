package engine

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestSmokeCoder(t *testing.T) {
	bp, err := LoadBlueprint(filepath.Join(realBlueprints, "coder.leviath"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(bp, Options{Window: 200000, Task: "fix the flaky test in pkg/foo"})
	if err != nil {
		t.Fatal(err)
	}
	c.AddUser("please start")
	c.AddAssistant("reading", []ToolCall{{ID: "t1", Name: "read_file", Args: json.RawMessage(`{"path":"main.go"}`)}})
	r, err := c.AddToolResult(ToolResult{CallID: "t1", Tool: "read_file", Content: strings.Repeat("package main\n", 100)})
	t.Logf("%+v %v", r, err)
	req := c.Assemble()
	for _, b := range req.System {
		t.Logf("sys %s %v %v %d %q", b.Region, b.Cache, b.Volatility, b.Tokens, b.Text[:min(len(b.Text), 60)])
	}
	for _, m := range req.Messages {
		for _, b := range m.Blocks {
			t.Logf("msg %v %v %s %q", m.Role, b.Type, b.ToolCallID, b.Text[:min(len(b.Text), 60)])
		}
	}
	t.Log(c.Tokens(), req.Tokens, c.Drain())
	if err := c.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}
