package calibrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/categories/selection"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// historySpec is a spec with "observations": 3 whose every third step
// needs the two tool results before it: for each k, step 3k reads f<k>,
// step 3k+1 reads g<k>, and step 3k+2 answers with both files' contents,
// the first of which only the prompt's earlier tool results still show.
func historySpec(t *testing.T, rounds int) (*spec.Spec, *executor.Executor) {
	t.Helper()
	dir := t.TempDir()
	var script []string
	for k := range rounds {
		for _, f := range []string{"f", "g"} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s%d.txt", f, k)), []byte(fmt.Sprintf("%sval-%d-end\n", f, k)), 0o600))
			script = append(script, fmt.Sprintf(`{"tool_intent": {"tool": "read_file", "args": {"path": "%s%d.txt"}}}`, f, k))
		}
		script = append(script, fmt.Sprintf(`{"state": {"x": "fval-%d-end+gval-%d-end"}, "done": %v}`, k, k, k == rounds-1))
	}
	sp, err := spec.Parse([]byte(fmt.Sprintf(`{
		"name": "history", "system": "Read f then g, then answer with both.",
		"initial_state": {"x": null},
		"answer": {"type": "object", "required": ["state", "done"]},
		"tools": ["read_file"], "observations": 3, "max_steps": %d,
		"script": [%s]}`, 3*rounds, strings.Join(script, ","))))
	require.NoError(t, err)
	tax := categories.Builtin()
	policy, err := selection.Parse(tax, "read_only")
	require.NoError(t, err)
	ex, err := fstools.New(dir, executor.WithTaxonomy(tax), executor.WithPolicy(policy))
	require.NoError(t, err)
	t.Cleanup(func() { ex.Close() })
	return sp, ex
}

var stepRE = regexp.MustCompile(`(?m)^Step: (\d+)$`)

// historyModel answers a historySpec step right with probability q
// (drawn from the sample's step and index: reproducible) when its prompt
// holds what the step needs, the contents of both files for an answer
// step; wrong otherwise. Its real accuracy on the run's prompts is q.
type historyModel struct {
	sp   *spec.Spec
	q    float64
	seed uint64
	mu   sync.Mutex
	seen map[int]string // the prompt of each step asked
}

func (m *historyModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	var prompt strings.Builder
	for _, msg := range msgs {
		for _, p := range msg.Parts {
			if tc, ok := p.(llms.TextContent); ok {
				prompt.WriteString(tc.Text)
			}
		}
	}
	text := prompt.String()
	sm := stepRE.FindStringSubmatch(text)
	if sm == nil {
		return nil, fmt.Errorf("no step in the prompt")
	}
	step, _ := strconv.Atoi(sm[1])
	m.mu.Lock()
	if m.seen == nil {
		m.seen = map[int]string{}
	}
	if was, ok := m.seen[step]; ok && was != text {
		m.mu.Unlock()
		return nil, fmt.Errorf("step %d asked with two prompts", step)
	}
	m.seen[step] = text
	m.mu.Unlock()
	id, _ := maker.SampleIDFrom(ctx)
	u := rand.New(rand.NewPCG(m.seed, uint64(step)<<32|uint64(id.Index))).Float64()
	reply := string(m.sp.Script[step].Reply)
	if step%3 == 2 {
		k := step / 3
		if !strings.Contains(text, fmt.Sprintf("fval-%d-end", k)) || !strings.Contains(text, fmt.Sprintf("gval-%d-end", k)) {
			u = 1 // it cannot know the answer
		}
		if u >= m.q {
			reply = `{"state": {"x": "a guess"}, "done": false}`
		}
	} else if u >= m.q {
		reply = `{"tool_intent": {"tool": "read_file", "args": {"path": "nothing.txt"}}}`
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: reply, StopReason: "stop"}}}, nil
}

func (m *historyModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// TestSpecCalibrationShowsTheObservationHistory is the case: a
// spec with "observations": 3 and a model that answers right (at a rate
// q set here) only when the prompt holds the earlier tool results the
// run shows. Calibration walks the script's trajectory, running its
// read-only tool calls through the executor, so each sampled prompt is
// the run's, and its interval on p covers q; the run itself, at k = 3,
// finishes with the script's final state. Before (each step built from
// its state and the last tool result alone) the answer steps were never
// right: p came out near 2q/3 and the interval missed q.
func TestSpecCalibrationShowsTheObservationHistory(t *testing.T) {
	t.Parallel()
	const q = 0.9
	sp, ex := historySpec(t, 10)

	// The run, at k = 3: it finishes with the script's final state.
	run := &historyModel{sp: sp, q: q, seed: 7}
	task := spec.New(sp)
	_, err := (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: run, Executor: ex}).Solve(context.Background(), task)
	require.NoError(t, err)
	var final map[string]any
	require.NoError(t, json.Unmarshal(task.State(), &final))
	assert.Equal(t, "fval-9-end+gval-9-end", final["x"])
	assert.Contains(t, run.seen[5], "Earlier tool results, oldest first:\n[after step 1]\nTool \"read_file\" returned:\ngval-0-end")

	calib := &historyModel{sp: sp, q: q, seed: 8}
	steps, err := calibrate.Spec(sp, ex)
	require.NoError(t, err)
	rep, err := calibrate.Run(context.Background(), calibrate.Config{Steps: steps, Solver: &maker.Solver{Model: calib, Executor: ex}, Samples: 40, Seed: 1})
	require.NoError(t, err)
	require.Len(t, rep.Sampled, 30, "every step sampled")
	assert.Equal(t, run.seen, calib.seen, "calibration asked every step with the run's prompt")
	e := rep.All
	t.Logf("q %.2f: p %.4f in [%.4f, %.4f] over %d samples of %d steps", q, e.P, e.Low, e.High, e.Valid, len(rep.Sampled))
	assert.LessOrEqual(t, e.Low, q, "the interval covers the model's accuracy")
	assert.GreaterOrEqual(t, e.High, q, "the interval covers the model's accuracy")
	assert.Zero(t, e.HardSteps, "no false hard step")
	assert.False(t, e.Unreachable, e.NoK)
}
