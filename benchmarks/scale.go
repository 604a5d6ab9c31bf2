package benchmarks

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/pprof/profile"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
)

// Buckets of the CPU split, in report order. A profile sample goes to the
// first bucket one of whose frames it holds, in the order of bucketRules.
var Buckets = []string{"model", "parse", "key", "vote", "journal", "task", "gc", "stack growth", "solver+runtime"}

var bucketRules = []struct {
	bucket string
	frames []string // substrings of a frame's function name
}{
	{"gc", []string{"runtime.gcBgMarkWorker", "runtime.gcAssistAlloc", "runtime.bgsweep", "runtime.bgscavenge", "runtime.sweepone", "runtime.gcStart"}},
	{"stack growth", []string{"runtime.newstack", "runtime.copystack", "runtime.morestack"}},
	{"model", []string{"mdap/maker/sim."}},
	{"journal", []string{"maker.(*Journal)", "maker.appendStepRecord", "maker.(*fileStore)"}},
	{"key", []string{"mdap/intent.Key", "mdap/intent.Canonical"}},
	{"parse", []string{"maker.judge", ".(*Task).Decode", "maker.DecodeReply", "mdap/intent.Parse"}},
	{"task", []string{"maker/hanoi.(*Task)"}},
	{"vote", []string{"mdap/vote."}},
}

// ScaleRow is one Hanoi run of the scale suite.
type ScaleRow struct {
	Disks int `json:"disks"`
	// Runs is how many runs the row's medians are over (see repeats).
	Runs       int  `json:"runs"`
	Steps      int  `json:"steps"`
	Samples    int  `json:"samples"`
	WrongSteps int  `json:"wrong_steps"`
	Solved     bool `json:"solved"`
	// Wall is one run's wall time; WallPerStep in microseconds, the
	// median over the runs.
	Wall        time.Duration `json:"wall_ns"`
	WallPerStep float64       `json:"wall_per_step_us"`
	// CPUPerSample is the process's user+system CPU per sample, in
	// microseconds (getrusage).
	CPUPerSample float64 `json:"cpu_per_sample_us"`
	// PeakHeapMB is the largest live heap seen (runtime/metrics
	// /gc/heap/live: the heap marked live by the last GC, sampled every
	// 10ms), what the run holds; PeakTotalMB the largest memory the Go
	// runtime had mapped (/memory/classes/total), garbage included.
	PeakHeapMB  float64 `json:"peak_heap_mb"`
	PeakTotalMB float64 `json:"peak_total_mb"`
	// PeakRSSMB is the process's peak resident set size during the run
	// (Linux VmHWM, reset before the run): the memory the machine gave it.
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// Load is /proc/loadavg's three figures just before the run: a busy
	// machine stretches its wall time.
	Load string `json:"load_at_start,omitempty"`
	// Split is CPU microseconds per sample by bucket (Buckets), from a CPU
	// profile of the run; Overhead is all of it but the model's.
	Split    map[string]float64 `json:"split_us_per_sample"`
	Overhead float64            `json:"overhead_us_per_sample"`
}

// JournalCost is the journal's cost measured side by side.
type JournalCost struct {
	Disks int `json:"disks"`
	Runs  int `json:"runs"`
	// WallRatio and CPURatio are medians of with/without journal over
	// alternating runs.
	WallRatio float64 `json:"wall_ratio"`
	CPURatio  float64 `json:"cpu_ratio"`
}

// FlatCPU is CPU per sample at a small and a large size, measured side by
// side: runs alternating, the ratio's median.
type FlatCPU struct {
	Small int `json:"small_disks"`
	Large int `json:"large_disks"`
	// Runs is the alternations; each has SmallRuns runs of the small
	// size (their median) and one of the large.
	Runs      int `json:"runs"`
	SmallRuns int `json:"small_runs"`
	// SmallCPU and LargeCPU are medians, in microseconds per sample;
	// Ratio is the median of the runs' large/small ratios.
	SmallCPU float64 `json:"small_cpu_us"`
	LargeCPU float64 `json:"large_cpu_us"`
	Ratio    float64 `json:"ratio"`
}

// ScaleResult is the scale suite's result.
type ScaleResult struct {
	K       int         `json:"k"`
	Sim     string      `json:"sim"`
	Rows    []ScaleRow  `json:"rows"`
	Journal JournalCost `json:"journal"`
	Flat    FlatCPU     `json:"flat"`
	// Method says how the CPU split was measured.
	Method string `json:"method"`
}

func scaleDisks(quick bool) []int {
	if quick {
		return []int{10, 11, 12, 13, 14}
	}
	return []int{10, 12, 14, 16, 18, 20}
}

func scaleUnits(quick bool) int { return len(scaleDisks(quick)) + 1 }

