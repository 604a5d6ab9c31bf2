package view

import (
	"encoding/json"
	"math"

	"github.com/mdap-go/mdap/vote/laws"
)

// Budget is the run's failure budget as its votes so far spend it: the
// run's target success probability T, when it has one, and an estimate of
// the chance that a step decided so far went to a wrong answer.
//
// The estimate is vote/laws' worst case of one rival answer: every valid
// vote of the decided steps is right with probability PHat, the pooled
// share of the votes that went to the step's winner (a wrong winner
// would show as a winner with few rivals' votes, so this is an estimate,
// not a bound), and a race with margin k goes wrong with probability
// r^k/(1+r^k), r = (1-PHat)/PHat. Spent is then 1 - Π over the decided
// steps of laws.PStep(PHat, k): 1 - laws.PFull for a fixed k.
type Budget struct {
	// Target is the run's T (its --target under --k auto, or one the
	// caller set), 0 when the run has none.
	Target float64 `json:"target"`
	// PHat is the share of valid votes that went to their step's winner
	// (-1 before any valid vote).
	PHat float64 `json:"p_hat"`
	// Spent is the estimated chance that some decided step went wrong;
	// Projected the same over every step the task takes (-1 when its
	// total is unknown or no vote has been seen).
	Spent     float64 `json:"spent"`
	Projected float64 `json:"projected"`
	// Share is Spent over 1 - Target: the part of the failure budget
	// the decided steps used (-1 without a Target).
	Share float64 `json:"share"`
}

// budgetCounts are what Budget is computed from: the steps decided at
// each margin, and the valid votes and those for the winners.
type budgetCounts struct {
	stepsAtK    map[int]int
	valid, wins int
}

func (b *budgetCounts) add(k, valid, wins int) {
	if b.stepsAtK == nil {
		b.stepsAtK = map[int]int{}
	}
	b.stepsAtK[max(k, 1)]++
	b.valid += valid
	b.wins += wins
}

// budget computes the Budget of steps decided so far, of a task of total
// steps (0: unknown) run at margin k (0: adaptive).
func (b *budgetCounts) budget(target float64, total, k int) Budget {
	out := Budget{Target: target, PHat: -1, Spent: 0, Projected: -1, Share: -1}
	if b.valid > 0 {
		p := float64(b.wins) / float64(b.valid)
		out.PHat = p
		logOK, steps := 0.0, 0 // log of the chance that every decided step is right
		for k, n := range b.stepsAtK {
			logOK += float64(n) * math.Log(laws.PStep(p, k))
			steps += n
		}
		out.Spent = -math.Expm1(logOK)
		if total > 0 {
			left := max(total-steps, 0)
			kLeft := k
			if kLeft <= 0 { // adaptive: the steps left at the mean margin so far
				sum := 0
				for k, n := range b.stepsAtK {
					sum += k * n
				}
				kLeft = max(int(math.Round(float64(sum)/float64(max(steps, 1)))), 1)
			}
			out.Projected = -math.Expm1(logOK + float64(left)*math.Log(laws.PStep(p, kLeft)))
		}
	}
	if target > 0 && target < 1 {
		out.Share = out.Spent / (1 - target)
	}
	return out
}

// kAutoTarget reads the target of a journal's k_auto record ({"target":
// T, ...}), or 0.
func kAutoTarget(record []byte) float64 {
	var r struct {
		Target float64 `json:"target"`
	}
	if len(record) == 0 || json.Unmarshal(record, &r) != nil || r.Target <= 0 || r.Target >= 1 {
		return 0
	}
	return r.Target
}
