package calibrate_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// numbers is a cheap task for statistics: step i's correct answer is
// {"n": i}, and the prompt says only "step i".
type numbers struct{ total int }

func (n numbers) Total() int { return n.total }

func (n numbers) Step(_ context.Context, i int) (calibrate.Step, error) {
	correct, err := maker.DecodeReply(maker.Reply{Text: numberReply(i)})
	if err != nil {
		return calibrate.Step{}, err
	}
	return calibrate.Step{
		Messages: []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, fmt.Sprintf("step %d", i))},
		Decode:   maker.DecodeReply,
		Correct:  correct,
	}, nil
}

func numberReply(i int) string { return fmt.Sprintf(`{"n": %d}`, i) }

// numberOracle answers a numbers step for the simulated model; its wrong
// answers move n (sim.OracleFunc).
var numberOracle = sim.OracleFunc(func(q sim.Query) (string, error) { return numberReply(q.Step), nil })

// numberSim is the simulated model on the numbers task.
func numberSim(t testing.TB, cfg sim.Config) *sim.Model {
	t.Helper()
	m, err := sim.New(numberOracle, cfg)
	require.NoError(t, err)
	return m
}
