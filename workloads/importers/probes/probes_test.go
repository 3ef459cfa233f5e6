package probes

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		word string
		want Class
	}{
		{"https://github.com/ctxsim/ctxsim", ClassURL},
		{"http://x", ClassNone}, // too short
		{"/home/user/project/main.go", ClassPath},
		{"lib/spotter_web/live/session_live.ex", ClassPath},
		{"./run.sh", ClassPath},
		{"~/notes/todo", ClassPath},
		{"and/or", ClassNone},
		{"/span", ClassNone},
		{"3ea751c0", ClassHash},
		{"deadbeef", ClassNone}, // no digit: a word, not a hash
		{"1234567", ClassNumber},
		{"1748554707.332368", ClassNumber},
		{"12345", ClassNone},
		{"session_token_expiry", ClassSymbol},
		{"AshComputer.LiveView", ClassSymbol},
		{"getUserName", ClassSymbol},
		{"std::vector", ClassSymbol},
		{"index.html", ClassNone}, // a bare file name is not specific enough
		{"Phoenix", ClassNone},
		{"because", ClassNone},
	}
	for _, tt := range tests {
		t.Run(tt.word, func(t *testing.T) {
			if got := Classify(tt.word); got != tt.want {
				t.Errorf("Classify(%q) = %v, want %v", tt.word, got, tt.want)
			}
		})
	}
}

func TestWords(t *testing.T) {
	var got []string
	Words("see lib/app.ex:42:7, then run `mix test` (commit 3ea751c0b1). URL: https://hexdocs.pm/ash/Ash.html.", func(w string, c Class) {
		got = append(got, c.String()+":"+w)
	})
	want := []string{"path:lib/app.ex", "hash:3ea751c0b1", "url:https://hexdocs.pm/ash/Ash.html"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Words = %q, want %q", got, want)
	}
}

func TestErrorTexts(t *testing.T) {
	var got []string
	ErrorTexts("collecting...\nE   KeyError: 'session_token_expiry'\nok\npanic: runtime error: index out of range [3] with length 3\nerror: x", func(s string) { got = append(got, s) })
	want := []string{"'session_token_expiry'", "runtime error: index out of range [3] with length 3"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ErrorTexts = %q, want %q", got, want)
	}
}

func TestDeriver(t *testing.T) {
	d := NewDeriver()
	read := &trace.ToolCall{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":"cfg.toml"}`)}
	// The assistant names its own identifier first: never a probe.
	if p := d.Turn("I will create pkg/own/thing.go", nil); len(p) != 0 {
		t.Fatalf("own identifier probed: %+v", p)
	}
	d.Arrive("port = 8081\nsecret_name = db_password_v2\nerror: connection refused by upstream server", "e2", read)
	d.Arrive("please also check pkg/own/thing.go and app/main.go", "e3", nil)
	probes := d.Turn("Use db_password_v2 and app/main.go; it said connection refused by upstream server; pkg/own/thing.go too",
		[]trace.ToolCall{{ID: "c2", Name: "edit_file", Args: json.RawMessage(`{"path":"app/main.go","text":"x\ndb_password_v2"}`)}})
	var texts []string
	for _, p := range probes {
		texts = append(texts, p.Text)
		if !p.Derived || p.Fact == "" || p.Source == "" {
			t.Errorf("probe %+v: want derived with a fact id and source", p)
		}
	}
	want := []string{"db_password_v2", "app/main.go", "connection refused by upstream server"}
	if !reflect.DeepEqual(texts, want) {
		t.Fatalf("probes = %q, want %q (one per identifier per turn, own identifiers excluded)", texts, want)
	}
	if probes[0].Refetch == nil || probes[0].Refetch.ID != "c1" || probes[1].Refetch != nil {
		t.Errorf("refetch: tool facts carry their call, user facts none: %+v / %+v", probes[0].Refetch, probes[1].Refetch)
	}
	if probes[0].Source != "e2" || probes[1].Source != "e3" {
		t.Errorf("sources = %s, %s", probes[0].Source, probes[1].Source)
	}
	// A later turn that uses it again probes again (the need is real each time).
	if p := d.Turn("db_password_v2", nil); len(p) != 1 || p[0].Fact != probes[0].Fact {
		t.Errorf("second use: %+v", p)
	}
}

func FuzzWords(f *testing.F) {
	f.Add("see lib/app.ex:42:7 and https://x.io/a 3ea751c0b1 ::a")
	f.Fuzz(func(t *testing.T, s string) {
		Words(s, func(w string, c Class) {
			if w == "" || c == ClassNone {
				t.Fatalf("empty word or class for %q", s)
			}
		})
		ErrorTexts(s, func(string) {})
	})
}
