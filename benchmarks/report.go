package benchmarks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mdap-go/mdap/internal/atomicfile"
	"github.com/mdap-go/mdap/maker/journal"
)

// Files WriteDir writes: the report, its data and the charts.
const (
	ReportFile = "REPORT.md"
	DataFile   = "report.json"
)

// WriteDir writes the report into dir (created if missing): REPORT.md,
// report.json and an SVG chart per figure (see Charts). It replaces
// those files, each whole or not at all (internal/atomicfile), and touches
// nothing else; on an error, report.json (what a merge reads) is still
// the older one.
func (r *Report) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("benchmarks: %w", err)
	}
	charts, err := r.Charts()
	if err != nil {
		return err
	}
	for name, svg := range charts {
		if err := atomicfile.WriteBytes(filepath.Join(dir, name), 0o644, svg); err != nil {
			return fmt.Errorf("benchmarks: %w", err)
		}
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("benchmarks: %w", err)
	}
	// REPORT.md before report.json: report.json is what a later --merge
	// reads, so a failure between the two leaves the older report whole.
	if err := atomicfile.WriteBytes(filepath.Join(dir, ReportFile), 0o644, []byte(r.Markdown())); err != nil {
		return fmt.Errorf("benchmarks: %w", err)
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, DataFile), 0o644, append(data, '\n')); err != nil {
		return fmt.Errorf("benchmarks: %w", err)
	}
	return nil
}

// Markdown renders the report: the machine and the command, the goals with
// their figures, and each suite's tables, with links to the charts.
func (r *Report) Markdown() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# mdap benchmark report\n\n")
	mode := "full"
	if r.Quick {
		mode = "quick (--quick: small sizes for CI; figures are noisier)"
	}
	w("Run %s, %s, in %s (%s).\n\n", r.Started.UTC().Format("2006-01-02 15:04 UTC"), mode, r.Wall.Round(time.Second), suiteWalls(r))
	w("- command: `%s`\n", r.Command)
	for _, k := range r.Kept {
		mode := "full"
		if k.Quick {
			mode = "quick"
		}
		var walls []string
		for _, s := range k.Suites {
			walls = append(walls, s+" "+r.SuiteWall[s])
		}
		w("- kept from an earlier report (`--merge`): %s, measured by `%s` on %s (%s; the machine and load lines below are this run's, not that one's)\n", strings.Join(walls, ", "), k.Command, k.Started.UTC().Format("2006-01-02 15:04 UTC"), mode)
	}
	gc := fmt.Sprintf("GOGC %d", r.Machine.GCPercent)
	if r.Machine.GCPolicy != "" {
		gc = "GC: " + r.Machine.GCPolicy
	}
	w("- machine: %d CPUs (`nproc`), %s; %s, %s; %s\n", r.Machine.CPUs, r.Machine.CPUModel, r.Machine.GoVersion, r.Machine.OS, gc)
	w("- load average (1, 5, 15 min): %s at the start, %s at the end. The machine is shared: compare ratios measured side by side in this run, not absolute times across runs.\n", r.Machine.LoadBefore, r.Machine.LoadAfter)
	w("- seed %d; every simulated sample is a function of (seed, step, sample index), so the statistics are reproducible; wall times are not.\n\n", r.Seed)

	w("## Goals\n\n| goal | measured | met |\n| --- | --- | --- |\n")
	for _, g := range r.Goals {
		m := g.Measured
		if g.Why != "" {
			m += " (" + g.Why + ")"
		}
		w("| %s | %s | %s |\n", g.Goal, m, g.Met)
	}
	w("\n")
	if f := r.Felt; f != nil {
		writeFelt(&b, f)
	}
	if f := r.Fidelity; f != nil {
		writeFidelity(&b, f)
	}
	if s := r.Strategies; s != nil {
		writeStrategies(&b, s)
	}
	if s := r.Guarantee; s != nil {
		writeGuarantee(&b, s)
	}
	if s := r.Scale; s != nil {
		writeScale(&b, s)
	}
	if s := r.Real; s != nil {
		writeReal(&b, s)
	}
	if c := r.Cost; c != nil {
		writeCost(&b, c)
	}
	if s := r.Observe; s != nil {
		writeObserve(&b, s)
	}
	if s := r.EngineCost; s != nil {
		writeEngine(&b, s)
	}
	if d := r.Decompose; d != nil {
		writeDecompose(&b, d)
	}
	if m := r.Matching; m != nil {
		writeMatching(&b, m)
	}
	return b.String()
}

