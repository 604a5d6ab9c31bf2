package executor

import (
	"context"
	"encoding/json"

	"github.com/mdap-go/mdap/categories"
)

// indexTool is list_tool_categories: the inventory of what this executor
// has loaded, withheld or lacks. It belongs to no category and is always
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
	b, err := json.Marshal(t.e.Inventory())
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Inventory is what the index tool returns: the taxonomy's inventory under
// this executor's policy, where a tool is available when it is registered
// here. Cost: that of [categories.Taxonomy.Inventory].
func (e *Executor) Inventory() categories.Inventory {
	return e.tax.Inventory(e.policy, e.available)
}
