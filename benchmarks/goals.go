package benchmarks

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mdap-go/mdap/internal/evidence"
)

// Goal is one of the project's targets with the figure measured.
type Goal struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	// Met is "yes", "no" or "not run", or "info" for a figure shown
	// beside a goal that has no target of its own.
	Met string `json:"met"`
	// Why explains a miss or what the figure depends on.
	Why string `json:"why,omitempty"`
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

func goals(r *Report) []Goal {
	var out []Goal
	notRun := func(goal, why string) { out = append(out, Goal{Goal: goal, Met: "not run", Why: why}) }

	g := "samples per step within 2% of theory (one rival, sequential)"
	if f := r.Fidelity; f != nil {
		worst, hi := FidelityCell{}, 0.0
		for _, c := range f.Cells {
			if c.Path == "race" && c.Rivals == 1 && math.Abs(c.RelDiff) >= math.Abs(worst.RelDiff) {
				worst = c
			}
			if c.Path == "race" && c.Rivals == 1 {
				hi = max(hi, math.Abs(c.Votes.Hi/c.Theory-1), math.Abs(c.Votes.Lo/c.Theory-1))
			}
		}
		out = append(out, Goal{Goal: g,
			Measured: fmt.Sprintf("largest deviation %+.2f%% (p=%g, k=%d; %d steps per cell); every 95%% interval within %.2f%% of theory", 100*worst.RelDiff, worst.P, worst.K, worst.Votes.N, 100*hi),
			Met:      yes(math.Abs(worst.RelDiff) <= 0.02)})
	} else {
		notRun(g, "fidelity suite not run")
	}

	g = "waves at Parallel = k: at most 10% more samples than sequential"
	g2 := "waves at Parallel = k: wall time per step at most 1.3 model calls at p = 0.99, k = 3"
	if s := r.Strategies; s != nil {
		worst := 0.0
		for _, sc := range s.Scenarios {
			seq, wav := rowOf(s.Rows, sc.Name, "sequential"), rowOf(s.Rows, sc.Name, "waves")
			if seq != nil && wav != nil {
				worst = max(worst, wav.SamplesPerStep.Mean/seq.SamplesPerStep.Mean-1)
			}
		}
		out = append(out, Goal{Goal: g, Measured: fmt.Sprintf("%+.2f%% at worst over the scenarios", 100*worst), Met: yes(worst <= 0.10),
			Why: "the same samples by construction: Race tallies in index order and, with Speculate 0, never launches past the deciding index"})
		if w := wallOf(s.Wall, "p=0.99", "fixed", "waves"); w != nil {
			out = append(out, Goal{Goal: g2,
				Measured: fmt.Sprintf("%.3f model calls (95%% CI %.3f–%.3f; %.3f launch rounds, the ideal) with a fixed %s latency", w.PerStep.Mean, w.PerStep.Lo, w.PerStep.Hi, w.Rounds, s.Latency),
				Met:      yes(w.PerStep.Mean <= 1.3)})
		} else {
			notRun(g2, "no wall-time row")
		}
	} else {
		notRun(g, "strategies suite not run")
		notRun(g2, "strategies suite not run")
	}

	g = "20-disk Hanoi (1,048,575 steps) on the sim, zero wrong steps, in under 2 minutes (aim: one)"
	g1 := "20-disk Hanoi on the sim under 25 s on a quiet machine"
	g3 := "memory at 20 disks at most 1.2 times that at 12"
	g4 := "CPU per sample flat in the number of disks"
	g5 := "orchestration overhead (CPU per sample but the model's) under 20 µs"
	g6 := "journal overhead at most 1.1× wall"
	if s := r.Scale; s != nil {
		last, at12 := s.Rows[len(s.Rows)-1], scaleRow(s.Rows, 12)
		if last.Disks == 20 {
			out = append(out, Goal{Goal: g, Measured: fmt.Sprintf("%s, %d wrong steps, solved %v", last.Wall.Round(100*time.Millisecond), last.WrongSteps, last.Solved),
				Met: yes(last.WrongSteps == 0 && last.Solved && last.Wall < 2*time.Minute),
				Why: "wall time on this machine, load average " + runLoad(last, r) + " just before the run"})
			out = append(out, Goal{Goal: g1, Measured: fmt.Sprintf("%s (%.1f µs CPU per sample; load average %s just before the run)", last.Wall.Round(100*time.Millisecond), last.CPUPerSample, last.Load),
				Met: yes(last.Solved && last.Wall < 25*time.Second),
				Why: "one run, with a CPU profile of 15 s of it; a load average of 1 or more at its start means other work shared the 2 cores"})
		} else {
			notRun(g, fmt.Sprintf("quick run: %d disks at most", last.Disks))
			notRun(g1, fmt.Sprintf("quick run: %d disks at most", last.Disks))
		}
		if at12 != nil {
			ratio := last.PeakRSSMB / at12.PeakRSSMB
			goal := g3
			if last.Disks != 20 {
				// A quick run stops short of 20 disks: say what was compared.
				goal = fmt.Sprintf("memory at %d disks (quick run; the goal is at 20) at most 1.2 times that at 12", last.Disks)
			}
			out = append(out, Goal{Goal: goal, Measured: fmt.Sprintf("peak RSS %.1f MB at %d disks, %.1f MB at 12: ×%.2f; peak live heap %.1f MB and %.1f MB (×%.2f); Go runtime total %.1f MB and %.1f MB", last.PeakRSSMB, last.Disks, at12.PeakRSSMB, ratio, last.PeakHeapMB, at12.PeakHeapMB, last.PeakHeapMB/at12.PeakHeapMB, last.PeakTotalMB, at12.PeakTotalMB),
				Met: yes(ratio <= 1.2), Why: "judged on peak RSS, the memory the machine gives the process"})
			cr := last.CPUPerSample / at12.CPUPerSample
			f := s.Flat
			out = append(out, Goal{Goal: g4, Measured: fmt.Sprintf("side by side, %d alternating runs: %.1f µs at %d disks, %.1f µs at %d: ×%.2f; in the table, one run after another: %.1f µs at 12 disks (median of %d runs), %.1f µs at %d: ×%.2f", f.Runs, f.SmallCPU, f.Small, f.LargeCPU, f.Large, f.Ratio, at12.CPUPerSample, at12.Runs, last.CPUPerSample, last.Disks, cr),
				Met: yes(f.Ratio <= 1.15), Why: "judged on the side-by-side ratio, flat taken as within 15%; the prompt, the reply and the state grow with the disks (O(n) text per sample), so some growth is inherent"})
		}
		if last.Split != nil {
			dom, dv := "", 0.0
			for _, b := range Buckets {
				if b != "model" && last.Split[b] > dv {
					dom, dv = b, last.Split[b]
				}
			}
			out = append(out, Goal{Goal: g5, Measured: fmt.Sprintf("%.1f µs per sample at %d disks; the largest part: %s, %.1f µs", last.Overhead, last.Disks, dom, dv),
				Met: yes(last.Overhead < 20)})
		} else {
			notRun(g5, "no CPU profile (another profiler was running)")
		}
		out = append(out, Goal{Goal: g6, Measured: fmt.Sprintf("×%.3f wall, ×%.3f CPU (median of %d alternating runs at %d disks)", s.Journal.WallRatio, s.Journal.CPURatio, s.Journal.Runs, s.Journal.Disks),
			Met: yes(s.Journal.WallRatio <= 1.1)})
	} else {
		for _, x := range []string{g, g1, g3, g4, g5, g6} {
			notRun(x, "scale suite not run")
		}
	}
	out = append(out, engineGoals(r.EngineCost)...)
	out = append(out, feltGoals(r.Felt)...)
	if c := r.Cost; c != nil {
		out = append(out, costGoal(c))
	} else {
		notRun(costGoal(&CostResult{}).Goal, "cost suite not run")
	}
	if g := r.Guarantee; g != nil {
		out = append(out, guaranteeGoal(g))
	} else {
		notRun(guaranteeGoalText, "guarantee suite not run")
	}
	for i := range out {
		out[i].Measured = strings.TrimSpace(out[i].Measured)
	}
	return out
}

