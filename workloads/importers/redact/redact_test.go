package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// The keys below are planted: realistic shapes, random characters, no real
// credentials.
func TestStringMasksPlantedSecrets(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		secret string // the part that must disappear
		keep   string // the part that must stay readable
	}{
		{"anthropic", "key: sk-ant-api03-Zq8vN2kLr5TbW1yXcPfH4mJ6dGsA9eUoRiKt.", "Zq8vN2kLr5TbW1yXcPfH4mJ6dGsA9eUoRiKt", "sk-ant-"},
		{"openai project", `OPENAI_API_KEY="sk-proj-4fGh7JkLmN0pQrStUvWxYz12AbCdEf"`, "4fGh7JkLmN0pQrStUvWxYz12AbCdEf", "sk-proj-"},
		{"openai legacy", "sk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd", "sk-"},
		{"aws key id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLQ\n", "IOSFODNN7EXAMPLQ", "AKIA"},
		{"aws secret", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYzz", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYzz", "aws_secret_access_key="},
		{"github pat", "token ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8 in env", "1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8", "ghp_"},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_"},
		{"gitlab", "glpat-xY7_zQ9-wV3uT5sR1pO0nM", "xY7_zQ9-wV3uT5sR1pO0nM", "glpat-"},
		{"google", "AIzaSyD3fG5hJ7kL9zX1cV3bN5mQ7wE9rT1yU3i", "SyD3fG5hJ7kL9zX1cV3bN5mQ7wE9rT1yU3i", "AIza"},
		{"slack bot", "SLACK_TOKEN=xoxb-123456789012-1234567890123-AbCdEfGhIjKl", "123456789012-1234567890123-AbCdEfGhIjKl", "xoxb-"},
		{"slack webhook", "https://hooks.slack.com/services/T000AAAA/B000BBBB/XXXXabcdYYYYefgh", "T000AAAA/B000BBBB/XXXXabcdYYYYefgh", "hooks.slack.com/services/"},
		{"huggingface", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "hf_"},
		{"stripe", "sk_live_51HxYzAbCdEfGhIjKlMn", "51HxYzAbCdEfGhIjKlMn", "sk_live_"},
		{"bearer", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "Bearer "},
		{"azure", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9v==;", "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9v==", "AccountKey="},
		{"private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9/f3Kx\nQ2hZ8+Lw0=\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA7bq9", "-----BEGIN RSA PRIVATE KEY-----"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			if len(got) != len(tt.in) {
				t.Fatalf("length changed: %d -> %d", len(tt.in), len(got))
			}
			if strings.Contains(got, tt.secret) {
				t.Errorf("secret survived: %q", got)
			}
			if !strings.Contains(got, tt.keep) {
				t.Errorf("readable prefix %q lost: %q", tt.keep, got)
			}
			if again := String(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestStringLeavesOrdinaryTextAlone(t *testing.T) {
	for _, in := range []string{
		"task-management-system-with-long-name-here",
		"ask-for-permission-before-running-anything",
		"the AKIA prefix alone is not a key",
		"Bearer [REDACTED]",
		"max_tokens: 32000, model: claude-sonnet-4-20250514",
		"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
		"git sha 3ea751c0b1f8d5e9a4c2 and a path /usr/lib/sk-tools",
	} {
		if got := String(in); got != in {
			t.Errorf("String(%q) = %q, want unchanged", in, got)
		}
	}
}

// A secret inside JSON text (escaped newlines in a private key) stays valid JSON.
func TestStringKeepsJSONValid(t *testing.T) {
	raw, _ := json.Marshal(map[string]string{
		"pem": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n",
		"env": "ANTHROPIC_API_KEY=sk-ant-api03-Zq8vN2kLr5TbW1yXcPfH4mJ6dGsA",
	})
	out := String(string(raw))
	if len(out) != len(raw) {
		t.Fatalf("length changed")
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("masked JSON invalid: %v\n%s", err, out)
	}
	if strings.Contains(m["pem"], "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC") || strings.Contains(m["env"], "Zq8vN2kLr5") {
		t.Errorf("secret survived: %v", m)
	}
}

func TestBytes(t *testing.T) {
	b := []byte("Bearer abcdefghijklmnopqrstuvwxyz0123")
	if !Bytes(b) || string(b) != "Bearer "+strings.Repeat("x", 30) {
		t.Errorf("Bytes: %q", b)
	}
	clean := []byte("nothing here")
	if Bytes(clean) {
		t.Errorf("Bytes reported a change in clean text")
	}
}

func FuzzString(f *testing.F) {
	f.Add("sk-ant-api03-Zq8vN2kLr5TbW1yXcPfH4mJ6dGsA9eUoRiKt")
	f.Add("-----BEGIN EC PRIVATE KEY-----\\nabc\\")
	f.Add("Bearer ")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if len(out) != len(s) {
			t.Fatalf("length changed: %d -> %d", len(s), len(out))
		}
	})
}

func BenchmarkStringClean(b *testing.B) {
	s := strings.Repeat("defmodule SpotterWeb.SessionLive do\n  use Phoenix.LiveView\n", 2000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		String(s)
	}
}
