package runsetup

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/vote"
)

// guardsName is where the field errors of Guards come from.
const guardsName = "runsetup.Guards"

// Guards are the settings of the rules that guard what a vote lets
// through, as a command line gives them, each field tagged with its flag
// (internal/flagbind): the write rule for side-effect calls in its text
// form, the red-flag-rate alarm, the self-correction red flag and the
// tool-first vote (maker.Config's Writes, FlagAlarm, Flags.SelfCorrection
// and ToolFirst). Start from [DefaultGuards]; [Guards.Apply] sets them.
type Guards struct {
	// WriteK is the write rule's margins: each K, the margin for every
	// category, or CATEGORY=K, one side-effect category's (a category
	// not read-only); K is 1 to vote.MaxK. The usage's CATEGORIES is
	// the command's to fill in (SideEffectCategories).
	WriteK []string `flag:"write-k" usage:"write rule: a side-effect tool call (a category not read-only) runs only when no valid vote among the first k disagreed; otherwise the step is decided again at this margin (default twice --k). K alone for every category; CATEGORY=K for one (CATEGORIES); give it several times"`
	// WriteAnyMargin turns the write rule off; then no WriteK may be given.
	WriteAnyMargin bool `flag:"write-any-margin" usage:"turn the write rule off: a side-effect call runs on a first-to-ahead-by-k win like any answer"`
	// FlagAlarm is "on" or "off".
	FlagAlarm string `flag:"flag-alarm" usage:"red-flag-rate alarm: on (a decided step whose red flags are far too many for the run's rate so far is not taken: the run stops, or the --escalate policy decides it again) or off"`
	// FlagAlarmLevel and FlagAlarmHistory are maker.FlagAlarm's Level
	// and History, which check them; their defaults are the library's.
	FlagAlarmLevel   float64 `flag:"flag-alarm-level" usage:"with --flag-alarm on: the chance, at the run's rate, of at least the step's red flags below which the step is an alarm, in (0, 1)"`
	FlagAlarmHistory int     `flag:"flag-alarm-history" usage:"with --flag-alarm on: samples the run draws before any step is judged"`
	SelfCorrection   bool    `flag:"self-correction" usage:"red-flag a reply that corrects itself mid-way (\"Wait,\", \"Actually,\", \"I made a mistake\", ... outside its quoted strings): it never votes. Off by default: a model that thinks aloud says such words too"`
	ToolFirst        bool    `flag:"tool-first" usage:"vote a tool call hierarchically: first the tool (an answer without a call votes as itself), then its arguments among that tool's samples, so that split arguments do not lose the tool to a rival that repeats"`
}

// DefaultGuards are the guards of a run that sets none: the write rule
// at its default margins, the alarm on at the library's level and history.
func DefaultGuards() Guards {
	return Guards{FlagAlarm: "on", FlagAlarmLevel: maker.DefaultFlagAlarmLevel, FlagAlarmHistory: maker.DefaultFlagAlarmHistory}
}

// Apply sets the guards in cfg. A setting at its default stays a zero
// value there, so a run that sets no guard has the settings (and journal)
// it had before them. cfg's own Validate checks the alarm's level and
// history.
//
// Errors: a *fielderr.Error wrapping fielderr.ErrConfig, cfg unchanged:
// FlagAlarm neither "on" nor "off"; the refused margin WriteK[i] (a
// number out of range, a category unknown or read-only, the margin of
// every category or of one category given twice), or WriteK and
// WriteAnyMargin, with nil values, given together. Cost: linear in WriteK.
func (g Guards) Apply(cfg *maker.Config) error {
	w, err := g.writeRule()
	if err != nil {
		return err
	}
	if g.FlagAlarm != "on" && g.FlagAlarm != "off" {
		return fielderr.New(guardsName, "FlagAlarm", g.FlagAlarm, "use on or off")
	}
	cfg.Writes, cfg.Flags.SelfCorrection, cfg.ToolFirst = w, g.SelfCorrection, g.ToolFirst
	cfg.FlagAlarm = maker.FlagAlarm{Off: g.FlagAlarm == "off"}
	if !cfg.FlagAlarm.Off && g.FlagAlarmLevel != maker.DefaultFlagAlarmLevel {
		cfg.FlagAlarm.Level = g.FlagAlarmLevel
	}
	if !cfg.FlagAlarm.Off && g.FlagAlarmHistory != maker.DefaultFlagAlarmHistory {
		cfg.FlagAlarm.History = g.FlagAlarmHistory
	}
	return nil
}

// writeRule reads the write rule (maker.WriteRule) of WriteK and
// WriteAnyMargin.
func (g Guards) writeRule() (maker.WriteRule, error) {
	w := maker.WriteRule{AnyMargin: g.WriteAnyMargin}
	if g.WriteAnyMargin && len(g.WriteK) > 0 {
		return w, &fielderr.Error{Config: guardsName, Fields: []fielderr.Field{{Name: "WriteK"}, {Name: "WriteAnyMargin"}},
			Fix: "the margin of a rule that is off means nothing; give one"}
	}
	for i, v := range g.WriteK {
		refuse := func(format string, a ...any) error {
			return fielderr.New(guardsName, fmt.Sprintf("WriteK[%d]", i), v, fmt.Sprintf(format, a...))
		}
		cat, num, perCat := strings.Cut(v, "=")
		if !perCat {
			num = cat
		}
		k, err := strconv.Atoi(strings.TrimSpace(num))
		if err != nil || k < 1 || k > vote.MaxK {
			return w, refuse("the margin is a number from 1 to %d (K, or CATEGORY=K)", vote.MaxK)
		}
		if !perCat {
			if w.K != 0 {
				return w, refuse("the margin for every category is given twice")
			}
			w.K = k
			continue
		}
		c, err := categories.ParseCategory(cat)
		if err != nil || c.ReadOnly() {
			return w, refuse("%q is not a category with side effects: use one of %s", cat, SideEffectCategories())
		}
		if _, dup := w.Categories[c]; dup {
			return w, refuse("category %s is given twice", c)
		}
		if w.Categories == nil {
			w.Categories = map[categories.Category]int{}
		}
		w.Categories[c] = k
	}
	return w, nil
}

// SideEffectCategories names the categories with side effects (not
// read-only), comma-separated, in categories.All's order.
func SideEffectCategories() string {
	var names []string
	for _, c := range categories.All() {
		if !c.ReadOnly() {
			names = append(names, string(c))
		}
	}
	return strings.Join(names, ", ")
}