func suiteWalls(r *Report) string {
	var parts []string
	for _, s := range Suites {
		if d, ok := r.SuiteWall[s]; ok && !r.kept(s) {
			parts = append(parts, s+" "+d)
		}
	}
	return strings.Join(parts, ", ")
}

func pct(x float64) string { return fmt.Sprintf("%+.2f%%", 100*x) }

func rate(r Rate) string {
	if r.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3g (%d/%d; %.2g–%.2g)", r.Rate, r.Hits, r.N, r.Lo, r.Hi)
}

func writeFidelity(b *strings.Builder, f *FidelityResult) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Fidelity: the vote against the gambler's-ruin theory\n\n")
	w("Each cell decides steps with first-to-ahead-by-k, one sample at a time, on the simulated model at per-vote success p, with every error on one rival answer (`rivals 1`) or spread uniformly over eight (`rivals 8`, the sim's default). *race*: %d steps through `vote.Race` alone per cell; *hanoi*: %d run(s) of %d-disk Towers of Hanoi (%d steps each) through the whole pipeline (prompt, sim, parse, key, vote, apply). ", f.RaceSteps, f.HanoiSeeds, f.HanoiDisks, 1<<f.HanoiDisks-1)
	w("Votes are valid votes per step (no red flags here) with a 95%% interval; theory is `laws.ExpectedSamples` for one rival and `rivals.ExpectedSamples` for eight (the one-rival closed form beside it); wrong is the share of steps a wrong answer won, with its 95%% Wilson interval, against `1 - PStep` / `1 - rivals.PStep`. *z* is the deviation in standard errors; *steps for 2%%* is how many steps put the 95%% interval within 2%% of theory at the measured spread. *ok*: |z| < 3 and the theoretical wrong rate inside the rate's 3-standard-error (99.7%%) interval: with 128 checks in the two tables, a 95%% test would fail about six by chance.\n\n")
	w("![votes per step against k](fidelity_votes.svg) ![wrong winners against k](fidelity_wrong.svg)\n\n")
	for _, path := range []string{"race", "hanoi"} {
		w("### %s\n\n| rivals | p | k | votes/step (95%% CI) | theory | closed form | dev | z | steps for 2%% | wrong (95%% CI) | theory | ok |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n", path)
		for _, c := range f.Cells {
			if c.Path != path {
				continue
			}
			w("| %d | %g | %d | %.4f (%.4f–%.4f) | %.4f | %.4f | %s | %+.2f | %d | %s | %.3g | %s |\n",
				c.Rivals, c.P, c.K, c.Votes.Mean, c.Votes.Lo, c.Votes.Hi, c.Theory, c.ClosedForm, pct(c.RelDiff), c.Z, c.Draws2pc, rate(c.Wrong), c.WrongTheory, yes(c.Match()))
		}
		w("\n")
	}
	matched, total, most := 0, 0, 0
	for _, c := range f.Cells {
		total++
		if c.Match() {
			matched++
		}
		if c.Rivals == 1 {
			most = max(most, c.Draws2pc)
		}
	}
	w("%d of %d cells match theory (at 3 standard errors, about %.1f of them would fail by chance). With one rival, the hardest cell needs %d steps for a 95%% interval within 2%% of theory (*steps for 2%%*; 2.3 times that for 3 standard errors); each race cell here has %d.\n\n", matched, total, float64(2*total)*0.0027, most, f.RaceSteps)
	w("### Per-step difficulty, hard steps that agree, and ensembles\n\n")
	w("Mean p = %g with k = %d, the k that `laws.KMin` recommends for %d steps at target %g. `difficulty spread` draws each step's p from a Beta distribution around the mean (variance spread × p(1-p)); `hard agree` is the probability that a wrong reply on a hard step (p < 1/2) is the same wrong answer; an ensemble of 3 is `maker.NewEnsemble` over three sims seeded differently, so their hard steps differ (the best case for an ensemble: real models share some hard steps). Theory: the wrong rate without spread; bound: the one-rival wrong rate averaged over the step distribution (exact on hard steps whose errors all agree).\n\n", f.DifficultyP, f.DifficultyK, f.DifficultyPlanSteps, difficultyTarget)
	writeDifficulty(b, f.Difficulty)
}