func runScale(ctx context.Context, o Options, tick func()) (*ScaleResult, error) {
	res := &ScaleResult{K: 3, Method: "CPU profile (runtime/pprof, 100 Hz) of each run, from a quarter of its steps for at most 15 s (the shares of that window times the whole run's CPU per sample); a sample goes to the first bucket in the order gc, stack growth, model, journal, key, parse, task, vote whose function it has on its stack; the rest is solver+runtime (the step loop, scheduling, channel and timer work)"}
	dir, err := os.MkdirTemp("", "mdap-bench-")
	if err != nil {
		return nil, fmt.Errorf("benchmarks: scale: %w", err)
	}
	defer os.RemoveAll(dir)
	cfg := sim.DefaultConfig()
	cfg.Seed = o.Seed
	m, _ := sim.New(hanoi.Oracle{}, cfg)
	res.Sim = m.Identity()
	for _, d := range scaleDisks(o.Quick) {
		row, err := scaleRows(ctx, cfg, d, res.K, dir)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, row)
		tick()
	}
	jd, runs := 14, 3
	if o.Quick {
		jd, runs = 13, 3
	}
	var walls, cpus []float64
	for i := range runs {
		with, err := scaleRun(ctx, cfg, jd, res.K, filepath.Join(dir, fmt.Sprintf("j-%d.jsonl", i)), false)
		if err != nil {
			return nil, err
		}
		without, err := scaleRun(ctx, cfg, jd, res.K, "", false)
		if err != nil {
			return nil, err
		}
		walls = append(walls, float64(with.Wall)/float64(without.Wall))
		cpus = append(cpus, with.CPUPerSample/without.CPUPerSample)
	}
	res.Journal = JournalCost{Disks: jd, Runs: runs, WallRatio: median(walls), CPURatio: median(cpus)}
	flat := FlatCPU{Small: 12, Large: 18, Runs: 5, SmallRuns: 8}
	if o.Quick {
		flat.Small, flat.Large, flat.Runs, flat.SmallRuns = 11, 13, 3, 8
	}
	var smalls, larges, ratios []float64
	for i := range flat.Runs {
		var reps []float64
		for j := range flat.SmallRuns {
			r, err := scaleRun(ctx, cfg, flat.Small, res.K, filepath.Join(dir, fmt.Sprintf("flat-s-%d-%d.jsonl", i, j)), false)
			if err != nil {
				return nil, err
			}
			reps = append(reps, r.CPUPerSample)
		}
		large, err := scaleRun(ctx, cfg, flat.Large, res.K, filepath.Join(dir, fmt.Sprintf("flat-l-%d.jsonl", i)), false)
		if err != nil {
			return nil, err
		}
		small := median(reps)
		smalls, larges = append(smalls, small), append(larges, large.CPUPerSample)
		ratios = append(ratios, large.CPUPerSample/small)
	}
	flat.SmallCPU, flat.LargeCPU, flat.Ratio = median(smalls), median(larges), median(ratios)
	res.Flat = flat
	tick()
	return res, nil
}

// repeats is how many runs a size gets: a short run's CPU time and wall
// time are noisy, so sizes below 14 disks run 2^(14-disks) times (each
// about a second in all) and report medians.
func repeats(disks int) int {
	if disks >= 14 {
		return 1
	}
	return 1 << (14 - disks)
}

