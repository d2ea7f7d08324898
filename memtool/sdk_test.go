package memtool_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

// TestSDKToolRunner plugs a Tool into the official Go SDK's BetaToolRunner.
// The Messages API cannot run here, so a local server plays the model: it
// asks for memory commands and records the tool_result blocks the runner
// sends back, which must be memtool's results, is_error included, for a
// tool offered as the Anthropic-defined memory_20250818.
func TestSDKToolRunner(t *testing.T) {
	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{})
	tool := memtool.New(db, st.ID, versions.Actor{Type: "api_actor", ID: "apikey_test"})

	calls := []string{
		`{"command":"create","path":"/memories/acme.md","file_text":"Acme Corp prefers email follow-ups.\n"}`,
		`{"command":"view","path":"/memories/missing.md"}`,
	}
	type request struct {
		Tools    []map[string]any `json:"tools"`
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	var mu sync.Mutex
	var requests []request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/messages") {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"no such route"}}`, http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req request
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("request body %s: %v", body, err)
		}
		mu.Lock()
		requests = append(requests, req)
		n := len(requests)
		mu.Unlock()
		content := `[{"type":"text","text":"Noted."}]`
		stop := "end_turn"
		if n <= len(calls) {
			content = fmt.Sprintf(`[{"type":"tool_use","id":"toolu_%d","name":"memory","input":%s}]`, n, calls[n-1])
			stop = "tool_use"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_%d","type":"message","role":"assistant","model":"claude-opus-5","content":%s,"stop_reason":"%s","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`, n, content, stop)
	}))
	t.Cleanup(srv.Close)

	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	runner := client.Beta.Messages.NewToolRunner([]anthropic.BetaTool{tool}, anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model:     anthropic.ModelClaudeOpus5,
			MaxTokens: 1024,
			Tools:     []anthropic.BetaToolUnionParam{memtool.Definition()},
			Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Remember that Acme Corp prefers email follow-ups."))},
		},
		DisableThread: true,
		MaxIterations: 5,
	})
	final, err := runner.RunToCompletion(ctx)
	if err != nil {
		t.Fatalf("RunToCompletion: %v", err)
	}
	if len(final.Content) != 1 || final.Content[0].Text != "Noted." {
		t.Errorf("final message %+v", final.Content)
	}
	if len(requests) != 3 {
		t.Fatalf("%d requests to the Messages API, want 3", len(requests))
	}
	if tools := requests[0].Tools; len(tools) != 1 || tools[0]["type"] != "memory_20250818" || tools[0]["name"] != "memory" {
		t.Errorf("the request offers tools %v, want only {type: memory_20250818, name: memory}", tools)
	}
	wantResults := []struct {
		text    string
		isError bool
	}{
		{"File created successfully at: /memories/acme.md", false},
		{"Error: The path /memories/missing.md does not exist. Please provide a valid path.", true},
	}
	for i, w := range wantResults {
		msgs := requests[i+1].Messages
		last := msgs[len(msgs)-1]
		var block struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
			IsError   bool   `json:"is_error"`
			Content   []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if last.Role != "user" || len(last.Content) != 1 || json.Unmarshal(last.Content[0], &block) != nil {
			t.Fatalf("request %d ends with %+v, want one tool_result", i+2, last)
		}
		if block.Type != "tool_result" || block.ToolUseID != fmt.Sprintf("toolu_%d", i+1) || block.IsError != w.isError ||
			len(block.Content) != 1 || block.Content[0].Text != w.text {
			t.Errorf("tool_result %d: %s\nwant text %q, is_error %v", i+1, last.Content[0], w.text, w.isError)
		}
	}
	page, err := db.ListVersions(ctx, st.ID, versions.VersionListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].CreatedBy == nil || page.Data[0].CreatedBy.Type != "api_actor" || page.Data[0].CreatedBy.ID != "apikey_test" {
		t.Errorf("versions %+v, want one created by the API key", page.Data)
	}
}

// TestAnswer: a loop of one's own gets the tool_result block for a tool_use
// block's input as the SDK decodes it.
func TestAnswer(t *testing.T) {
	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{})
	tool := memtool.New(db, st.ID, versions.UserActor("test"))
	var use anthropic.BetaToolUseBlock
	if err := json.Unmarshal([]byte(`{"type":"tool_use","id":"toolu_9","name":"memory","input":{"command":"view","path":"/memories/x"}}`), &use); err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(tool.Answer(ctx, use.ID, use.Input))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tool_use_id":"toolu_9","is_error":true,"content":[{"text":"Error: The path /memories/x does not exist. Please provide a valid path.","type":"text"}],"type":"tool_result"}`
	if string(got) != want {
		t.Errorf("Answer:\n got %s\nwant %s", got, want)
	}
}
