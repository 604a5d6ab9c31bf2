package hanoi

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/require"
)

// TestFastParseAgrees: whatever the fast path accepts, the general path
// accepts with the same answer, over the Oracle's correct, wrong and
// malformed replies along real runs and over mangled variants of them.
func TestFastParseAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	mangle := []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.ReplaceAll(s, ", ", ",") },
		func(s string) string { return strings.ReplaceAll(s, " ", "\n ") },
		func(s string) string { return strings.Replace(s, "1", "1.0", 1) },
		func(s string) string { return strings.Replace(s, "2", "02", 1) },
		func(s string) string { return strings.Replace(s, "[", "[ ", -1) },
		func(s string) string { return strings.Replace(s, "]", ", ]", 1) },
		func(s string) string { return "```\n" + s + "\n```" },
		func(s string) string { return s + "\nmove = [1, 2, 0]" },
		func(s string) string { return strings.Replace(s, "3", "-3", 1) },
		func(s string) string { return strings.Replace(s, "next_state", "nextstate", 1) },
		func(s string) string { return strings.Replace(s, "[[", "[[[", 1) },
		func(s string) string { return strings.Replace(s, "1", "1e0", 1) },
		func(s string) string { return strings.Replace(s, "]]", "], []]", 1) },
	}
	fast, checked := 0, 0
	for _, n := range []int{1, 2, 3, 6, 11} {
		task, err := New(n)
		require.NoError(t, err)
		for step := 0; step < min(200, 1<<n-1); step++ {
			q := sim.Query{Prompt: UserPrompt(n, task.State(), task.Previous())}
			var replies []string
			for _, o := range []Oracle{{}, {JSON: true}} {
				c, err := o.Correct(q)
				require.NoError(t, err)
				replies = append(replies, c)
				for v := range 4 {
					w, err := o.Wrong(q, v)
					require.NoError(t, err)
					replies = append(replies, w)
				}
				for v := range malformedCount {
					m, err := o.Malformed(q, v)
					require.NoError(t, err)
					replies = append(replies, m)
				}
			}
			for _, r := range replies {
				text := mangle[rng.IntN(len(mangle))](r)
				checked++
				a, ok := fastReply(text, n)
				if !ok {
					continue
				}
				fast++
				b, err := parseReply(text, n)
				require.NoError(t, err, "the general path refuses what the fast path read: %q", text)
				require.Equal(t, fmt.Sprint(b), fmt.Sprint(a), "%q", text)
				require.Equal(t, b.Value(), a.Value(), "%q", text)
			}
			a, err := CorrectAnswer(task.State(), task.Previous())
			require.NoError(t, err)
			got, ok := fastReply(a.Text(), n)
			require.True(t, ok, "the fast path reads the paper's format: %q", a.Text())
			require.Equal(t, a, got)
			_, err = task.Advance(a)
			require.NoError(t, err)
		}
	}
	require.Greater(t, fast, checked/20, "the fast path reads the mangled replies it can")
}

// FuzzFastParse: whatever the fast path reads, the general path reads the
// same, for any text.
func FuzzFastParse(f *testing.F) {
	for _, s := range []string{
		"move = [1, 0, 2]\nnext_state = [[3, 2], [], [1]]",
		"move=[1,0,2] next_state=[[3,2],[],[1]]",
		"move = [1, 0, 2]\nnext_state = [[3, 2], [], [1, 1]]",
		"move = [-1, 0, 2]\nnext_state = [[3, 2], [], [01]]",
		"move = [1, 0, 2]\nmove = [2, 0, 1]\nnext_state = [[3], [2], [1]]",
	} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, text string, n int) {
		n = 1 + (n%MaxDisks+MaxDisks)%MaxDisks
		a, ok := fastReply(text, n)
		if !ok {
			return
		}
		b, err := parseReply(text, n)
		require.NoError(t, err, "%q", text)
		require.Equal(t, fmt.Sprint(b), fmt.Sprint(a), "%q", text)
	})
}
