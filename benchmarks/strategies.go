package benchmarks

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/mdap-go/mdap/vote/laws"
	"github.com/tmc/langchaingo/llms"
	"golang.org/x/sync/errgroup"
)

// MarginPolicy chooses a step's margin from the run's votes so far: the
// valid votes that went to their step's winner and all valid votes (the
// shape of adaptive.Policy.K on the calibrate branch).
type MarginPolicy func(step, winnerVotes, valid int) int

// strategy decides one step of a vote-level experiment. It returns the
// samples paid for, whether the winner was right, and the launch rounds
// (waves of draws, each awaited at least in part).
type strategy struct {
	name, rule string
	decide     func(ctx context.Context, model llms.Model, step, k int, st *adaptiveState) (samples int, right bool, rounds int, err error)
}

// adaptiveState carries the votes adaptive k learns from, step to step.
type adaptiveState struct {
	policy             MarginPolicy
	winnerVotes, valid int
	kSum               int
}

func raceStrategy(name, rule string, cfg func(k int) vote.Config) strategy {
	return strategy{name: name, rule: rule, decide: func(ctx context.Context, model llms.Model, step, k int, _ *adaptiveState) (int, bool, int, error) {
		res, err := raceStep(ctx, cfg(k), model, step)
		return res.Launched, res.Winner, res.Rounds, err
	}}
}

// strategies are the rules compared, in report order.
func strategies() []strategy {
	return []strategy{
		raceStrategy("sequential", "first-to-ahead-by-k, one sample at a time (Parallel 1, the paper)",
			func(k int) vote.Config { return vote.Config{K: k, Parallel: 1} }),
		raceStrategy("waves", "first-to-ahead-by-k in waves (Parallel = k)",
			func(k int) vote.Config { return vote.Config{K: k, Parallel: k} }),
		raceStrategy("waves+spec1", "waves, one draw speculated past the need (Speculate 1, Parallel k+1)",
			func(k int) vote.Config { return vote.Config{K: k, Parallel: k + 1, Speculate: 1} }),
		raceStrategy("waves+spec2", "waves, two draws speculated (Speculate 2, Parallel k+2)",
			func(k int) vote.Config { return vote.Config{K: k, Parallel: k + 2, Speculate: 2} }),
		{name: "batch4", rule: "first-to-ahead-by-k over fixed batches of 4, each awaited whole before tallying", decide: batchDecide(4)},
		{name: "majority(2k-1)", rule: "plain majority (plurality) of 2k-1 samples drawn at once", decide: majorityDecide},
		{name: "first-to-k", rule: "the first answer with k votes wins, one sample at a time", decide: firstToKDecide},
		{name: "adaptive", rule: "first-to-ahead-by-k in waves, k chosen per step from the run's votes (adaptive.Policy, planning a 1,048,575-step run at target 0.95; Options.Adaptive)", decide: adaptiveDecide},
	}
}

// drawAll draws indices first..first+n-1 at once and waits for all.
func drawAll(ctx context.Context, draw vote.Drawer[bool], first, n int) []vote.Sample[bool] {
	out := make([]vote.Sample[bool], n)
	var wg sync.WaitGroup
	for j := range n {
		wg.Go(func() { out[j] = draw(ctx, first+j) })
	}
	wg.Wait()
	return out
}

func batchDecide(size int) func(context.Context, llms.Model, int, int, *adaptiveState) (int, bool, int, error) {
	return func(ctx context.Context, model llms.Model, step, k int, _ *adaptiveState) (int, bool, int, error) {
		draw := drawer(model, step)
		votes := map[uint64]int{}
		right := map[uint64]bool{}
		for rounds := 1; rounds <= 1<<16; rounds++ {
			batch := drawAll(ctx, draw, (rounds-1)*size, size)
			for _, s := range batch {
				if err := s.Err; err != nil {
					return 0, false, 0, err
				}
				if s.Flag != nil {
					continue
				}
				votes[s.Key]++
				right[s.Key] = s.Value
				if lead(votes, s.Key) >= k {
					return rounds * size, s.Value, rounds, nil // the rest of the batch was paid for
				}
			}
		}
		return 0, false, 0, fmt.Errorf("benchmarks: batch: step %d undecided", step)
	}
}

