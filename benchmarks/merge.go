package benchmarks

import (
	"slices"
	"time"
)

// KeptRun is the run that measured suites a merged report carried over
// from an earlier report (maker bench --merge).
type KeptRun struct {
	Suites  []string  `json:"suites"`
	Command string    `json:"command"`
	Started time.Time `json:"started"`
	Quick   bool      `json:"quick"`
}

// Merge carries into r the suites of older that r did not run, each with
// its wall time and the run that measured it (r.Kept), and recomputes the
// goals. The suites r ran replace older's; r's header (command, start,
// machine) stays r's own. A suite older had itself kept keeps its
// original run. Cost: O(suites); older's results are shared, not copied.
func (r *Report) Merge(older *Report) {
	if r.SuiteWall == nil {
		r.SuiteWall = map[string]string{}
	}
	origin := map[string]int{} // suite -> index in r.Kept
	for _, s := range Suites {
		if _, ran := r.SuiteWall[s]; ran {
			continue
		}
		wall, had := older.SuiteWall[s]
		if !had || !r.take(s, older) {
			continue
		}
		r.SuiteWall[s] = wall
		run := KeptRun{Command: older.Command, Started: older.Started, Quick: older.Quick}
		for _, k := range older.Kept {
			if slices.Contains(k.Suites, s) {
				run = KeptRun{Command: k.Command, Started: k.Started, Quick: k.Quick}
			}
		}
		key := run.Command + "\x00" + run.Started.String()
		i, seen := origin[key]
		if !seen {
			i = len(r.Kept)
			origin[key] = i
			r.Kept = append(r.Kept, run)
		}
		r.Kept[i].Suites = append(r.Kept[i].Suites, s)
	}
	r.Goals = goals(r)
}

// take copies suite s's result from older into r; false when older has
// none.
func (r *Report) take(s string, older *Report) bool {
	switch s {
	case "fidelity":
		r.Fidelity = older.Fidelity
		return r.Fidelity != nil
	case "strategies":
		r.Strategies = older.Strategies
		return r.Strategies != nil
	case "guarantee":
		r.Guarantee = older.Guarantee
		return r.Guarantee != nil
	case "scale":
		r.Scale = older.Scale
		return r.Scale != nil
	case "real":
		r.Real = older.Real
		return r.Real != nil
	case "cost":
		r.Cost = older.Cost
		return r.Cost != nil
	case "observe":
		r.Observe = older.Observe
		return r.Observe != nil
	case "engine":
		r.EngineCost = older.EngineCost
		return r.EngineCost != nil
	case "goals":
		r.Felt = older.Felt
		return r.Felt != nil
	case "decompose":
		r.Decompose = older.Decompose
		return r.Decompose != nil
	case "matching":
		r.Matching = older.Matching
		return r.Matching != nil
	}
	return false
}

// kept reports whether suite s was carried over from an earlier run.
func (r *Report) kept(s string) bool {
	for _, k := range r.Kept {
		if slices.Contains(k.Suites, s) {
			return true
		}
	}
	return false
}
