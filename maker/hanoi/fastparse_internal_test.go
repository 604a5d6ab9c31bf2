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

// promptMangles change a prompt's state or previous-move text.
var promptMangles = []func(string) string{
	func(s string) string { return s },
	func(s string) string { return strings.ReplaceAll(s, ", ", ",") },
	func(s string) string { return strings.ReplaceAll(s, " ", "  ") },
	func(s string) string { return strings.Replace(s, "1", "1.0", 1) },
	func(s string) string { return strings.Replace(s, "2", "02", 1) },
	func(s string) string { return strings.Replace(s, "[", "[ ", -1) },
	func(s string) string { return strings.Replace(s, "]", ", ]", 1) },
	func(s string) string { return strings.Replace(s, "3", "-3", 1) },
	func(s string) string { return strings.Replace(s, "[[", "[[[", 1) },
	func(s string) string { return strings.Replace(s, "]]", "], []]", 1) },
	func(s string) string { return strings.Replace(s, "1", "1, 1", 1) },
	func(s string) string { return s + " x" },
	func(s string) string { return strings.Replace(s, "]", "] ]", 1) },
}

// TestFastPromptAgrees: whatever the prompt's fast path accepts, the
// general path accepts with the same state and move, over the prompts of
// real runs and mangled variants of their two lines; and the fast path
// reads every prompt UserPrompt writes.
func TestFastPromptAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fast, checked := 0, 0
	for _, n := range []int{1, 2, 3, 6, 11, 20, MaxDisks} {
		task, err := New(n)
		require.NoError(t, err)
		for step := 0; step < min(300, 1<<n-1); step++ {
			prompt := UserPrompt(n, task.State(), task.Previous())
			stateText, ok := lastLine(prompt, CurrentStatePrefix)
			require.True(t, ok)
			prevText, ok := lastLine(prompt, PreviousMovePrefix)
			require.True(t, ok)
			s, prev, ok := fastPrompt(stateText, prevText)
			require.True(t, ok, "the fast path reads UserPrompt's lines: %q, %q", stateText, prevText)
			require.True(t, s.Equal(task.State()), "%q", stateText)
			require.Equal(t, task.Previous(), prev)
			for range 4 {
				st, pv := stateText, prevText
				if rng.IntN(2) == 0 {
					st = promptMangles[rng.IntN(len(promptMangles))](st)
				} else {
					pv = promptMangles[rng.IntN(len(promptMangles))](pv)
				}
				checked++
				fs, fp, ok := fastPrompt(st, pv)
				if !ok {
					continue
				}
				fast++
				gs, gp, err := slowPrompt(st, pv)
				require.NoError(t, err, "the general path refuses what the fast path read: %q, %q", st, pv)
				require.Equal(t, gs.String(), fs.String(), "%q", st)
				require.Equal(t, gp, fp, "%q", pv)
			}
			a, err := CorrectAnswer(task.State(), task.Previous())
			require.NoError(t, err)
			_, err = task.Advance(a)
			require.NoError(t, err)
		}
	}
	require.Greater(t, fast, checked/5, "the fast path reads the mangled lines it can")
	require.Less(t, fast, checked, "some mangled lines are left to the general path")
}

// FuzzFastPrompt: whatever the prompt's fast path reads, the general path
// reads the same, for any two lines.
func FuzzFastPrompt(f *testing.F) {
	f.Add("[[3, 2], [], [1]]", "[1, 0, 2]")
	f.Add("[[3,2,1],[],[]]", "none (this is the first move)")
	f.Add("[[3, 2], [], [1, 1]]", "[1, 0, 2]")
	f.Add("[[-3, 2], [], [01]]", "[1, 0]")
	f.Add("[[3], [2], [1]] ]", "[1, 0, 2, 4]")
	f.Fuzz(func(t *testing.T, stateText, prevText string) {
		s, prev, ok := fastPrompt(stateText, prevText)
		if !ok {
			return
		}
		gs, gp, err := slowPrompt(stateText, prevText)
		require.NoError(t, err, "%q, %q", stateText, prevText)
		require.Equal(t, gs.String(), s.String())
		require.Equal(t, gp, prev)
	})
}

// TestUserPromptOfAnyDiskCount: the head cached per number of disks is
// that number's, also for counts outside the cache (UserPrompt does not
// validate): asked twice, each count gives its own text, without a panic.
func TestUserPromptOfAnyDiskCount(t *testing.T) {
	for range 2 {
		for _, n := range []int{-1, 0, 1, 2, MaxDisks, MaxDisks + 1, 40} {
			p := UserPrompt(n, State{}, nil)
			require.Contains(t, p, fmt.Sprintf("There are %d disks.", n))
			require.Contains(t, p, "along the cycle "+cycle(n)+".")
			require.True(t, strings.HasSuffix(p, promptTail))
		}
	}
	allocs := testing.AllocsPerRun(100, func() { _ = UserPrompt(12, State{{12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}}, &Move{1, 0, 2}) })
	require.LessOrEqual(t, allocs, 1.0, "a user prompt is one allocation")
}

// lastLineByIndex is lastLine as it was first written (the last match of
// prefix at a line start, searched with strings.LastIndex): the
// reference for TestLastLineAgrees.
func lastLineByIndex(text, prefix string) (string, bool) {
	for i := len(text); i >= 0; {
		j := strings.LastIndex(text[:i], prefix)
		if j < 0 {
			return "", false
		}
		if j == 0 || text[j-1] == '\n' {
			rest := text[j+len(prefix):]
			if k := strings.IndexByte(rest, '\n'); k >= 0 {
				rest = rest[:k]
			}
			return strings.TrimSpace(rest), true
		}
		i = j
	}
	return "", false
}

// TestLastLineAgrees: reading lines from the end finds what the search
// by strings.LastIndex found, on real prompts and on texts made of
// prompt-like pieces.
func TestLastLineAgrees(t *testing.T) {
	pieces := []string{"\n", "\r\n", " ", "x", CurrentStatePrefix, PreviousMovePrefix, "Current state:", "[[1], [], []]", "none", "\n\n", "Current state: [[2, 1], [], []]\n"}
	rng := rand.New(rand.NewPCG(5, 6))
	texts := []string{"", "\n", CurrentStatePrefix, UserPrompt(5, State{{5, 4, 3, 2, 1}}, nil), SystemPrompt + "\n\n" + UserPrompt(3, State{{3}, {2}, {1}}, &Move{1, 0, 2})}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		for _, prefix := range []string{CurrentStatePrefix, PreviousMovePrefix} {
			got, ok := lastLine(text, prefix)
			want, wantOK := lastLineByIndex(text, prefix)
			require.Equal(t, wantOK, ok, "%q", text)
			require.Equal(t, want, got, "%q", text)
		}
	}
}
