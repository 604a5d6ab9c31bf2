package maker

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The write rule's margin per category: the winner's tool's category
// decides the second race's k; another category's entry does not apply.
func TestWriteRulePerCategory(t *testing.T) {
	step2Valid := func(w WriteRule) int {
		var runs atomic.Int64
		var valid int
		s := &Solver{Config: Config{Vote: vote.Config{K: 2}, Writes: w},
			Model: &scripted{reply: deployDissent}, Executor: deployExecutor(t, &runs),
			Progress: func(e Event) {
				if e.Step == 2 {
					valid = e.Record.Valid
				}
			}}
		_, err := s.Solve(context.Background(), &counter{target: 5})
		require.NoError(t, err)
		return valid
	}
	assert.Equal(t, 4+5, step2Valid(WriteRule{K: 3, Categories: map[categories.Category]int{categories.Bash: 5}}), "deploy is bash: k = 5")
	assert.Equal(t, 4+3, step2Valid(WriteRule{K: 3, Categories: map[categories.Category]int{categories.FileWrite: 5}}), "another category's k does not apply: K")
	assert.Equal(t, 4+4, step2Valid(WriteRule{Categories: map[categories.Category]int{categories.Git: 6}}), "nor the default (twice k)")

	for _, bad := range []WriteRule{
		{Categories: map[categories.Category]int{categories.FileRead: 3}},
		{Categories: map[categories.Category]int{"shell": 3}},
		{Categories: map[categories.Category]int{categories.Bash: 0}},
	} {
		require.ErrorIs(t, (Config{Writes: bad}).Validate(), ErrConfig, "%v", bad)
	}
	assert.NotEqual(t, WriteRule{K: 3}.setting(), WriteRule{K: 3, Categories: map[categories.Category]int{categories.Bash: 5}}.setting(), "a per-category k is a setting")
	assert.Equal(t, "unanimous bash=k5 git=k6", WriteRule{Categories: map[categories.Category]int{categories.Git: 6, categories.Bash: 5}}.setting())
}