func writeDifficulty(b *strings.Builder, rows []DifficultyRow) {
	fmt.Fprintf(b, "| strategy | spread | hard agree | models | steps | samples/step | wrong steps (95%% CI) | theory, no spread | bound |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, d := range rows {
		fmt.Fprintf(b, "| %s | %g | %g | %d | %d | %.3f | %s | %.2g | %.2g |\n", d.Strategy, d.Spread, d.HardAgree, d.Members, d.Steps, d.SamplesPerStep, rate(d.Wrong), d.Theory, d.Bound)
	}
	fmt.Fprintf(b, "\n")
}

func writeStrategies(b *strings.Builder, s *StrategiesResult) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Strategies: the same seeded steps under each rule\n\n")
	w("Every strategy sees the same simulated samples: sample i of step t is a function of (seed, t, i). Rules:\n\n")
	for _, st := range strategies() {
		w("- **%s**: %s\n", st.name, s.Rules[st.name])
	}
	w("\nScenarios (errors spread over eight wrong answers):\n\n")
	for _, sc := range s.Scenarios {
		w("- **%s**: p = %g, k = %d", sc.Name, sc.P, sc.K)
		if sc.Spread > 0 {
			w(", difficulty spread %g, hard agree %g", sc.Spread, sc.HardAgree)
		}
		if sc.Members > 1 {
			w(", ensemble of %d sims seeded differently", sc.Members)
		}
		w("; %d steps\n", sc.Steps)
	}
	w("\nCost of a million steps: samples per step × 10⁶ × the price of one sample, at %d input and %d output tokens per sample (a 20-disk Hanoi prompt and answer) and US$%.2f / %.2f per million tokens in / out (gpt-4.1-mini's list price, the paper's model; an assumption, change it for yours).\n\n",
		s.TokensIn, s.TokensOut, s.Price.InputPerMillion, s.Price.OutputPerMillion)
	w("![strategies](strategies.svg)\n\n")
	w("| scenario | strategy | samples/step (95%% CI) | rounds/step | wrong steps (95%% CI) | mean k | cost of 10⁶ steps |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range s.Rows {
		if r.NotRun != "" {
			w("| %s | %s | not run: %s | | | | |\n", r.Scenario, r.Strategy, r.NotRun)
			continue
		}
		w("| %s | %s | %.4f (%.4f–%.4f) | %.3f | %s | %.2f | $%.0f |\n", r.Scenario, r.Strategy, r.SamplesPerStep.Mean, r.SamplesPerStep.Lo, r.SamplesPerStep.Hi, r.Rounds, rate(r.Wrong), r.MeanK, r.CostPerMillion)
	}
	w("\n### Wall time per step with a simulated latency\n\n")
	w("In multiples of one call's mean latency: a fixed %s, or a lognormal with median %s and σ = %g (capped at 50 medians; mean %.3g medians). The strategies of one setting run at the same time, side by side (they sleep; the CPU is idle). *rounds* is the mean number of launch waves per step: the wall time with a fixed latency and free orchestration. *speedup* is sequential's wall time over the row's.\n\n",
		s.Latency, s.Latency, s.Sigma, float64(lognormalMean(s.Latency, s.Sigma, 50))/float64(s.Latency))
	w("![wall time per step](strategies_wall.svg)\n\n")
	w("| scenario | latency | strategy | steps | wall/step in calls (95%% CI) | rounds | samples/step | speedup |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range s.Wall {
		if r.NotRun != "" {
			w("| %s | %s | %s | not run | | | | |\n", r.Scenario, r.Latency, r.Strategy)
			continue
		}
		w("| %s | %s | %s | %d | %.3f (%.3f–%.3f) | %.3f | %.3f | ×%.2f |\n", r.Scenario, r.Latency, r.Strategy, r.Steps, r.PerStep.Mean, r.PerStep.Lo, r.PerStep.Hi, r.Rounds, r.SamplesPerStep, r.Speedup)
	}
	w("\n")
}

