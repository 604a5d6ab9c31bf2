package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// Transport is a way to reach the simulated model: it returns the model a
// solver calls, answering oracle's prompts as cfg says, and a function that
// releases what it started. The real suite compares transports side by
// side.
type Transport func(ctx context.Context, oracle sim.Oracle, cfg sim.Config) (llms.Model, func() error, error)

// InProcess is the sim called directly.
func InProcess(_ context.Context, oracle sim.Oracle, cfg sim.Config) (llms.Model, func() error, error) {
	m, err := sim.New(oracle, cfg)
	return m, func() error { return nil }, err
}

// OverHTTP serves the sim with maker/simserver on 127.0.0.1 (a free port)
// and returns langchaingo's OpenAI client pointed at it, as
// `maker serve-sim` and `--model openai:sim --base-url` would.
func OverHTTP(ctx context.Context, oracle sim.Oracle, cfg sim.Config) (llms.Model, func() error, error) {
	return serveSim(ctx, simserver.Config{Oracle: oracle, Sim: cfg})
}

// serveSim serves cfg on 127.0.0.1 (a free port) and returns langchaingo's
// OpenAI client pointed at it, and a function that stops the server.
func serveSim(ctx context.Context, cfg simserver.Config) (llms.Model, func() error, error) {
	srv, err := simserver.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("benchmarks: listen: %w", err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	model, err := models.Open("openai:"+srv.ModelName(), models.Options{
		BaseURL: "http://" + ln.Addr().String() + "/v1", APIKey: "placeholder", Timeout: 30 * time.Second,
	})
	stop := func() error { cancel(); return <-done }
	if err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	return model, stop, nil
}

// TransportRow is one transport's cost per sample.
type TransportRow struct {
	Transport string `json:"transport"`
	NotRun    string `json:"not_run,omitempty"`
	Runs      int    `json:"runs"`
	Steps     int    `json:"steps"`
	// SamplesPerStep of the last run (over HTTP and NATS the sim draws
	// differ from in-process, not their statistics).
	SamplesPerStep float64 `json:"samples_per_step"`
	// WallPerSample and CPUPerSample (client and server: one process) are
	// medians over the runs, in microseconds; the ratios are against the
	// in-process row, run by run alternately.
	WallPerSample float64 `json:"wall_per_sample_us"`
	CPUPerSample  float64 `json:"cpu_per_sample_us"`
	WallRatio     float64 `json:"wall_ratio"`
	CPURatio      float64 `json:"cpu_ratio"`
	Solved        bool    `json:"solved"`
}

// RealResult is the real suite's result.
type RealResult struct {
	Disks int            `json:"disks"`
	K     int            `json:"k"`
	Rows  []TransportRow `json:"rows"`
}

const notWiredEngine = "no transport (Options.Engine)"

func realUnits() int { return 1 }

func runReal(ctx context.Context, o Options, tick func()) (*RealResult, error) {
	res := &RealResult{Disks: 10, K: 3}
	runs := 3
	if o.Quick {
		res.Disks, runs = 8, 2
	}
	transports := []struct {
		name string
		t    Transport
	}{{"in-process", InProcess}, {"HTTP (serve-sim, langchaingo openai)", OverHTTP}, {"NATS engine (maker/cluster)", o.Engine}}
	walls := make([][]float64, len(transports))
	cpus := make([][]float64, len(transports))
	res.Rows = make([]TransportRow, len(transports))
	cfg := sim.DefaultConfig()
	cfg.Seed = o.Seed
	for r := range runs {
		for i, tr := range transports {
			row := &res.Rows[i]
			row.Transport = tr.name
			if tr.t == nil {
				row.NotRun = notWiredEngine
				continue
			}
			model, closeFn, err := tr.t(ctx, hanoi.Oracle{}, cfg)
			if err != nil {
				return nil, fmt.Errorf("benchmarks: real: %s: %w", tr.name, err)
			}
			task, _ := hanoi.New(res.Disks)
			s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: res.K}}, Model: model}
			cpu0 := cpuTime()
			rep, err := s.Solve(ctx, task)
			cpu := cpuTime() - cpu0
			if cerr := closeFn(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, fmt.Errorf("benchmarks: real: %s: %w", tr.name, err)
			}
			walls[i] = append(walls[i], float64(rep.Wall.Nanoseconds())/1e3/float64(rep.Launched))
			cpus[i] = append(cpus[i], float64(cpu.Nanoseconds())/1e3/float64(rep.Launched))
			row.Runs, row.Steps, row.SamplesPerStep, row.Solved = r+1, rep.Steps, rep.SamplesPerStep(), task.Solved()
		}
	}
	for i := range res.Rows {
		row := &res.Rows[i]
		if row.NotRun != "" {
			continue
		}
		row.WallPerSample, row.CPUPerSample = median(walls[i]), median(cpus[i])
		var wr, cr []float64
		for r := range walls[i] {
			wr = append(wr, walls[i][r]/walls[0][r])
			cr = append(cr, cpus[i][r]/cpus[0][r])
		}
		row.WallRatio, row.CPURatio = median(wr), median(cr)
	}
	tick()
	return res, nil
}
