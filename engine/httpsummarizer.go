package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Default compaction prompts of the reference runtime (lifecycle.rs).
const (
	DefaultCompactionSystemPrompt = "You are a context compaction assistant. Your job is to summarize content concisely while preserving all key information, decisions, and actionable items. Never lose critical details."
	compactionUserPrompt          = "Summarize the following content from the %q context region. Preserve key facts, decisions, code snippets, and actionable items. Be concise but thorough.\n\n%s"
)

// HTTPSummarizer summarises through an OpenAI-compatible chat completions
// endpoint, for users who run a model (D9). It sends the reference runtime's
// prompts.
type HTTPSummarizer struct {
	endpoint     string
	model        string
	apiKey       string
	systemPrompt string
	temperature  float64
	client       *http.Client
}

// NewHTTPSummarizer validates the base URL (for example
// "http://localhost:8000/v1") and takes the model, system prompt and
// temperature from the blueprint's [compaction] table.
func NewHTTPSummarizer(baseURL, apiKey string, cfg CompactionConfig) (*HTTPSummarizer, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("summariser: base URL %q must be an http(s) URL such as http://localhost:8000/v1", baseURL)
	}
	sp := cfg.SystemPrompt
	if sp == "" {
		sp = DefaultCompactionSystemPrompt
	}
	return &HTTPSummarizer{
		endpoint: strings.TrimRight(baseURL, "/") + "/chat/completions", model: cfg.Model, apiKey: apiKey,
		systemPrompt: sp, temperature: cfg.Temperature, client: &http.Client{Timeout: 120 * time.Second},
	}, nil
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Summarize implements Summarizer.
func (h *HTTPSummarizer) Summarize(req SummaryRequest) (string, error) {
	body, err := json.Marshal(map[string]any{
		"model":       h.model,
		"messages":    []chatMessage{{"system", h.systemPrompt}, {"user", fmt.Sprintf(compactionUserPrompt, req.Region, ExpandFiller(req.Content))}},
		"max_tokens":  req.MaxTokens,
		"temperature": h.temperature,
	})
	if err != nil {
		return "", fmt.Errorf("summariser: %w", err)
	}
	hr, err := http.NewRequest(http.MethodPost, h.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("summariser: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if h.apiKey != "" {
		hr.Header.Set("Authorization", "Bearer "+h.apiKey)
	}
	resp, err := h.client.Do(hr)
	if err != nil {
		return "", fmt.Errorf("summariser: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return "", fmt.Errorf("summariser: reading the response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("summariser: %s answered %s: %.200s", h.endpoint, resp.Status, raw)
	}
	var out struct {
		Choices []struct {
			Message chatMessage `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("summariser: response is not a chat completion: %w", err)
	}
	if len(out.Choices) == 0 {
		return "", fmt.Errorf("summariser: response has no choices")
	}
	return out.Choices[0].Message.Content, nil
}
