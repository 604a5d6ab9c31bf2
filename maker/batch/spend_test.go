package batch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/budget"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// biller adds up what every call answered cost at a price, from the
// response's own usage: the provider's bill, apart from the budget's
// accounting. It also adds up what calls cost beyond the worst case a
// budget reserves for them (the prompt's text at maker.EstimateTokens,
// max_tokens for each choice): the simulated model's overlong red flags
// bill more output than max_tokens, and its prompt, parts joined by a
// blank line, can count a token more than the estimate. docs/cost.md says
// a cap can be passed by that excess, and by no more.
type biller struct {
	price maker.Price

	mu     sync.Mutex
	total  float64
	excess float64
}

func (b *biller) bill() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

func (b *biller) over() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.excess
}

// add bills one answered call of msgs under opts, with its usage.
func (b *biller) add(msgs []llms.MessageContent, opts []llms.CallOption, in, out int) {
	var o llms.CallOptions
	for _, f := range opts {
		f(&o)
	}
	estimate := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			if t, ok := p.(llms.TextContent); ok {
				estimate += maker.EstimateTokens(t.Text)
			}
		}
	}
	cost := (float64(in)*b.price.InputPerMillion + float64(out)*b.price.OutputPerMillion) / 1e6
	worst := b.price.WorstCase(estimate, o.MaxTokens, max(o.N, 1))
	b.mu.Lock()
	b.total += cost
	b.excess += max(0, cost-worst)
	b.mu.Unlock()
}

// TestRunnerBudgetHoldsAcrossRuns: a batch stopped at its spending cap,
// run again with the same cap, spends nothing that takes the whole batch
// past the cap, by the bill of every call of both runs, but for what
// calls billed beyond the worst case reserved for them; a run with a
// larger cap then goes on from there, and the summaries say what each run
// and all of them spent: what was billed, and a call cut off by a stop at
// its worst case.
func TestRunnerBudgetHoldsAcrossRuns(t *testing.T) {
	var text strings.Builder
	for i := range 8 {
		fmt.Fprintf(&text, `{"id": "h%d", "hanoi": {"disks": 5}, "seed": %d}`+"\n", i, i)
	}
	price := maker.Price{InputPerMillion: 0.4, OutputPerMillion: 1.6}
	b := &biller{price: price}
	// One biller for every job of a run: wrap once per model.
	build := simBuiltin(func(m llms.Model) llms.Model { return &sharedBill{Model: m, b: b} })
	build.Price = price

	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	require.NoError(t, os.Mkdir(whole, 0o755))
	sum, err := solveInto(t, context.Background(), whole, writeTasks(t, whole, text.String()),
		Runner{Build: build.Build, Concurrency: 3, Budget: budget.New(0)})
	require.NoError(t, err)
	wholeBill := b.bill()
	require.Positive(t, wholeBill)
	assert.InDelta(t, wholeBill, sum.Spent, 1e-9, "an uncapped budget counts what the run spent")
	assert.InDelta(t, wholeBill, sum.SpentTotal, 1e-9)

	capUSD := wholeBill / 3
	dir := filepath.Join(root, "capped")
	require.NoError(t, os.Mkdir(dir, 0o755))
	jobs := writeTasks(t, dir, text.String())
	b.total, b.excess = 0, 0
	var runs []float64
	for run := range 3 {
		before := b.bill()
		sum, err := solveInto(t, context.Background(), dir, jobs, Runner{Build: build.Build, Concurrency: 3, Budget: budget.New(capUSD)})
		require.ErrorIs(t, err, maker.ErrBudget, "run %d stops at the cap", run)
		require.ErrorIs(t, err, ErrFault, "a cap stops the batch: no task is recorded failed for it")
		runs = append(runs, b.bill()-before)
		assert.LessOrEqual(t, b.bill(), capUSD+b.over()+1e-12, "run %d: the batch's bill over every run (%v) stays within the cap, but for what calls billed beyond their worst case (%v)", run, runs, b.over())
		// A call cut off by the stop is counted at its worst case.
		assert.GreaterOrEqual(t, sum.Spent, b.bill()-before-1e-9, "run %d: Spent is at least what this run was billed", run)
		assert.GreaterOrEqual(t, sum.SpentTotal, b.bill()-1e-9, "run %d: SpentTotal is at least what every run was billed", run)
		assert.LessOrEqual(t, sum.SpentTotal, capUSD+b.over()+1e-9, "run %d", run)
		assert.Less(t, sum.Solved, 8)
	}
	assert.Positive(t, runs[0])

	// A larger cap goes on, resuming the journals, and finishes.
	before := b.bill()
	sum, err = solveInto(t, context.Background(), dir, jobs, Runner{Build: build.Build, Concurrency: 3, Budget: budget.New(wholeBill * 2)})
	require.NoError(t, err)
	assert.Equal(t, 8, sum.Solved)
	assert.Positive(t, sum.Resumed, "the stopped tasks resumed from their journals")
	assert.InDelta(t, b.bill()-before, sum.Spent, 1e-9, "nothing cut off: Spent is what the run was billed")
	assert.GreaterOrEqual(t, sum.SpentTotal, b.bill()-1e-9, "every run's spend, the cut-off steps' included")
	assert.Less(t, sum.SpentTotal, b.bill()+capUSD/10, "and no more than the calls cut off at their worst case")
	assert.LessOrEqual(t, b.bill(), wholeBill*2+1e-12)
}

// sharedBill bills every call of every job to one biller.
type sharedBill struct {
	llms.Model
	b *biller
}

func (s *sharedBill) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	resp, err := s.Model.GenerateContent(ctx, msgs, opts...)
	if in, out, _, _ := maker.ResponseUsage(resp); err == nil {
		s.b.add(msgs, opts, in, out)
	}
	return resp, err
}

// TestStoreRefusesACorruptSpendFile: the spend file reads back as saved;
// a new results file starts a new count; a spend file that does not parse
// is refused at open, naming it, and left as it is.
func TestStoreRefusesACorruptSpendFile(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results.jsonl")
	st, err := OpenStore(results, "")
	require.NoError(t, err)
	require.NoError(t, st.SaveSpend(Spend{Spent: 0.25, Journaled: map[string]float64{"id:a": 0.1}}))
	require.NoError(t, st.Close())
	st, err = OpenStore(results, "")
	require.NoError(t, err)
	assert.Equal(t, Spend{Spent: 0.25, Journaled: map[string]float64{"id:a": 0.1}}, st.Spend(), "read back as written")
	require.NoError(t, st.Close())

	require.NoError(t, os.Rename(results, results+".old"))
	st, err = OpenStore(results, "")
	require.NoError(t, err)
	assert.Zero(t, st.Spend(), "a new results file starts a new count")
	require.NoError(t, st.Close())

	require.NoError(t, os.WriteFile(st.SpendPath(), []byte("{\"spent\": -1}\n"), 0o644))
	_, err = OpenStore(results, "")
	require.ErrorIs(t, err, ErrSpendCorrupt)
	assert.Contains(t, err.Error(), st.SpendPath())
	b, _ := os.ReadFile(st.SpendPath())
	assert.Equal(t, "{\"spent\": -1}\n", string(b), "left as it is")
}
