package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/mdap-go/mdap/vote"
	"github.com/sourcegraph/conc/pool"
)

// MatchingResult is the matching suite's: a task whose right answer comes
// in many surface forms (the simulated model's SurfaceForms mode), voted
// with exact keys against the matchers its answer contract declares
// (docs/matching.md), beside the same model answering in one form.
type MatchingResult struct {
	// Steps per run, Seeds runs per row, P the model's p, K the margin,
	// Forms the surface forms of the right answer.
	Steps int     `json:"steps"`
	Seeds int     `json:"seeds"`
	P     float64 `json:"p"`
	K     int     `json:"k"`
	Forms int     `json:"forms"`
	// Rows: one form with exact keys; the forms with declared matching;
	// the forms with exact keys.
	Rows []MatchingRow `json:"rows"`
}

// MatchingRow is one row of the matching suite.
type MatchingRow struct {
	Model string `json:"model"`
	Keys  string `json:"keys"`
	// Samples drawn over every run; Decided steps; Wrong of them decided
	// on a wrong answer; Undecided runs that stopped on a step that spent
	// its budget.
	Samples   int `json:"samples"`
	Decided   int `json:"decided"`
	Wrong     int `json:"wrong"`
	Undecided int `json:"undecided"`
	// PerStep is Samples / Decided.
	PerStep float64 `json:"samples_per_step"`
}

// matchingSurface is the suite's task: a city (text), a temperature
// (number within 0.5) and tags (a set); annotated false is the same
// contract without the annotations.
func matchingSurface(steps int, annotated bool) (*spec.Spec, error) {
	ann := func(s string) string {
		if !annotated {
			return ""
		}
		return `, "x-mdap-match": ` + s
	}
	raw := fmt.Sprintf(`{"name": "surface", "system": "Name the capital.", "initial_state": {"n": 0}, "max_steps": %d,
	  "answer": {"type": "object", "required": ["state", "done"], "properties": {
	    "done": {"type": "boolean"},
	    "state": {"type": "object", "properties": {
	      "n": {"type": "integer"},
	      "city": {"type": "string"%s},
	      "temp": {"type": "number"%s},
	      "tags": {"type": "array", "items": {"type": "string"}%s}}}}}}`,
		steps+1, ann(`"text"`), ann(`{"kind": "number", "tolerance": 0.5}`), ann(`"set"`))
	return spec.Parse([]byte(raw))
}

// matchingOracle answers the task for the simulated model: Paris, 21
// degrees, tags eu and fr; its 32 surface forms are the city in four
// spellings, the temperature in four formats within the tolerance and
// the tags in either order.
type matchingOracle struct{ steps int }

func (o matchingOracle) answer(step int, city, temp, tags string) string {
	return fmt.Sprintf(`{"state": {"n": %d, "city": %q, "temp": %s, "tags": %s}, "done": %v}`, step+1, city, temp, tags, step+1 >= o.steps)
}

func (o matchingOracle) Correct(q sim.Query) (string, error) {
	return o.answer(q.Step, "Paris", "21", `["eu", "fr"]`), nil
}

func (o matchingOracle) Wrong(q sim.Query, v int) (string, error) {
	return o.answer(q.Step, "Lyon", fmt.Sprint(25+v%4), `["eu"]`), nil
}

func (o matchingOracle) Surface(q sim.Query, f int) (string, error) {
	tags := `["eu", "fr"]`
	if (f/16)%2 == 1 {
		tags = `["fr", "eu"]`
	}
	return o.answer(q.Step, []string{"Paris", "paris.", " PARIS ", "Paris!"}[f%4],
		[]string{"21", "21.000000000000004", "21.2", "20.9"}[(f/4)%4], tags), nil
}

func matchingUnits(quick bool) int { return 3 * matchingSeeds(quick) }

func matchingSeeds(quick bool) int {
	if quick {
		return 5
	}
	return 40
}

func runMatching(ctx context.Context, o Options, tick func()) (*MatchingResult, error) {
	const steps, p, k, forms = 30, 0.8, 3, 32
	res := &MatchingResult{Steps: steps, Seeds: matchingSeeds(o.Quick), P: p, K: k, Forms: forms}
	for _, r := range []struct {
		model, keys string
		annotated   bool
		forms       int
	}{
		{"one form", "exact", false, 0},
		{fmt.Sprintf("%d forms", forms), "declared matching", true, forms},
		{fmt.Sprintf("%d forms", forms), "exact", false, forms},
	} {
		s, err := matchingSurface(steps, r.annotated)
		if err != nil {
			return nil, err
		}
		row := MatchingRow{Model: r.model, Keys: r.keys}
		runs := make([]MatchingRow, res.Seeds)
		pl := pool.New().WithErrors().WithContext(ctx).WithMaxGoroutines(o.workers())
		for seed := range res.Seeds {
			pl.Go(func(ctx context.Context) error {
				defer tick()
				model, err := sim.New(matchingOracle{steps: steps}, sim.Config{Seed: o.Seed*1_000_003 + uint64(seed), P: p, WrongAnswers: 4, SurfaceForms: r.forms})
				if err != nil {
					return err
				}
				var run MatchingRow
				solver := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: k, MaxSamples: 60}}, Model: model,
					Progress: func(e maker.Event) {
						st, _ := e.Record.Winner.Value.(map[string]any)["state"].(map[string]any)
						city, _ := st["city"].(string)
						if !strings.EqualFold(strings.Trim(city, " .!"), "paris") {
							run.Wrong++
						}
					}}
				rep, err := solver.Solve(ctx, spec.New(s))
				run.Samples, run.Decided = rep.Launched, rep.Steps
				if err != nil {
					if !errors.Is(err, vote.ErrUndecided) {
						return err
					}
					run.Undecided = 1
				}
				runs[seed] = run
				return nil
			})
		}
		if err := pl.Wait(); err != nil {
			return nil, err
		}
		for _, run := range runs { // summed in seed order: the same figures whatever finished first
			row.Samples += run.Samples
			row.Decided += run.Decided
			row.Wrong += run.Wrong
			row.Undecided += run.Undecided
		}
		if row.Decided > 0 {
			row.PerStep = float64(row.Samples) / float64(row.Decided)
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// writeMatching renders the matching suite's table.
func writeMatching(b *strings.Builder, m *MatchingResult) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Equivalent answers (matching suite)\n\n")
	w("A spec task whose right answer (Paris, 21 degrees, tags eu and fr) the simulated model writes in one of %d surface forms (`sim.Config.SurfaceForms`: four spellings of the city, four number formats within 0.5, the tags in either order), %d runs of %d steps at p = %v, k = %d, at most 60 samples a step: voted with exact keys, and with the matchers the answer contract declares (`x-mdap-match`: text, number within 0.5, set; docs/matching.md), beside the same model answering in one form. Samples per step are over the decided steps; a run stops at its first undecided step.\n\n", m.Forms, m.Seeds, m.Steps, m.P, m.K)
	w("| model | keys | samples per step | wrong steps | decided steps | runs undecided |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, r := range m.Rows {
		w("| %s | %s | %.2f | %d | %d | %d of %d |\n", r.Model, r.Keys, r.PerStep, r.Wrong, r.Decided, r.Undecided, m.Seeds)
	}
	w("\n")
}