// lead is key's margin over the best other key.
func lead(votes map[uint64]int, key uint64) int {
	other := 0
	for k, n := range votes {
		if k != key {
			other = max(other, n)
		}
	}
	return votes[key] - other
}

func majorityDecide(ctx context.Context, model llms.Model, step, k int, _ *adaptiveState) (int, bool, int, error) {
	n := 2*k - 1
	batch := drawAll(ctx, drawer(model, step), 0, n)
	votes := map[uint64]int{}
	var best uint64
	bestRight := false
	for _, s := range batch {
		if s.Err != nil {
			return 0, false, 0, s.Err
		}
		if s.Flag != nil {
			continue
		}
		votes[s.Key]++
		if votes[s.Key] > votes[best] { // ties: the earlier key keeps it
			best, bestRight = s.Key, s.Value
		}
	}
	return n, bestRight, 1, nil
}

func firstToKDecide(ctx context.Context, model llms.Model, step, k int, _ *adaptiveState) (int, bool, int, error) {
	draw := drawer(model, step)
	votes := map[uint64]int{}
	for i := 0; i < 1<<20; i++ {
		s := draw(ctx, i)
		if s.Err != nil {
			return 0, false, 0, s.Err
		}
		if s.Flag != nil {
			continue
		}
		if votes[s.Key]++; votes[s.Key] >= k {
			return i + 1, s.Value, i + 1, nil
		}
	}
	return 0, false, 0, fmt.Errorf("benchmarks: first-to-k: step %d undecided", step)
}

func adaptiveDecide(ctx context.Context, model llms.Model, step, _ int, st *adaptiveState) (int, bool, int, error) {
	k := st.policy(step, st.winnerVotes, st.valid)
	st.kSum += k
	res, err := raceStep(ctx, vote.Config{K: k, Parallel: k}, model, step)
	if err != nil {
		return 0, false, 0, err
	}
	st.winnerVotes += res.Votes[res.Key]
	st.valid += res.Valid
	return res.Launched, res.Winner, res.Rounds, nil
}

// Scenario is a simulated model the strategies are compared on.
type Scenario struct {
	Name string `json:"name"`
	// Sim is the model (its latency is set per wall-time run).
	Sim sim.Config `json:"-"`
	// P, Spread, HardAgree and Members describe it for the report.
	P         float64 `json:"p"`
	Spread    float64 `json:"difficulty_spread"`
	HardAgree float64 `json:"hard_agree"`
	Members   int     `json:"members"`
	// K is the margin; Steps the steps of its statistics run.
	K     int `json:"k"`
	Steps int `json:"steps"`
}

// StrategyRow is one strategy on one scenario, without latency.
type StrategyRow struct {
	Scenario string `json:"scenario"`
	Strategy string `json:"strategy"`
	// NotRun says why a row has no figures (a hook not wired).
	NotRun         string  `json:"not_run,omitempty"`
	Steps          int     `json:"steps"`
	SamplesPerStep Mean    `json:"samples_per_step"`
	Rounds         float64 `json:"rounds_per_step"`
	Wrong          Rate    `json:"wrong"`
	// MeanK is the mean margin (adaptive k), else the scenario's k.
	MeanK float64 `json:"mean_k"`
	// CostPerMillion is the price of a million steps at the report's
	// reference price and Hanoi's tokens per sample.
	CostPerMillion float64 `json:"cost_per_million_steps"`
}

// WallRow is one strategy's wall time per step with a simulated latency.
type WallRow struct {
	Scenario string `json:"scenario"`
	Latency  string `json:"latency"`
	Strategy string `json:"strategy"`
	NotRun   string `json:"not_run,omitempty"`
	Steps    int    `json:"steps"`
	// PerStep is the wall time per step in mean model-call latencies.
	PerStep        Mean    `json:"wall_per_step_latencies"`
	SamplesPerStep float64 `json:"samples_per_step"`
	// Rounds is the mean launch rounds per step: the wall time per step
	// in latencies if every call took exactly the fixed latency and the
	// orchestration took no time.
	Rounds float64 `json:"rounds_per_step"`
	// Speedup is the sequential strategy's wall time over this one's.
	Speedup float64 `json:"speedup"`
}

