package memtool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
)

// A Tool is the memory tool of the official Go SDK's tool runner: pass it
// in the runner's tools and Definition() in the request's Tools, so that
// the model is offered the Anthropic-defined memory_20250818 tool (with the
// description and schema Claude was trained on) rather than a custom tool
// of the same name.
var _ anthropic.BetaTool = (*Tool)(nil)

// Definition is the tool entry of a Messages request for the memory tool.
func Definition() anthropic.BetaToolUnionParam {
	return anthropic.BetaToolUnionParam{OfMemoryTool20250818: &anthropic.BetaMemoryTool20250818Param{}}
}

// Name is the name the memory tool must have.
func (t *Tool) Name() string { return "memory" }

// Description is used only if the request lacks Definition(): the runner
// then offers the tool as a custom one.
func (t *Tool) Description() string {
	return "Memory that persists across conversations, under /memories: view a directory or a file, create a file, str_replace text in it, insert lines, delete or rename files and directories."
}

// InputSchema is the memory tool's input, for the same fallback.
func (t *Tool) InputSchema() anthropic.BetaToolInputSchemaParam {
	str := map[string]any{"type": "string"}
	return anthropic.BetaToolInputSchemaParam{
		Properties: map[string]any{
			"command":     map[string]any{"type": "string", "enum": []string{"view", "create", "str_replace", "insert", "delete", "rename"}},
			"path":        str,
			"view_range":  map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
			"file_text":   str,
			"old_str":     str,
			"new_str":     str,
			"insert_line": map[string]any{"type": "integer"},
			"insert_text": str,
			"old_path":    str,
			"new_path":    str,
		},
		Required: []string{"command"},
	}
}

// Execute runs one tool_use input. A failed command is returned as an error,
// which the runner sends as an is_error result reading "Error: …": the
// same text Run returns.
func (t *Tool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	r := t.RunJSON(ctx, input)
	if r.IsError {
		return nil, errors.New(strings.TrimPrefix(r.Content, "Error: "))
	}
	return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: r.Content}}}, nil
}

// Answer runs the input of a tool_use block (BetaToolUseBlock.Input, or any
// value that marshals to the command's JSON) and returns the tool_result
// block to send back, for callers that run their own tool-use loop.
func (t *Tool) Answer(ctx context.Context, toolUseID string, input any) anthropic.BetaToolResultBlockParam {
	raw, ok := input.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(input); err != nil {
			r := fail("The memory tool's input is not a valid command: %v", err)
			return anthropic.NewBetaToolResultTextBlockParam(toolUseID, r.Content, true)
		}
	}
	r := t.RunJSON(ctx, raw)
	return anthropic.NewBetaToolResultTextBlockParam(toolUseID, r.Content, r.IsError)
}
