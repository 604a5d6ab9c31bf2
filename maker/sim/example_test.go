package sim_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// counting is a custom task: answer {"next": n+1} until 10.
type counting struct{ n int }

func (c *counting) Fingerprint() string { return "counting to 10" }

func (c *counting) Prompt(*intent.Observation) []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman,
		fmt.Sprintf(`The number is %d. Reply {"next": <the number plus one>}.`, c.n))}
}

func (c *counting) Decode(r maker.Reply) (intent.Output, error) { return maker.DecodeReply(r) }

func (c *counting) Apply(w intent.Output, _ *intent.Observation) (bool, error) {
	var a struct{ Next int }
	if err := w.DecodeValue(&a); err != nil {
		return false, err
	}
	c.n = a.Next
	return c.n >= 10, nil
}

// The simulated model under a custom task: the oracle says what a right
// answer is, here from the task's own state (the solver never changes it
// while a step's samples are drawn), and OracleFunc derives the wrong
// answers. A seed makes the run reproducible at any parallelism.
func Example_customTask() {
	task := &counting{}
	oracle := sim.OracleFunc(func(q sim.Query) (string, error) {
		b, err := json.Marshal(map[string]int{"next": task.n + 1})
		return string(b), err
	})
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P = 42, 0.8 // a weak model: one valid reply in five is wrong
	model, err := sim.New(oracle, cfg)
	if err != nil {
		panic(err)
	}
	rep, err := (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: model}).Solve(context.Background(), task)
	fmt.Println(err, task.n, rep.Steps)
	// Output: <nil> 10 10
}