func writeScale(b *strings.Builder, s *ScaleResult) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Scale: Towers of Hanoi on the simulated model\n\n")
	w("k = %d, Parallel = k, a journal on disk (written every %d steps, synced in the background at most once a second), model `%s`. Sizes run one after another in this process; a size below 14 disks runs 2^(14-disks) times (its CPU and wall figures are medians, its memory the largest, its CPU split over all its runs), a larger one once. Peak RSS is the kernel's high-water mark of the process's resident memory (VmHWM, reset before each run). Peak live heap and Go total are sampled every 10 ms (runtime/metrics): the live heap (marked by the last GC: what the run holds) and everything the Go runtime has mapped (garbage between GCs included). CPU per sample is the process's user + system time (getrusage) over the run. The split: %s.\n\n",
		s.K, journal.DefaultSyncEvery, s.Sim, s.Method)
	w("![time per step and CPU per sample against disks](scale_time.svg) ![memory against disks](scale_memory.svg)\n\n")
	w("| disks | runs | steps | samples | wrong | solved | wall of a run | wall/step | CPU/sample | peak RSS | peak live heap | Go total |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range s.Rows {
		w("| %d | %d | %d | %d | %d | %v | %s | %.1f µs | %.1f µs | %.1f MB | %.1f MB | %.1f MB |\n", r.Disks, r.Runs, r.Steps, r.Samples, r.WrongSteps, r.Solved, r.Wall.Round(10*time.Millisecond), r.WallPerStep, r.CPUPerSample, r.PeakRSSMB, r.PeakHeapMB, r.PeakTotalMB)
	}
	w("\nCPU per sample, µs, by part:\n\n| disks |")
	for _, bk := range Buckets {
		w(" %s |", bk)
	}
	w(" all but model |\n| --- |")
	for range Buckets {
		w(" --- |")
	}
	w(" --- |\n")
	for _, r := range s.Rows {
		if r.Split == nil {
			continue
		}
		w("| %d |", r.Disks)
		for _, bk := range Buckets {
			w(" %.1f |", r.Split[bk])
		}
		w(" %.1f |\n", r.Overhead)
	}
	w("\nJournal: with against without, %d alternating runs at %d disks: wall ×%.3f, CPU ×%.3f (medians).\n\n", s.Journal.Runs, s.Journal.Disks, s.Journal.WallRatio, s.Journal.CPURatio)
	w("CPU per sample against disks, side by side: %d alternating runs of %d disks (%d times each) and %d disks: %.1f µs and %.1f µs, ratio ×%.2f (medians).\n\n", s.Flat.Runs, s.Flat.Small, s.Flat.SmallRuns, s.Flat.Large, s.Flat.SmallCPU, s.Flat.LargeCPU, s.Flat.Ratio)
}

func writeReal(b *strings.Builder, s *RealResult) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Real transports: what reaching the model costs per sample\n\n")
	w("%d-disk Hanoi, k = %d, the same sim configuration behind each transport, runs alternating transport by transport; client and server share this process, so CPU counts both. HTTP: `maker/simserver` on 127.0.0.1 and langchaingo's OpenAI client. NATS: an embedded JetStream server on 127.0.0.1 and %d `maker/cluster` workers drawing up to %d samples each. Over HTTP the server derives the sample's identity from the request, so the draws (not their statistics) differ from in-process.\n\n", s.Disks, s.K, engineWorkers, engineInflight)
	w("| transport | runs | steps | samples/step | wall/sample | CPU/sample | wall ratio | CPU ratio | solved |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range s.Rows {
		if r.NotRun != "" {
			w("| %s | not run: %s | | | | | | | |\n", r.Transport, r.NotRun)
			continue
		}
		w("| %s | %d | %d | %.3f | %.1f µs | %.1f µs | ×%.2f | ×%.2f | %v |\n", r.Transport, r.Runs, r.Steps, r.SamplesPerStep, r.WallPerSample, r.CPUPerSample, r.WallRatio, r.CPURatio, r.Solved)
	}
	w("\n")
}
