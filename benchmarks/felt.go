package benchmarks

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrBar: a figure of the goals suite regressed past its bar. Report.BarErr
// wraps it, naming each figure; maker bench then exits with status 1.
var ErrBar = errors.New("a user-felt figure regressed past its bar")

// The ways a FeltGoal's figure is judged.
const (
	// AtMost: the figure meets its goal at or below Target and holds its
	// bar at or below Bar.
	AtMost = "at most"
	// AtLeast: the figure meets its goal at or above Target and holds its
	// bar at or above Bar.
	AtLeast = "at least"
	// Info: a figure shown beside a goal, with no target of its own.
	Info = "info"
)

// FeltGoal is one of issue #36's user-felt goals with the figure the goals
// suite measured: met when the figure is on the right side of Target, held
// when it is on the right side of Bar. A figure past its bar fails the
// suite (Report.BarErr); a figure between its goal and its bar is a miss
// that is reported, not a failure.
type FeltGoal struct {
	// Name is the goal in a few words; Unit how Figure reads ("×" a
	// ratio, "%" a share, "s" seconds, "" a count).
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Figure is the measured value; Judge is AtMost, AtLeast or Info.
	Figure float64 `json:"figure"`
	Judge  string  `json:"judge"`
	Target float64 `json:"target,omitempty"`
	Bar    float64 `json:"bar,omitempty"`
	// Measured says how the figure was measured and what it is made of;
	// Note why it misses, how a --quick run scales it, or where its bar
	// comes from.
	Measured string `json:"measured"`
	Note     string `json:"note,omitempty"`
	Met      bool   `json:"met"`
	Held     bool   `json:"held"`
	// quickBar, if set, is the bar of a --quick run of a timing figure:
	// a tenth of the size on a shared machine moves it more.
	quickBar float64
}

// judge sets Met and Held from Figure. A figure that is not a number (a
// measurement that divided by zero) neither meets its goal nor holds its
// bar.
func (g *FeltGoal) judge() {
	switch g.Judge {
	case AtMost:
		g.Met, g.Held = g.Figure <= g.Target, g.Figure <= g.Bar
	case AtLeast:
		g.Met, g.Held = g.Figure >= g.Target, g.Figure >= g.Bar
	default:
		g.Judge = Info
		g.Met, g.Held = true, true
	}
}

// fmtFigure writes x in g's unit.
func (g FeltGoal) fmtFigure(x float64) string {
	switch g.Unit {
	case "×":
		return fmt.Sprintf("×%.3f", x)
	case "%":
		return fmt.Sprintf("%.1f%%", 100*x)
	case "s":
		return fmt.Sprintf("%.1f s", x)
	}
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

// Verdict is the figure against its goal and bar, in words: "met", "missed
// (within its bar)" or "PAST ITS BAR".
func (g FeltGoal) Verdict() string {
	switch {
	case g.Judge == Info:
		return "info"
	case !g.Held:
		return "PAST ITS BAR"
	case !g.Met:
		return "missed (within its bar)"
	}
	return "met"
}

// limits is the goal and the bar in words: "goal ≤ ×1.020, bar ×1.100".
func (g FeltGoal) limits() string {
	if g.Judge == Info {
		return "no goal (shown beside the one above)"
	}
	op := "≤"
	if g.Judge == AtLeast {
		op = "≥"
	}
	return fmt.Sprintf("goal %s %s, bar %s", op, g.fmtFigure(g.Target), g.fmtFigure(g.Bar))
}

// FeltResult is the goals suite's result: issue #36's user-felt goals,
// measured in one run.
type FeltResult struct {
	Rows []FeltGoal `json:"rows"`
}

// BarErr returns nil when every figure of the goals suite holds its bar (or
// the suite did not run in this report's run: a suite kept by Merge was
// judged by its own run), else an error wrapping ErrBar that names each
// figure past its bar with its value.
func (r *Report) BarErr() error {
	if r.Felt == nil || r.kept("goals") {
		return nil
	}
	var past []string
	for _, g := range r.Felt.Rows {
		if !g.Held {
			past = append(past, fmt.Sprintf("%s: %s (%s)", g.Name, g.fmtFigure(g.Figure), g.limits()))
		}
	}
	if len(past) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrBar, strings.Join(past, "; "))
}

// feltGoals are the goals suite's rows as rows of the report's goals table.
func feltGoals(f *FeltResult) []Goal {
	if f == nil {
		return []Goal{{Goal: "issue #36's user-felt goals (wall per step, the engine, dollars, rate, workers, Hanoi)", Met: "not run", Why: "goals suite not run"}}
	}
	var out []Goal
	for _, g := range f.Rows {
		met := yes(g.Met)
		if g.Judge == Info {
			met = "info"
		} else if !g.Held {
			met = "no: past its bar"
		}
		out = append(out, Goal{Goal: g.Name + " (" + g.limits() + ")", Measured: g.fmtFigure(g.Figure) + ": " + g.Measured, Met: met, Why: g.Note})
	}
	return out
}

func writeFelt(b *strings.Builder, f *FeltResult) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## User-felt goals (issue #36)\n\n")
	w("Measured in one run by the goals suite (`maker bench --suite goals`), each a ratio or share a user feels, with its goal and its bar: a figure past its bar fails the suite (exit status 1); one between its goal and its bar is a miss, reported here. Bars are the issue's where it gives one; elsewhere the goal itself for a figure that meets it with room, or the figure of the first full run plus a margin for one that misses (the note says which).\n\n")
	w("| goal | figure | goal and bar | verdict | how measured | note |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, g := range f.Rows {
		w("| %s | %s | %s | %s | %s | %s |\n", g.Name, g.fmtFigure(g.Figure), g.limits(), g.Verdict(), g.Measured, g.Note)
	}
	w("\n")
}
