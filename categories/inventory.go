package categories

import (
	"fmt"
	"strings"
)

// State is where a tool or a category stands in a run: an [Inventory]'s
// Note says what each state means. Tools take ToolLoaded, ToolWithheld or
// ToolUnavailable; categories take the Category* states.
type State string

// The states an [Inventory] can give.
const (
	ToolLoaded      State = "loaded"
	ToolWithheld    State = "withheld"
	ToolUnavailable State = "unavailable"

	CategoryLoaded        State = "loaded"
	CategoryPartlyLoaded  State = "partly-loaded"
	CategoryNotLoadedHere State = "not-loaded-here"
	CategoryUnavailable   State = "unavailable"
)

// glossary is the one table every inventory's note is generated from:
// what a state applies to ("tool" or "category"), the state, its meaning.
// TestGlossaryMatchesEmittedStates proves, on real inventories, that it
// defines every state an inventory emits and nothing else.
var glossary = []struct {
	of      string
	state   State
	meaning string
}{
	{"tool", ToolLoaded, "this build has the tool and the policy allows it: a call may run"},
	{"tool", ToolWithheld, "this build has the tool but the policy did not select it: a call is denied; an operator can allow it with --tools"},
	{"tool", ToolUnavailable, "the tool is known but this build cannot run it: no --tools setting makes it run"},
	{"category", CategoryLoaded, "every tool of the category that this build can run is loaded (a tool it cannot run is marked unavailable on its own line)"},
	{"category", CategoryPartlyLoaded, "some tools of the category are loaded and the policy withholds others"},
	{"category", CategoryNotLoadedHere, "this build has tools of the category but the policy loaded none of them"},
	{"category", CategoryUnavailable, "this build has no tool of the category"},
}

// Inventory is what is loaded, withheld or unavailable in a run, category
// by category and tool by tool, for people (String) and for models (JSON,
// returned by the index tool).
type Inventory struct {
	// Policy is the run's policy as a --tools selection.
	Policy     string              `json:"policy"`
	Categories []InventoryCategory `json:"categories"`
	// Note explains every state an inventory can give.
	Note string `json:"note"`
}

// InventoryCategory is one category's line of an [Inventory], with the
// lines of its tools.
type InventoryCategory struct {
	Category Category        `json:"category"`
	ReadOnly bool            `json:"read_only"`
	State    State           `json:"state"`
	Tools    []InventoryTool `json:"tools"`
}

// InventoryTool is one tool's line of an [Inventory].
type InventoryTool struct {
	Name     string `json:"name"`
	ReadOnly bool   `json:"read_only"`
	State    State  `json:"state"`
}

// Inventory lists every category, in the order of [All], and every tool of
// t under policy p. available says whether this build can run a tool; nil
// means every tool is available.
//
// A tool is loaded when it is available and p allows it, withheld when it
// is available and p does not, and unavailable otherwise. A category is
// loaded when at least one of its tools is loaded and none is withheld
// (unavailable tools do not count against it), partly-loaded when some are
// loaded and some withheld, not-loaded-here when some are withheld and none
// loaded, and unavailable when none is available. Cost: O(tools) plus the
// sort of [Taxonomy.Tools].
func (t *Taxonomy) Inventory(p Policy, available func(name string) bool) Inventory {
	inv := Inventory{Policy: p.String(), Note: note()}
	tools := t.Tools()
	for _, c := range all {
		line := InventoryCategory{Category: c, ReadOnly: c.ReadOnly(), Tools: []InventoryTool{}}
		loaded, withheld := 0, 0
		for _, e := range tools {
			if e.Category != c {
				continue
			}
			s := ToolLoaded
			switch {
			case available != nil && !available(e.Name):
				s = ToolUnavailable
			case p.Allows(e) != nil:
				s = ToolWithheld
				withheld++
			default:
				loaded++
			}
			line.Tools = append(line.Tools, InventoryTool{Name: e.Name, ReadOnly: e.ReadOnly(), State: s})
		}
		switch {
		case loaded > 0 && withheld == 0:
			line.State = CategoryLoaded
		case loaded > 0:
			line.State = CategoryPartlyLoaded
		case withheld > 0:
			line.State = CategoryNotLoadedHere
		default:
			line.State = CategoryUnavailable
		}
		inv.Categories = append(inv.Categories, line)
	}
	return inv
}

func note() string {
	parts := []string{"States."}
	for _, t := range glossary {
		parts = append(parts, fmt.Sprintf("%s %s: %s.", t.of, t.state, t.meaning))
	}
	parts = append(parts, fmt.Sprintf("The tool %s belongs to no category and is always loaded.", IndexTool))
	return strings.Join(parts, " ")
}

// String renders the inventory as a table for a terminal, followed by the
// glossary.
func (r Inventory) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "policy: %s\n", r.Policy)
	for _, c := range r.Categories {
		ro := "side effects"
		if c.ReadOnly {
			ro = "read-only"
		}
		fmt.Fprintf(&b, "%-16s %-16s %s\n", c.Category, c.State, ro)
		for _, t := range c.Tools {
			fmt.Fprintf(&b, "  %-14s %s\n", t.Name, t.State)
		}
	}
	fmt.Fprintf(&b, "%-16s %-16s %s\n", IndexTool, ToolLoaded, "always (no category)")
	b.WriteString("\n")
	for _, t := range glossary {
		fmt.Fprintf(&b, "%-8s %-16s %s\n", t.of, t.state, t.meaning)
	}
	return b.String()
}
