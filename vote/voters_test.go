package vote

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// greedyLiar: voter "liar" casts indices 0..9, all for the wrong key 2;
// from index 10 on, voters "b" and "c" take turns, all for key 1.
func greedyLiar(i int) Sample[int] {
	if i < 10 {
		return Sample[int]{Value: i, Key: 2, Voter: "liar"}
	}
	return Sample[int]{Value: i, Key: 1, Voter: []string{"b", "c"}[i%2]}
}

// TestMinVotersOneVoterNeverDecides: a voter that casts a step's first
// samples leads by K alone; under MinVoters 2 that does not decide, and
// the race draws on until the other voters' key wins. Under the default
// (MinVoters 1) the liar's key wins at index 2, which is the attack.
func TestMinVotersOneVoterNeverDecides(t *testing.T) {
	for _, name := range []string{"sync", "race"} {
		run := func(cfg Config) (Result[int], error) {
			if name == "sync" {
				return runSync(cfg, greedyLiar)
			}
			return Race(context.Background(), cfg, func(_ context.Context, i int) Sample[int] { return greedyLiar(i) })
		}
		res, err := run(Config{K: 3, MaxSamples: 100})
		require.NoError(t, err)
		assert.Equal(t, uint64(2), res.Key, "%s: without MinVoters the liar decides", name)
		assert.Equal(t, 3, res.Valid)

		res, err = run(Config{K: 3, MaxSamples: 100, MinVoters: 2})
		require.NoError(t, err, name)
		assert.Equal(t, uint64(1), res.Key, "%s: the liar's lead of K must not decide", name)
		// Key 1 needs a lead of 3 over the liar's 10 votes: 13 votes.
		assert.Equal(t, 10+13, res.Valid, name)
	}
}

// TestMinVotersSecondVoterDecides: a lead of K from one voter waits for
// one more vote by another voter, and the race launches it (a plan that
// read only the lead would launch nothing and end the race undecided).
func TestMinVotersSecondVoterDecides(t *testing.T) {
	draw := func(i int) Sample[int] {
		v := "a"
		if i >= 4 {
			v = "b"
		}
		return Sample[int]{Value: i, Key: 7, Voter: v}
	}
	for _, par := range []int{1, 3} {
		res, err := runSync(Config{K: 3, Parallel: par, MinVoters: 2}, draw)
		require.NoError(t, err, "parallel %d", par)
		assert.Equal(t, uint64(7), res.Key)
		assert.Equal(t, 5, res.Valid, "parallel %d: decided at the first vote of voter b", par)
		res2, err := Race(context.Background(), Config{K: 3, Parallel: par, MinVoters: 2}, func(_ context.Context, i int) Sample[int] { return draw(i) })
		require.NoError(t, err)
		assert.Equal(t, res.Key, res2.Key)
		assert.Equal(t, res.Valid, res2.Valid)
	}
}

// TestMinVotersUndecidedSaysWhy: with one voter only, the budget is spent
// and the error names the voters that were missing.
func TestMinVotersUndecidedSaysWhy(t *testing.T) {
	_, err := runSync(Config{K: 2, MaxSamples: 8, MinVoters: 2}, func(i int) Sample[int] {
		return Sample[int]{Value: i, Key: 1, Voter: "only"}
	})
	require.ErrorIs(t, err, ErrUndecided)
	assert.Contains(t, err.Error(), "1 distinct voters, 2 needed")
}

func TestMinVotersConfig(t *testing.T) {
	c, err := Config{}.WithDefaults()
	require.NoError(t, err)
	assert.Zero(t, c.MinVoters, "0 stays 0: any voter")
	c2, err := c.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, c, c2)
	_, err = Config{MinVoters: -1}.WithDefaults()
	assert.ErrorIs(t, err, ErrConfig)
	_, err = Config{MinVoters: 1<<16 + 1}.WithDefaults()
	assert.ErrorIs(t, err, ErrConfig)
}

// TestMinVotersDrawsOnlyTheMissingVoters: once the leader's votes come
// from some of the voters it needs, the race launches one sample per
// voter still missing, not more: K 1, MinVoters 3, samples from voters
// a, a, b, c, d, ...: a first wave of 3 (a, a, b), then 1 (c), decided
// after 4 launched.
func TestMinVotersDrawsOnlyTheMissingVoters(t *testing.T) {
	voters := []string{"a", "a", "b", "c"}
	draw := func(i int) Sample[int] {
		v := "d"
		if i < len(voters) {
			v = voters[i]
		}
		return Sample[int]{Value: i, Key: 7, Voter: v}
	}
	res, err := runSync(Config{K: 1, Parallel: 8, MinVoters: 3}, draw)
	require.NoError(t, err)
	assert.Equal(t, uint64(7), res.Key)
	assert.Equal(t, 4, res.Launched, "a wave of 3, then one for the one voter missing")
	assert.Equal(t, 4, res.Valid)
}

// TestMinVotersOneAddsNoSample: MinVoters 1 asks nothing a lead does not
// already give, so the race launches as without it. K 1, Parallel 3,
// Speculate 1: samples 0 and 1 go out; 1 answers while 0 is still out,
// which leaves the race nothing to launch (its answer, committed after
// 0's, decides). Sample 0 answers once a third sample starts, or after
// 300 ms: the race must have launched 2 samples.
func TestMinVotersOneAddsNoSample(t *testing.T) {
	third := make(chan struct{})
	var once sync.Once
	res, err := Race(context.Background(), Config{K: 1, Parallel: 3, Speculate: 1, MinVoters: 1}, func(ctx context.Context, i int) Sample[int] {
		switch i {
		case 0:
			select {
			case <-third:
			case <-time.After(300 * time.Millisecond):
			}
		default:
			if i >= 2 {
				once.Do(func() { close(third) })
			}
		}
		return Sample[int]{Value: i, Key: 7, Voter: "a"}
	})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Launched, "no sample beyond the two the lead needs")
}