const guaranteeGoalText = "the k users are given (calibrate's, --k auto) keeps T in every guarantee cell: one-sided 95% upper bound on the failure rate <= 1 - T"

// guaranteeGoal judges the guarantee suite: met when the bound of every
// row whose k is chosen for the user (calibrate's, --k auto; not the
// k_min baselines) meets its limit; the rows that do not are named.
func guaranteeGoal(g *GuaranteeResult) Goal {
	met, rows, notMet, notShown := 0, 0, []string{}, []string{}
	for _, r := range g.Rows {
		if r.Policy != policyCalibrate && r.Policy != policyAuto {
			continue
		}
		rows++
		name := r.Cell + " / " + r.Policy
		switch r.Verdict {
		case evidence.Met:
			met++
		case evidence.Violated:
			notMet = append(notMet, name)
		default:
			notShown = append(notShown, name)
		}
	}
	m := fmt.Sprintf("%d of %d rows met (%d seeds per cell)", met, rows, g.Seeds)
	if len(notMet) > 0 {
		m += "; not met: " + strings.Join(notMet, ", ")
	}
	if len(notShown) > 0 {
		m += "; not shown: " + strings.Join(notShown, ", ")
	}
	return Goal{Goal: guaranteeGoalText, Measured: m, Met: yes(met == rows && rows > 0)}
}

func rowOf(rows []StrategyRow, scenario, strategy string) *StrategyRow {
	for i := range rows {
		if rows[i].Scenario == scenario && rows[i].Strategy == strategy && rows[i].NotRun == "" {
			return &rows[i]
		}
	}
	return nil
}

func wallOf(rows []WallRow, scenario, latency, strategy string) *WallRow {
	for i := range rows {
		if rows[i].Scenario == scenario && rows[i].Latency == latency && rows[i].Strategy == strategy && rows[i].NotRun == "" {
			return &rows[i]
		}
	}
	return nil
}

func scaleRow(rows []ScaleRow, disks int) *ScaleRow {
	for i := range rows {
		if rows[i].Disks == disks {
			return &rows[i]
		}
	}
	return nil
}

// runLoad is the load average just before a scale row's run, recorded with
// the row (so a report merged from several runs keeps it), or the bench
// run's start for a row without one.
func runLoad(row ScaleRow, r *Report) string {
	if row.Load != "" {
		return row.Load
	}
	return r.Machine.LoadBefore
}
