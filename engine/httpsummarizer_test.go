package engine

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHTTPSummarizer(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"short summary"}}]}`))
	}))
	defer srv.Close()
	s, err := NewHTTPSummarizer(srv.URL+"/v1/", "k", CompactionConfig{Model: "m", Temperature: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Summarize(SummaryRequest{Region: "codebase", Content: "lots", MaxTokens: 50})
	if err != nil || out != "short summary" {
		t.Fatal(out, err)
	}
	msgs := got["messages"].([]any)
	user := msgs[1].(map[string]any)["content"].(string)
	if got["model"] != "m" || got["max_tokens"].(float64) != 50 || !strings.HasPrefix(user, `Summarize the following content from the "codebase" context region.`) {
		t.Fatalf("%v", got)
	}
	bad, _ := NewHTTPSummarizer(srv.URL+"/v1", "wrong", CompactionConfig{})
	if _, err := bad.Summarize(SummaryRequest{Region: "r", Content: "x", MaxTokens: 5}); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatal(err)
	}
	if _, err := NewHTTPSummarizer("localhost:8000", "", CompactionConfig{}); err == nil {
		t.Fatal("URL without scheme accepted")
	}
}