// scaleRows runs a size repeats(disks) times: medians of CPU per sample
// and wall per step, the largest memory, the profile of the first run (of
// all of them, for short runs).
func scaleRows(ctx context.Context, cfg sim.Config, disks, k int, dir string) (ScaleRow, error) {
	n := repeats(disks)
	var rows []ScaleRow
	var prof *bytes.Buffer
	if n > 1 {
		profileMu.Lock()
		defer profileMu.Unlock()
		prof = new(bytes.Buffer)
		if pprof.StartCPUProfile(prof) != nil {
			prof = nil
		}
	}
	cpu0 := cpuTime()
	for i := range n {
		row, err := scaleRun(ctx, cfg, disks, k, filepath.Join(dir, fmt.Sprintf("hanoi-%d-%d.jsonl", disks, i)), n == 1)
		if err != nil {
			if prof != nil {
				pprof.StopCPUProfile()
			}
			return row, err
		}
		rows = append(rows, row)
	}
	cpu := cpuTime() - cpu0
	if prof != nil {
		pprof.StopCPUProfile()
	}
	out := rows[0]
	out.Runs = n
	var cpus, walls []float64
	for _, r := range rows {
		cpus = append(cpus, r.CPUPerSample)
		walls = append(walls, r.WallPerStep)
		out.PeakRSSMB = max(out.PeakRSSMB, r.PeakRSSMB)
		out.PeakHeapMB = max(out.PeakHeapMB, r.PeakHeapMB)
		out.PeakTotalMB = max(out.PeakTotalMB, r.PeakTotalMB)
		out.WrongSteps = max(out.WrongSteps, r.WrongSteps)
		out.Solved = out.Solved && r.Solved
	}
	out.CPUPerSample, out.WallPerStep = median(cpus), median(walls)
	if prof != nil && prof.Len() > 0 {
		if split, err := splitProfile(prof); err == nil && len(split) > 0 {
			perSample := float64(cpu.Nanoseconds()) / 1e3 / float64(n*out.Samples)
			out.Split = map[string]float64{}
			for b, share := range split {
				out.Split[b] = share * perSample
			}
			out.Overhead = perSample - out.Split["model"]
		}
	}
	return out, nil
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakMemory samples the heap and the runtime's mapped memory until stop
// is closed.
type peakMemory struct {
	heap, total uint64
	stop, done  chan struct{}
}

func watchMemory() *peakMemory {
	pm := &peakMemory{stop: make(chan struct{}), done: make(chan struct{})}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"}}
	read := func() {
		metrics.Read(s)
		if s[0].Value.Kind() == metrics.KindUint64 {
			pm.heap = max(pm.heap, s[0].Value.Uint64())
		}
		if s[1].Value.Kind() == metrics.KindUint64 {
			pm.total = max(pm.total, s[1].Value.Uint64())
		}
	}
	go func() {
		defer close(pm.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			read()
			select {
			case <-pm.stop:
				read()
				return
			case <-t.C:
			}
		}
	}()
	return pm
}

func (pm *peakMemory) end() { close(pm.stop); <-pm.done }

// profileMu serialises CPU profiles: the runtime has one profiler.
var profileMu sync.Mutex

// profileWindow bounds a run's CPU profile: it starts at a quarter of the
// steps and lasts at most this long, so that its own memory (the profile
// grows with its duration) weighs alike on every size.
const profileWindow = 15 * time.Second

func scaleRun(ctx context.Context, cfg sim.Config, disks, k int, journalPath string, profiled bool) (ScaleRow, error) {
	row := ScaleRow{Disks: disks}
	model, err := sim.New(hanoi.Oracle{}, cfg)
	if err != nil {
		return row, err
	}
	task, err := hanoi.New(disks)
	if err != nil {
		return row, err
	}
	var jnl *journal.Journal
	if journalPath != "" {
		j, err := journalfile.Create(journalPath)
		if err != nil {
			return row, err
		}
		defer j.Close()
		jnl = j
	}
	runtime.GC()
	debug.FreeOSMemory()
	var prof bytes.Buffer
	var profStart time.Time
	var profCPU time.Duration
	profiling := false
	var progress func(maker.Event)
	if profiled {
		profileMu.Lock()
		defer profileMu.Unlock()
		startAt := (1<<disks - 1) / 4
		progress = func(e maker.Event) {
			switch {
			case e.Step == startAt && !profiling && profStart.IsZero():
				if pprof.StartCPUProfile(&prof) == nil {
					profiling, profStart, profCPU = true, time.Now(), cpuTime()
				}
			case profiling && time.Since(profStart) >= profileWindow:
				pprof.StopCPUProfile()
				profiling, profCPU = false, cpuTime()-profCPU
			}
		}
	}
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: k}}, Model: model, Journal: jnl, Progress: progress}
	resetPeakRSS()
	row.Load = loadavg()
	pm := watchMemory()
	cpu0 := cpuTime()
	rep, err := s.Solve(ctx, task)
	cpu := cpuTime() - cpu0
	if profiling {
		pprof.StopCPUProfile()
		profCPU = cpuTime() - profCPU
	}
	pm.end()
	row.PeakRSSMB = peakRSS()
	if err != nil {
		return row, fmt.Errorf("benchmarks: scale: %d disks: %w", disks, err)
	}
	row.Steps, row.Samples, row.WrongSteps, row.Solved = rep.Steps, rep.Launched, task.WrongSteps(), task.Solved()
	row.Wall = rep.Wall
	row.WallPerStep = float64(rep.Wall.Microseconds()) / float64(rep.Steps)
	row.CPUPerSample = float64(cpu.Nanoseconds()) / 1e3 / float64(rep.Launched)
	row.PeakHeapMB = float64(pm.heap) / (1 << 20)
	row.PeakTotalMB = float64(pm.total) / (1 << 20)
	if prof.Len() > 0 {
		split, err := splitProfile(&prof)
		if err == nil && len(split) > 0 {
			row.Split = map[string]float64{}
			for b, share := range split {
				row.Split[b] = share * row.CPUPerSample
			}
			row.Overhead = row.CPUPerSample - row.Split["model"]
		}
	}
	return row, nil
}

// resetPeakRSS resets the kernel's peak resident set size of this process
// (Linux: /proc/self/clear_refs); elsewhere it does nothing.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS returns the process's peak resident set size since the last
// reset, in MB (Linux: VmHWM), or 0 where it is not known.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%f kB", &kb); err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}

// splitProfile returns each bucket's share of a CPU profile's time.
func splitProfile(r *bytes.Buffer) (map[string]float64, error) {
	p, err := profile.Parse(r)
	if err != nil {
		return nil, err
	}
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			vi = i
		}
	}
	if vi < 0 {
		return nil, fmt.Errorf("no cpu sample type")
	}
	by := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[vi]
		total += v
		by[bucketOf(s)] += v
	}
	out := map[string]float64{}
	if total == 0 {
		return out, nil
	}
	for _, b := range Buckets {
		out[b] = float64(by[b]) / float64(total)
	}
	return out, nil
}

func bucketOf(s *profile.Sample) string {
	for _, rule := range bucketRules {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				for _, f := range rule.frames {
					if strings.Contains(line.Function.Name, f) {
						return rule.bucket
					}
				}
			}
		}
	}
	return "solver+runtime"
}
