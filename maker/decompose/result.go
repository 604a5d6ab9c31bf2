package decompose

import (
	"encoding/json"
	"time"
)

// RoleStats is one role's share of a run.
type RoleStats struct {
	// K is the role's margin.
	K int `json:"k"`
	// Decisions counts the role's decisions, Samples the model calls
	// they took, Cost their price; Samples and Cost include those of
	// decisions this call failed to make (Failed counts them).
	Decisions int     `json:"decisions"`
	Samples   int     `json:"samples"`
	Cost      float64 `json:"cost"`
	Failed    int     `json:"failed,omitempty"`
	// Wrong counts decisions the Truth says are wrong (0 without a Truth).
	Wrong int `json:"wrong"`
	// CoFailed counts decisions at co-failed nodes (Config.CoFailures),
	// Unprotected those of them decided wrong: nodes the votes could not
	// protect.
	CoFailed    int `json:"cofailed"`
	Unprotected int `json:"unprotected"`
}

// Result is a decomposition's outcome.
type Result struct {
	// Family and Input are the problem (Input canonical).
	Family string          `json:"family"`
	Input  json.RawMessage `json:"input"`
	// Answer is the root's answer, canonical JSON.
	Answer json.RawMessage `json:"answer"`
	// Correct is the family's Checker's verdict, nil without one.
	Correct *bool `json:"correct,omitempty"`
	// Samples and Cost are the totals over every decision (journaled
	// ones included, with what they took when decided), and over the
	// decisions this call failed to make (their samples launched). (A decision a crash interrupted is not
	// journaled, so what it spent before the crash is not in a resumed
	// run's totals.)
	Samples int     `json:"samples"`
	Cost    float64 `json:"cost"`
	// Roles is each role's share.
	Roles map[Role]*RoleStats `json:"roles"`
	// Nodes counts the tree's nodes, Depth its deepest level (root 0).
	Nodes int `json:"nodes"`
	Depth int `json:"depth"`
	// Wrong and Unprotected are the sums over the roles.
	Wrong       int `json:"wrong"`
	Unprotected int `json:"unprotected"`
	// Resumed counts decisions read back from the journal.
	Resumed int `json:"resumed"`
	// Plan is the failure budget the k came from.
	Plan Plan `json:"plan"`
	// Wall is this call's time; CriticalPath the longest chain of
	// decisions' times from the root to a leaf (what the tree would take
	// with every sibling in parallel and no overhead).
	Wall         time.Duration `json:"wall_ns"`
	CriticalPath time.Duration `json:"critical_path_ns"`
}

// add counts one decision into the result.
func (r *Result) add(rec Record, resumed bool) {
	st := r.Roles[rec.Role]
	st.Decisions++
	st.Samples += rec.Samples
	st.Cost += rec.Cost
	r.Samples += rec.Samples
	r.Cost += rec.Cost
	if rec.Wrong {
		st.Wrong++
		r.Wrong++
	}
	if rec.CoFailed {
		st.CoFailed++
		if rec.Wrong {
			st.Unprotected++
			r.Unprotected++
		}
	}
	if resumed {
		r.Resumed++
	}
}

// failed counts what a decision that failed spent.
func (r *Result) failed(role Role, samples int, cost float64) {
	if st := r.Roles[role]; st != nil {
		st.Failed++
		st.Samples += samples
		st.Cost += cost
	}
	r.Samples += samples
	r.Cost += cost
}
