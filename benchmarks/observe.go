package benchmarks

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ObserveResult is the cost of watching: the orchestration overhead per
// sample of one Hanoi run with nothing watched, with metrics on, and with
// metrics and traces at full sampling (spans batched to an exporter that
// drops them, so the figure is the SDK's work, not a network's).
type ObserveResult struct {
	Disks int          `json:"disks"`
	K     int          `json:"k"`
	Runs  int          `json:"runs"` // per configuration, interleaved
	Rows  []ObserveRow `json:"rows"`
}

// ObserveRow is one configuration: the median CPU (user plus system) and
// wall time per sample over the runs, their spread (max minus min, over
// the median), and the change of the median CPU against "off".
type ObserveRow struct {
	Config       string  `json:"config"`
	CPUPerSample float64 `json:"cpu_us_per_sample"`
	WallPerSamp  float64 `json:"wall_us_per_sample"`
	Spread       float64 `json:"cpu_spread"`
	VsOff        float64 `json:"cpu_vs_off"`
	Samples      int     `json:"samples"`
}

// observeConfigs are the configurations, in report order.
var observeConfigs = []string{"off", "metrics", "metrics+traces"}

func observeUnits(quick bool) int {
	_, runs := observeSize(quick)
	return runs * len(observeConfigs)
}

func observeSize(quick bool) (disks, runs int) {
	if quick {
		return 9, 3
	}
	return 13, 7
}

// discard is a span exporter that drops every span.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

func runObserve(ctx context.Context, o Options, tick func()) (*ObserveResult, error) {
	disks, runs := observeSize(o.Quick)
	res := &ObserveResult{Disks: disks, K: 3, Runs: runs}
	cpu := map[string][]float64{}
	wall := map[string][]float64{}
	samples := map[string]int{}
	for range runs {
		for _, c := range observeConfigs { // interleaved, so load drifts alike
			cpuPer, wallPer, n, err := observeRun(ctx, o.Seed, disks, c)
			if err != nil {
				return res, fmt.Errorf("%s: %w", c, err)
			}
			cpu[c], wall[c], samples[c] = append(cpu[c], cpuPer), append(wall[c], wallPer), n
			tick()
		}
	}
	off := median(cpu["off"])
	for _, c := range observeConfigs {
		m := median(cpu[c])
		row := ObserveRow{Config: c, CPUPerSample: m, WallPerSamp: median(wall[c]), Samples: samples[c]}
		if m > 0 {
			row.Spread = (slices.Max(cpu[c]) - slices.Min(cpu[c])) / m
		}
		if off > 0 {
			row.VsOff = m/off - 1
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// observeRun solves Hanoi once under config and returns its CPU and wall
// microseconds per sample and its samples.
func observeRun(ctx context.Context, seed uint64, disks int, config string) (cpuPer, wallPer float64, samples int, err error) {
	cfg := sim.DefaultConfig()
	cfg.Seed = seed
	model, err := sim.New(hanoi.Oracle{}, cfg)
	if err != nil {
		return 0, 0, 0, err
	}
	task, err := hanoi.New(disks)
	if err != nil {
		return 0, 0, 0, err
	}
	var tel *observe.Telemetry
	switch config {
	case "metrics":
		tel, err = observe.Setup(ctx, observe.Config{Metrics: true, Getenv: func(string) string { return "" }})
	case "metrics+traces":
		tel, err = observe.Setup(ctx, observe.Config{Metrics: true, SpanExporter: discard{}, Batch: true, Getenv: func(string) string { return "" }})
	}
	if err != nil {
		return 0, 0, 0, err
	}
	if tel != nil {
		defer tel.Shutdown(context.WithoutCancel(ctx))
	}
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: model, Observer: tel.SolverObserver()}
	runtime.GC()
	c0, t0 := cpuTime(), time.Now()
	rep, err := s.Solve(ctx, task)
	if tel != nil {
		_ = tel.Shutdown(context.WithoutCancel(ctx)) // the batched spans' export is part of the cost
	}
	took, used := time.Since(t0), cpuTime()-c0
	if err != nil {
		return 0, 0, 0, err
	}
	n := max(rep.Launched, 1)
	return float64(used.Nanoseconds()) / 1e3 / float64(n), float64(took.Nanoseconds()) / 1e3 / float64(n), rep.Launched, nil
}

func writeObserve(b *strings.Builder, s *ObserveResult) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Cost of watching\n\n")
	w("Hanoi, %d disks, k=%d, the simulated model at zero latency: the orchestration overhead per sample with nothing watched, with metrics on (`--metrics-addr`), and with metrics and traces at full sampling (spans batched to an exporter that drops them). Median of %d interleaved runs each; spread is (max - min) / median of the CPU figure, the noise to read the differences against.\n\n", s.Disks, s.K, s.Runs)
	w("| config | CPU µs / sample | wall µs / sample | spread | CPU vs off | samples |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, r := range s.Rows {
		w("| %s | %.2f | %.2f | %.0f%% | %s | %d |\n", r.Config, r.CPUPerSample, r.WallPerSamp, 100*r.Spread, pct(r.VsOff), r.Samples)
	}
	w("\n")
}
