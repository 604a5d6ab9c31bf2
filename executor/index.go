package executor

import (
	"context"
	"encoding/json"

	"github.com/mdap-go/mdap/categories"
)

// indexTool is list_tool_categories: the report of what this executor has
// loaded, withheld or lacks. It belongs to no category and is always
// allowed ([categories.Policy.Allows] lets it through).
type indexTool struct{ e *Executor }

func (t *indexTool) Name() string                  { return categories.IndexTool }
func (t *indexTool) Category() categories.Category { return "" }
func (t *indexTool) Description() string {
	return "List every tool category and tool, and whether each is loaded (callable), withheld by this run's policy " +
		"(an operator can allow it with --tools) or unavailable in this build. Takes no arguments; always allowed."
}

// Schema accepts any object: the index tool takes no arguments, and a
// model that sends some anyway still gets the report.
func (t *indexTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

func (t *indexTool) Run(ctx context.Context, _ map[string]any) (string, error) {
	r := t.e.tax.Report(t.e.policy, t.e.available)
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
