package categories

import (
	"fmt"
	"strings"
)

// State is where a tool or a category stands in a run: see [Glossary] for
// what each state means. Tools take ToolLoaded, ToolWithheld or
// ToolUnavailable; categories take the Category* states.
type State string

// The states a [Report] can give.
const (
	ToolLoaded      State = "loaded"
	ToolWithheld    State = "withheld"
	ToolUnavailable State = "unavailable"

	CategoryLoaded        State = "loaded"
	CategoryPartlyLoaded  State = "partly-loaded"
	CategoryNotLoadedHere State = "not-loaded-here"
	CategoryUnavailable   State = "unavailable"
)

// Term is one line of the glossary: a state, what it applies to and what it
// means.
type Term struct {
	Of      string `json:"of"` // "tool" or "category"
	State   State  `json:"state"`
	Meaning string `json:"meaning"`
}

// glossary is the one table every report's note is generated from.
// TestGlossaryMatchesEmittedStates proves, on real reports, that it defines
// every state a report emits and nothing else.
var glossary = []Term{
	{"tool", ToolLoaded, "this build has the tool and the policy allows it: a call may run"},
	{"tool", ToolWithheld, "this build has the tool but the policy did not select it: a call is denied; an operator can allow it with --tools"},
	{"tool", ToolUnavailable, "the tool is known but this build cannot run it: no --tools setting makes it run"},
	{"category", CategoryLoaded, "every tool of the category is loaded"},
	{"category", CategoryPartlyLoaded, "some tools of the category are loaded, others are withheld or unavailable"},
	{"category", CategoryNotLoadedHere, "this build has tools of the category but the policy loaded none of them"},
	{"category", CategoryUnavailable, "this build has no tool of the category"},
}

// Glossary returns every state a [Report] can emit with its meaning. The
// caller owns the returned slice.
func Glossary() []Term { return append([]Term(nil), glossary...) }

// Report is what is loaded, withheld or unavailable in a run, for people
// (String) and for models (JSON, returned by the index tool).
type Report struct {
	Policy     string           `json:"policy"`
	Categories []CategoryReport `json:"categories"`
	// Note explains every state, generated from [Glossary].
	Note string `json:"note"`
}

// CategoryReport is one category's line of a [Report].
type CategoryReport struct {
	Category Category     `json:"category"`
	ReadOnly bool         `json:"read_only"`
	State    State        `json:"state"`
	Tools    []ToolReport `json:"tools"`
}

// ToolReport is one tool's line of a [Report].
type ToolReport struct {
	Name     string `json:"name"`
	ReadOnly bool   `json:"read_only"`
	State    State  `json:"state"`
}

// Report builds the report of every category and tool of t under policy p.
// available says whether this build can run a tool; nil means every tool is
// available. Cost: O(tools) plus the sort of Tools.
func (t *Taxonomy) Report(p Policy, available func(name string) bool) Report {
	r := Report{Policy: p.String(), Note: note()}
	tools := t.Tools()
	for _, c := range all {
		cr := CategoryReport{Category: c, ReadOnly: c.ReadOnly(), Tools: []ToolReport{}}
		counts := map[State]int{}
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
			}
			counts[s]++
			cr.Tools = append(cr.Tools, ToolReport{Name: e.Name, ReadOnly: e.ReadOnly(), State: s})
		}
		switch {
		case counts[ToolLoaded] > 0 && counts[ToolWithheld]+counts[ToolUnavailable] == 0:
			cr.State = CategoryLoaded
		case counts[ToolLoaded] > 0:
			cr.State = CategoryPartlyLoaded
		case counts[ToolWithheld] > 0:
			cr.State = CategoryNotLoadedHere
		default:
			cr.State = CategoryUnavailable
		}
		r.Categories = append(r.Categories, cr)
	}
	return r
}

func note() string {
	var b strings.Builder
	b.WriteString("States. ")
	for i, t := range glossary {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s %s: %s.", t.Of, t.State, t.Meaning)
	}
	fmt.Fprintf(&b, " The tool %s belongs to no category and is always loaded.", IndexTool)
	return b.String()
}

// String renders the report as a table for a terminal.
func (r Report) String() string {
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
		fmt.Fprintf(&b, "%-8s %-16s %s\n", t.Of, t.State, t.Meaning)
	}
	return b.String()
}
