package benchmarks

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
)

// The paper's loop in Python: paperloop.py is [ReferenceLoop] written as
// the paper's own Python is (http.client with one kept-alive connection,
// json, re), the baseline issue #24's figures were measured against. The
// overhead suite runs it, when python3 is on PATH, over the same serve-sim
// as the Go reference and reports mdap's HTTP rows against it too.
//
// Why a second baseline: the Go reference costs well under half of what
// the Python one does per sample (net/http alone is about ×0.6 of it), so
// a goal stated against the paper's loop reads very differently against
// the two. The goal rows stay on the Go reference; the Python rows say
// what the issue's own numbers were.

//go:embed paperloop.py
var paperLoopPy []byte

// errNoPython is the Python rows' reason for not running: no python3 on
// PATH.
var errNoPython = errors.New("python3 is not on PATH")

// pythonLoop is paperloop.py ready to run: the interpreter found on PATH
// and the script written into a folder.
type pythonLoop struct{ python, script, version string }

// pythonRun is what one run of paperloop.py reports on stdout. CPU and
// wall time are its loop's alone (time.process_time and
// time.perf_counter around it): the interpreter's start-up and imports
// are not counted.
type pythonRun struct {
	Steps       int     `json:"steps"`
	Samples     int     `json:"samples"`
	Solved      bool    `json:"solved"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	WallSeconds float64 `json:"wall_seconds"`
	// process is the whole process's CPU time (getrusage of the child):
	// the loop's and the interpreter's start-up, imports and exit.
	process time.Duration
}

func (r pythonRun) cpu() time.Duration  { return time.Duration(r.CPUSeconds * float64(time.Second)) }
func (r pythonRun) wall() time.Duration { return time.Duration(r.WallSeconds * float64(time.Second)) }

// newPythonLoop looks python3 up on PATH, asks its version and writes
// paperloop.py into dir. Errors: errNoPython (wrapped) when there is
// none; one that does not run; the file's.
func newPythonLoop(ctx context.Context, dir string) (*pythonLoop, error) {
	python, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("benchmarks: paper loop in Python: %w (%w)", errNoPython, err)
	}
	version, err := exec.CommandContext(ctx, python, "-I", "-c", "import platform; print(platform.python_version())").Output()
	if err != nil {
		return nil, fmt.Errorf("benchmarks: paper loop in Python: %s: %w", python, err)
	}
	script := filepath.Join(dir, "paperloop.py")
	if err := os.WriteFile(script, paperLoopPy, 0o644); err != nil {
		return nil, fmt.Errorf("benchmarks: paper loop in Python: %w", err)
	}
	return &pythonLoop{python: python, script: script, version: strings.TrimSpace(string(version))}, nil
}

// pythonConfig is paperloop.py's input: where to send its requests, the
// run's size, and the Hanoi prompt's fixed text. The Go side hands over
// the text (not the step prompts) so that there is one source of the
// template; the script builds each step's prompt from the state it tracks.
type pythonConfig struct {
	BaseURL        string `json:"base_url"`
	Model          string `json:"model"`
	Disks          int    `json:"disks"`
	K              int    `json:"k"`
	MaxTokens      int    `json:"max_tokens"`
	System         string `json:"system"`
	Head           string `json:"head"`
	Tail           string `json:"tail"`
	PreviousPrefix string `json:"previous_prefix"`
	StatePrefix    string `json:"state_prefix"`
	NoPrevious     string `json:"no_previous"`
}

// hanoiTemplate splits the first step's user prompt with n disks into
// the text before the step's data (the previous move and the state) and
// after it, and checks that putting them together again gives the
// prompt: if the template's shape changes, the run fails rather than
// sending other prompts than the Go loop.
func hanoiTemplate(n int) (head, tail string, err error) {
	start := hanoi.Start(n)
	user := hanoi.UserPrompt(n, start, nil)
	data := hanoi.PreviousMovePrefix + hanoi.NoPreviousMove + "\n" + hanoi.CurrentStatePrefix + start.String() + "\n\n"
	head, tail, ok := strings.Cut(user, data)
	if !ok || head+data+tail != user {
		return "", "", fmt.Errorf("benchmarks: paper loop in Python: the Hanoi prompt is not head + %q + tail", data)
	}
	return head, tail, nil
}

// run solves disks-disk Hanoi with margin k through the serve-sim at
// baseURL (its /v1) with paperloop.py. Errors: the run's, with what the
// script wrote on stderr; a run that is not solved; ctx.Err() when ctx
// ends it.
func (p *pythonLoop) run(ctx context.Context, baseURL, model string, disks, k int) (pythonRun, error) {
	var run pythonRun
	head, tail, err := hanoiTemplate(disks)
	if err != nil {
		return run, err
	}
	in, err := json.Marshal(pythonConfig{BaseURL: baseURL, Model: model, Disks: disks, K: k, MaxTokens: maker.DefaultMaxTokens,
		System: hanoi.SystemPrompt, Head: head, Tail: tail,
		PreviousPrefix: hanoi.PreviousMovePrefix, StatePrefix: hanoi.CurrentStatePrefix, NoPrevious: hanoi.NoPreviousMove})
	if err != nil {
		return run, fmt.Errorf("benchmarks: paper loop in Python: %w", err)
	}
	// -I: isolated, so no PYTHON* variable or user site-package changes
	// what runs.
	cmd := exec.CommandContext(ctx, p.python, "-I", p.script)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return run, ctx.Err()
		}
		return run, fmt.Errorf("benchmarks: paper loop in Python: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), &run); err != nil {
		return run, fmt.Errorf("benchmarks: paper loop in Python: its report %q: %w", stdout.String(), err)
	}
	run.process = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if !run.Solved {
		return run, fmt.Errorf("benchmarks: paper loop in Python: not solved after %d steps, %d samples", run.Steps, run.Samples)
	}
	return run, nil
}