// StrategiesResult is the strategies suite's result.
type StrategiesResult struct {
	Rules     map[string]string `json:"rules"`
	Scenarios []Scenario        `json:"scenarios"`
	Rows      []StrategyRow     `json:"rows"`
	Wall      []WallRow         `json:"wall"`
	// Latency is the fixed latency, and the lognormal's median, of the
	// wall-time runs; Sigma the lognormal's.
	Latency time.Duration `json:"latency_ns"`
	Sigma   float64       `json:"sigma"`
	// Price is the reference price; TokensIn and TokensOut per sample are
	// a 20-disk Hanoi step's prompt and answer.
	Price     maker.Price `json:"price"`
	TokensIn  int         `json:"tokens_in_per_sample"`
	TokensOut int         `json:"tokens_out_per_sample"`
}

// ReferencePrice is the price the report costs a million steps at: gpt-4.1-mini's list price
// (US dollars per million tokens), the paper's model.
var ReferencePrice = maker.Price{InputPerMillion: 0.40, OutputPerMillion: 1.60}

// hanoiTokens returns the tokens of a 20-disk Hanoi step: the prompt in,
// the answer out.
func hanoiTokens() (in, out int) {
	task, _ := hanoi.New(20)
	for _, m := range task.Messages() {
		for _, p := range m.Parts {
			if t, ok := p.(llms.TextContent); ok {
				in += maker.EstimateTokens(t.Text)
			}
		}
	}
	a, _ := hanoi.CorrectAnswer(task.State(), nil)
	return in, maker.EstimateTokens(a.Text())
}

func scenarios(o Options) ([]Scenario, error) {
	steps, contested := 50_000, 25_000
	if o.Quick {
		steps, contested = 3_000, 3_000
	}
	k, err := laws.KMin(difficultyPlan, difficultyP, difficultyTarget)
	if err != nil {
		return nil, err
	}
	mk := func(name string, p float64, k, steps int, spread, agree float64, members int) Scenario {
		return Scenario{Name: name, P: p, K: k, Steps: steps, Spread: spread, HardAgree: agree, Members: members,
			Sim: sim.Config{Seed: o.Seed + 7, P: p, WrongAnswers: spreadRivals, DifficultySpread: spread, HardAgree: agree}}
	}
	return []Scenario{
		mk("p=0.99", 0.99, 3, steps, 0, 0, 1),
		mk("p=0.8", 0.8, 3, contested, 0, 0, 1),
		mk("hard steps", difficultyP, k, steps, 0.2, 1, 1),
		mk("hard steps, ensemble of 3", difficultyP, k, steps, 0.2, 1, 3),
	}, nil
}

// strategiesUnits is the number of progress ticks of the strategies suite.
func strategiesUnits() int { return 4*len(strategies()) + 4 }

