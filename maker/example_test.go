package maker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
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

// sloppy is an llms.Model that doubles correctly except on the second
// sample of every step, when it adds one. It is safe for concurrent use.
type sloppy struct{}

func (sloppy) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	id, _ := maker.SampleIDFrom(ctx)
	text := msgs[len(msgs)-1].Parts[0].(llms.TextContent).Text
	n, _ := strconv.Atoi(strings.TrimPrefix(text, "n = "))
	answer := 2 * n
	if id.Index == 1 {
		answer++
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: fmt.Sprintf(`{"n": %d}`, answer), StopReason: "stop"}}}, nil
}

func (m sloppy) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// Solving a custom Task with any llms.Model: every step is voted on, so the
// model's occasional wrong answer never wins.
func ExampleSolver_Solve() {
	task := &doubling{n: 1}
	s := &maker.Solver{Model: sloppy{}, Vote: vote.Config{K: 2, Parallel: 1}}
	rep, err := s.Solve(context.Background(), task)
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	fmt.Println("n =", task.n, "after", rep.Steps, "steps and", rep.Launched, "samples")
	// Output: n = 64 after 6 steps and 24 samples
}
