package maker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// doubling is a custom Task: start at 1, double the number each step,
// finish at 64.
type doubling struct{ n int }

func (d *doubling) Fingerprint() string { return "doubling" }

func (d *doubling) Prompt(*intent.Observation) []llms.MessageContent {
	return []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, `Double the number. Reply {"n": <the double>}.`),
		llms.TextParts(llms.ChatMessageTypeHuman, "n = "+strconv.Itoa(d.n)),
	}
}

func (d *doubling) Decode(r maker.Reply) (intent.Output, error) {
	out, err := maker.DecodeReply(r)
	if err != nil {
		return out, err
	}
	if m, ok := out.Value.(map[string]any); !ok || m["n"] == nil {
		return out, fmt.Errorf("%w: want {\"n\": number}", maker.ErrFormat)
	}
	return out, nil
}

func (d *doubling) Apply(w intent.Output, _ *intent.Observation) (bool, error) {
	n, err := strconv.Atoi(string(w.Value.(map[string]any)["n"].(json.Number)))
	d.n = n
	return d.n >= 64, err
}

// sloppy is a model that doubles correctly except on the second sample of
// every step, when it adds one. A ModelFunc is all a test model needs; it
// is safe for concurrent use because it keeps no state.
var sloppy = maker.ModelFunc(func(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	id, _ := maker.SampleIDFrom(ctx)
	text := msgs[len(msgs)-1].Parts[0].(llms.TextContent).Text
	n, _ := strconv.Atoi(strings.TrimPrefix(text, "n = "))
	answer := 2 * n
	if id.Index == 1 {
		answer++
	}
	return maker.TextResponse(fmt.Sprintf(`{"n": %d}`, answer), "stop"), nil
})

// Solving a custom Task with any llms.Model: every step is voted on, so the
// model's occasional wrong answer never wins.
func ExampleSolver_Solve() {
	task := &doubling{n: 1}
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2, Parallel: 1}}, Model: sloppy}
	rep, err := s.Solve(context.Background(), task)
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	fmt.Println("n =", task.n, "after", rep.Steps, "steps and", rep.Launched, "samples")
	// Output: n = 64 after 6 steps and 24 samples
}

// A Config is checked on its own, before anything runs: a refused field
// comes back as a *maker.FieldError naming it, which a command maps to
// its own flag. The Solver is then built whole from the Config and the
// model.
func ExampleConfig_Validate() {
	bad := maker.Config{Vote: vote.Config{K: 2}, MaxSteps: -1}
	var fe *maker.FieldError
	if err := bad.Validate(); errors.As(err, &fe) {
		fmt.Println(fe.Fields[0].Name, "=", fe.Fields[0].Value, "refused:", fe.Remedy())
	}

	cfg := maker.Config{Vote: vote.Config{K: 2, Parallel: 1}, MaxSteps: 10}
	if err := cfg.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	task := &doubling{n: 1}
	rep, err := (&maker.Solver{Config: cfg, Model: sloppy}).Solve(context.Background(), task)
	fmt.Println("n =", task.n, "after", rep.Steps, "steps; error:", err)
	// Output:
	// MaxSteps = -1 refused: use 1 or more, or 0 for no limit
	// n = 64 after 6 steps; error: <nil>
}

// A run with a journal survives a crash: here the first run stops after
// three steps (as a killed process would), and a second Solve on the same
// file replays those three and finishes, with the totals of a run that
// never stopped.
func ExampleSolver_Solve_journal() {
	dir, _ := os.MkdirTemp("", "journal-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.jsonl")

	j, err := journalfile.Create(path)
	if err != nil {
		panic(err)
	}
	ctx, crash := context.WithCancel(context.Background())
	s := &maker.Solver{
		Config:  maker.Config{Vote: vote.Config{K: 2}},
		Model:   sloppy,
		Journal: j,
		Progress: func(e maker.Event) {
			if e.Step == 2 {
				crash()
			}
		},
	}
	_, err = s.Solve(ctx, &doubling{n: 1})
	fmt.Println("first run:", err)
	j.Close()

	j, err = journalfile.Open(path) // resume: same task, same settings
	if err != nil {
		panic(err)
	}
	defer j.Close()
	task := &doubling{n: 1}
	s = &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2}}, Model: sloppy, Journal: j}
	rep, err := s.Solve(context.Background(), task)
	fmt.Println("second run:", err, "n =", task.n, "steps", rep.Steps, "replayed", rep.Resumed)
	// Output:
	// first run: context canceled
	// second run: <nil> n = 64 steps 6 replayed 3
}