func runStrategies(ctx context.Context, o Options, tick func()) (*StrategiesResult, error) {
	scens, err := scenarios(o)
	if err != nil {
		return nil, err
	}
	res := &StrategiesResult{Rules: map[string]string{}, Scenarios: scens, Latency: 10 * time.Millisecond, Sigma: 1, Price: ReferencePrice}
	if o.Quick {
		res.Latency = 4 * time.Millisecond
	}
	res.TokensIn, res.TokensOut = hanoiTokens()
	perSample := res.Price.Cost(vote.Usage{InputTokens: res.TokensIn, OutputTokens: res.TokensOut})
	strats := strategies()
	for _, s := range strats {
		res.Rules[s.name] = s.rule
	}
	res.Rows = make([]StrategyRow, len(scens)*len(strats))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.workers())
	for si, sc := range scens {
		for ti, st := range strats {
			g.Go(func() error {
				defer tick()
				row := StrategyRow{Scenario: sc.Name, Strategy: st.name}
				var ast *adaptiveState
				if st.name == "adaptive" {
					if o.Adaptive == nil {
						row.NotRun = notWiredAdaptive
						res.Rows[si*len(strats)+ti] = row
						return nil
					}
					policy, err := o.Adaptive(difficultyPlan, difficultyTarget)
					if err != nil {
						return fmt.Errorf("benchmarks: adaptive hook: %w", err)
					}
					ast = &adaptiveState{policy: policy}
				}
				model, err := stepModel(sc.Sim, sc.Members)
				if err != nil {
					return err
				}
				var samples accum
				wrong, rounds := 0, 0
				for step := range sc.Steps {
					n, right, r, err := st.decide(gctx, model, step, sc.K, ast)
					if err != nil {
						return err
					}
					samples.add(float64(n))
					rounds += r
					if !right {
						wrong++
					}
				}
				row.Steps = sc.Steps
				row.SamplesPerStep = samples.result()
				row.Rounds = float64(rounds) / float64(sc.Steps)
				row.Wrong = newRate(wrong, sc.Steps)
				row.MeanK = float64(sc.K)
				if ast != nil {
					row.MeanK = float64(ast.kSum) / float64(sc.Steps)
				}
				row.CostPerMillion = row.SamplesPerStep.Mean * 1e6 * perSample
				res.Rows[si*len(strats)+ti] = row
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Wall time: the two plain scenarios, fixed and lognormal latency,
	// every strategy of a setting at once (they sleep, side by side).
	for _, sc := range scens[:2] {
		for _, lat := range []struct {
			name string
			l    sim.Latency
			mean time.Duration
		}{
			{"fixed", sim.FixedLatency(res.Latency), res.Latency},
			{fmt.Sprintf("lognormal σ=%g", res.Sigma), sim.LognormalLatency(res.Latency, res.Sigma).Capped(50 * res.Latency), lognormalMean(res.Latency, res.Sigma, 50)},
		} {
			rows, err := wallRun(ctx, o, sc, strats, lat.name, lat.l, lat.mean)
			if err != nil {
				return nil, err
			}
			res.Wall = append(res.Wall, rows...)
			tick()
		}
	}
	return res, nil
}

const notWiredAdaptive = "no margin policy (Options.Adaptive)"

// lognormalMean is the mean of a lognormal latency of median m and
// spread sigma capped at capX medians, by numeric integration.
func lognormalMean(m time.Duration, sigma float64, capX float64) time.Duration {
	// E[min(e^{σZ}, c)] over a fine grid of Z.
	const n = 20000
	sum := 0.0
	for i := range n {
		z := -8 + 16*(float64(i)+0.5)/n
		w := 16.0 / n * normPDF(z)
		sum += w * min(expf(sigma*z), capX)
	}
	return time.Duration(float64(m) * sum)
}

func wallRun(ctx context.Context, o Options, sc Scenario, strats []strategy, latName string, lat sim.Latency, mean time.Duration) ([]WallRow, error) {
	steps := 200
	if sc.P < 0.9 {
		steps = 100
	}
	if o.Quick {
		steps /= 5
	}
	cfg := sc.Sim
	cfg.Latency = lat
	rows := make([]WallRow, len(strats))
	g, gctx := errgroup.WithContext(ctx)
	for i, st := range strats {
		g.Go(func() error {
			row := WallRow{Scenario: sc.Name, Latency: latName, Strategy: st.name, Steps: steps}
			var ast *adaptiveState
			if st.name == "adaptive" {
				if o.Adaptive == nil {
					row.NotRun = notWiredAdaptive
					rows[i] = row
					return nil
				}
				policy, err := o.Adaptive(difficultyPlan, difficultyTarget)
				if err != nil {
					return err
				}
				ast = &adaptiveState{policy: policy}
			}
			model, err := stepModel(cfg, sc.Members)
			if err != nil {
				return err
			}
			var wall accum
			samples, rounds := 0, 0
			for step := range steps {
				start := time.Now()
				n, _, r, err := st.decide(gctx, model, step, sc.K, ast)
				if err != nil {
					return err
				}
				wall.add(float64(time.Since(start)) / float64(mean))
				samples += n
				rounds += r
			}
			row.PerStep = wall.result()
			row.SamplesPerStep = float64(samples) / float64(steps)
			row.Rounds = float64(rounds) / float64(steps)
			rows[i] = row
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	seq := rows[0].PerStep.Mean
	for i := range rows {
		if rows[i].NotRun == "" && rows[i].PerStep.Mean > 0 {
			rows[i].Speedup = seq / rows[i].PerStep.Mean
		}
	}
	return rows, nil
}
