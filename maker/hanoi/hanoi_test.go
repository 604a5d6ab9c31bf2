package hanoi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recursive is the textbook solution, to check the iterative rule against.
func recursive(n, from, to, via int, out *[]hanoi.Move) {
	if n == 0 {
		return
	}
	recursive(n-1, from, via, to, out)
	*out = append(*out, hanoi.Move{Disk: n, From: from, To: to})
	recursive(n-1, via, to, from, out)
}

func TestIterativeRuleSolves(t *testing.T) {
	for n := 1; n <= 12; n++ {
		var want []hanoi.Move
		recursive(n, 0, 2, 1, &want)
		s := hanoi.Start(n)
		var got []hanoi.Move
		for m := range hanoi.Moves(n) {
			var err error
			s, err = s.Apply(m)
			require.NoError(t, err, "n=%d move %d", n, len(got))
			got = append(got, m)
		}
		assert.Len(t, got, 1<<n-1, "n=%d", n)
		assert.Equal(t, hanoi.TotalSteps(n), len(got))
		assert.Equal(t, want, got, "n=%d: the optimal solution", n)
		assert.True(t, s.Equal(hanoi.Goal(n)), "n=%d ends on peg 2: %v", n, s)
	}
}

func TestTwentyDisks(t *testing.T) {
	if testing.Short() {
		t.Skip("a million moves")
	}
	count, last := 0, hanoi.Move{}
	for m := range hanoi.Moves(20) {
		count++
		last = m
	}
	assert.Equal(t, 1048575, count)
	assert.Equal(t, hanoi.Move{Disk: 1, From: 1, To: 2}, last)
}

func TestCorrectMove(t *testing.T) {
	// The system prompt's example, with 3 disks.
	s := hanoi.Start(3)
	var prev *hanoi.Move
	var got []string
	for range 7 {
		m, err := hanoi.CorrectMove(s, prev)
		require.NoError(t, err)
		got = append(got, m.String())
		s, err = s.Apply(m)
		require.NoError(t, err)
		prev = &m
	}
	assert.Equal(t, "[1, 0, 2] [2, 0, 1] [1, 2, 1] [3, 0, 2] [1, 1, 0] [2, 1, 2] [1, 0, 2]", strings.Join(got, " "))
	assert.Contains(t, hanoi.SystemPrompt, "[[1, 0, 2], [2, 0, 1], [1, 2, 1], [3, 0, 2], [1, 1, 0], [2, 1, 2], [1, 0, 2]]")

	// Even n: disk 1 goes 0 -> 1 first.
	m, err := hanoi.CorrectMove(hanoi.Start(4), nil)
	require.NoError(t, err)
	assert.Equal(t, hanoi.Move{Disk: 1, From: 0, To: 1}, m)

	_, err = hanoi.CorrectMove(hanoi.State{{1, 2}, {}, {}}, nil)
	assert.ErrorIs(t, err, hanoi.ErrState)
	_, err = hanoi.CorrectMove(hanoi.Goal(3), &hanoi.Move{Disk: 1, From: 1, To: 2})
	assert.ErrorIs(t, err, hanoi.ErrNoMove)
}

func TestStateValidate(t *testing.T) {
	assert.NoError(t, hanoi.State{{3, 1}, {2}, {}}.Validate(3))
	for _, s := range []hanoi.State{
		{{3, 2}, {}, {}},       // missing
		{{3, 2, 1}, {1}, {}},   // doubled
		{{4, 2, 1}, {}, {}},    // out of range
		{{3, 1, 2}, {}, {}},    // out of order
		{{1, 2, 3}, {}, {}},    // top to bottom
		{{3, 2, 1, 0}, {}, {}}, // disk 0
		{{3, 2, 1}, {-1}, {}},  // negative
	} {
		assert.ErrorIs(t, s.Validate(3), hanoi.ErrState, "%v", s)
	}
	assert.ErrorIs(t, hanoi.Start(3).Validate(0), hanoi.ErrConfig)
}

func TestLegal(t *testing.T) {
	s := hanoi.State{{3}, {2}, {1}}
	assert.NoError(t, s.Legal(hanoi.Move{Disk: 2, From: 1, To: 0}))
	for _, m := range []hanoi.Move{{2, 1, 2}, {3, 0, 1}, {2, 1, 1}, {1, 2, 3}, {2, 0, 1}} {
		assert.ErrorIs(t, s.Legal(m), hanoi.ErrIllegalMove, "%v", m)
	}
	assert.Equal(t, []hanoi.Move{{1, 2, 0}, {1, 2, 1}, {2, 1, 0}}, s.LegalMoves())
	next, err := s.Apply(hanoi.Move{Disk: 1, From: 2, To: 1})
	require.NoError(t, err)
	assert.Equal(t, hanoi.State{{3}, {2, 1}, {}}, next)
	assert.Equal(t, hanoi.State{{3}, {2}, {1}}, s, "Apply does not modify its receiver")
}

func TestPrompt(t *testing.T) {
	user := hanoi.UserPrompt(4, hanoi.State{{4, 3}, {2}, {1}}, &hanoi.Move{Disk: 2, From: 0, To: 1})
	for _, want := range []string{
		"Only one disk can be moved at a time.",
		"A larger disk may not be placed on top of a smaller disk.",
		"If the previous move did not move disk 1, move disk 1 one peg along the cycle 0 -> 1 -> 2 -> 0.",
		"If the previous move did move disk 1, make the only legal move that does not involve disk 1.",
		"\nPrevious move: [2, 0, 1]\n",
		"\nCurrent state: [[4, 3], [2], [1]]\n",
	} {
		assert.Contains(t, user, want)
	}
	odd := hanoi.UserPrompt(3, hanoi.Start(3), nil)
	assert.Contains(t, odd, "0 -> 2 -> 1 -> 0")
	assert.Contains(t, odd, "\nPrevious move: none (this is the first move)\n")
	for _, want := range []string{"move = [disk id, from peg, to peg]", "next_state = [[...], [...], [...]]", `{"move"`, "bottom to top"} {
		assert.Contains(t, hanoi.SystemPrompt, want)
	}
	msgs := hanoi.Messages(3, hanoi.Start(3), nil)
	require.Len(t, msgs, 2)
	assert.Equal(t, hanoi.SystemPrompt+"\n\n"+odd, sim.PromptText(msgs))

	s, prev, err := hanoi.ParsePrompt(sim.PromptText(hanoi.Messages(4, hanoi.State{{4, 3}, {2}, {1}}, &hanoi.Move{Disk: 2, From: 0, To: 1})))
	require.NoError(t, err)
	assert.Equal(t, hanoi.State{{4, 3}, {2}, {1}}, s)
	assert.Equal(t, &hanoi.Move{Disk: 2, From: 0, To: 1}, prev)
}

func TestParsePromptErrors(t *testing.T) {
	for _, p := range []string{
		"hello",
		"Current state: [[1], [], []]",
		"Previous move: none\nCurrent state: [[1], []]",
		"Previous move: none\nCurrent state: [[1, 2], [], []]",
		"Previous move: [1, 0]\nCurrent state: [[1], [], []]",
		"Previous move: up\nCurrent state: [[1], [], []]",
		"Previous move: none\n Current state: [[1], [], []]x",
	} {
		_, _, err := hanoi.ParsePrompt(p)
		assert.ErrorIs(t, err, hanoi.ErrPrompt, "%q", p)
	}
}

func key(t *testing.T, a hanoi.Answer) uint64 {
	t.Helper()
	k, err := intent.Key(intent.Output{Value: a.Value()})
	require.NoError(t, err)
	return k
}

func TestParseReplyAccepts(t *testing.T) {
	want := hanoi.Answer{Move: hanoi.Move{Disk: 1, From: 0, To: 2}, Next: hanoi.State{{3, 2}, {}, {1}}}
	for _, text := range []string{
		"move = [1, 0, 2]\nnext_state = [[3, 2], [], [1]]",
		"move=[1,0,2] next_state=[[3,2],[],[1]]",
		"I follow the procedure.\n```move = [1, 0, 2]```\n```next_state = [[3, 2], [], [1]]```\nDone.",
		"First guess: move = [2, 0, 1]\nnext_state = [[3], [2], []]\nNo wait:\nmove = [1, 0, 2]\nnext_state = [[3, 2], [], [1]]",
		"move = [1.0, 0, 2e0]\nnext_state = [[3, 2], [], [1]]",
		`{"move": [1, 0, 2], "next_state": [[3, 2], [], [1]]}`,
		`{"next_state":[[3,2],[],[1]],"move":[1,0,2.0]}`,
		"```json\n{\"move\": [1, 0, 2], \"next_state\": [[3, 2], [], [1]]}\n```",
		`The answer is {"move": [1, 0, 2], "next_state": [[3, 2], [], [1]]}.`,
	} {
		got, err := hanoi.ParseReply(text, 3)
		if assert.NoError(t, err, text) {
			assert.Equal(t, want, got, text)
			assert.Equal(t, key(t, want), key(t, got))
		}
	}
	// The Value is what intent.Parse gives for the JSON form: same key,
	// deeply equal.
	out, err := intent.Parse(want.JSON())
	require.NoError(t, err)
	assert.Equal(t, out.Value, any(want.Value()))
	paper, err := intent.Key(intent.Output{Value: want.Value()})
	require.NoError(t, err)
	jsonKey, err := intent.Key(out)
	require.NoError(t, err)
	assert.Equal(t, jsonKey, paper)

	// Other answers, other keys.
	other := want
	other.Next = hanoi.State{{3, 2}, {1}, {}}
	assert.NotEqual(t, key(t, want), key(t, other))
}

func TestParseReplyRefuses(t *testing.T) {
	const goodState = "[[3, 2], [], [1]]"
	format := map[string]string{
		"move of two":          "move = [1, 2]\nnext_state = " + goodState,
		"move of four":         "move = [1, 0, 2, 2]\nnext_state = " + goodState,
		"peg 3":                "move = [1, 0, 3]\nnext_state = " + goodState,
		"peg -1":               "move = [1, -1, 2]\nnext_state = " + goodState,
		"disk 0":               "move = [0, 0, 2]\nnext_state = " + goodState,
		"disk 4":               "move = [4, 0, 2]\nnext_state = " + goodState,
		"fraction":             "move = [1.5, 0, 2]\nnext_state = " + goodState,
		"string":               "move = [\"1\", 0, 2]\nnext_state = " + goodState,
		"unclosed move":        "move = [1, 0, 2\nnext_state = " + goodState,
		"no next_state":        "move = [1, 0, 2]",
		"no move":              "next_state = " + goodState,
		"two pegs":             "move = [1, 0, 2]\nnext_state = [[3, 2], [1]]",
		"four pegs":            "move = [1, 0, 2]\nnext_state = [[3, 2], [], [1], []]",
		"peg not a list":       "move = [1, 0, 2]\nnext_state = [[3, 2], 0, [1]]",
		"missing disk":         "move = [1, 0, 2]\nnext_state = [[3], [], [1]]",
		"doubled disk":         "move = [1, 0, 2]\nnext_state = [[3, 2], [1], [1]]",
		"disk out of range":    "move = [1, 0, 2]\nnext_state = [[3, 2], [4], [1]]",
		"increasing peg":       "move = [1, 0, 2]\nnext_state = [[2, 3], [], [1]]",
		"python tuple":         "move = [1, 0, 2]\nnext_state = [(3, 2), (), (1)]",
		"unclosed state":       "move = [1, 0, 2]\nnext_state = [[3, 2], [], [1]",
		"json extra key":       `{"move": [1, 0, 2], "next_state": [[3, 2], [], [1]], "why": "rule"}`,
		"json missing key":     `{"move": [1, 0, 2]}`,
		"json wrong key":       `{"mv": [1, 0, 2], "next_state": [[3, 2], [], [1]]}`,
		"json bad state":       `{"move": [1, 0, 2], "next_state": [[3, 2, 1], [], []], "x": 1}`,
		"json array":           `[1, 0, 2]`,
		"json string number":   `{"move": [1, 0, "2"], "next_state": [[3, 2], [], [1]]}`,
		"json null peg":        `{"move": [1, 0, 2], "next_state": [[3, 2], null, [1]]}`,
		"json tool intent":     `{"tool_intent": {"tool": "read_file", "args": {}}}`,
		"json state not lists": `{"move": [1, 0, 2], "next_state": "[[3, 2], [], [1]]"}`,
	}
	for name, text := range format {
		_, err := hanoi.ParseReply(text, 3)
		assert.ErrorIs(t, err, hanoi.ErrFormat, name)
	}
	for name, text := range map[string]string{
		"empty":     "",
		"prose":     "I would move the smallest disk.",
		"bad json":  `{"move": [1, 0, 2], "next_state": [[3, 2], [], [1]]`,
		"ambiguous": `{"move": [1, 0, 2], "next_state": [[3, 2], [], [1]]} or {"move": [1, 0, 1], "next_state": [[3, 2], [1], []]}`,
	} {
		_, err := hanoi.ParseReply(text, 3)
		assert.Error(t, err, name)
		assert.NotErrorIs(t, err, hanoi.ErrFormat, "%s: not a task format problem but an unparseable reply", name)
	}
	_, err := hanoi.ParseReply("move = [1, 0, 2]\nnext_state = [[], [], [1]]", 0)
	assert.ErrorIs(t, err, hanoi.ErrConfig)
	// Legality is not checked: a legal-format illegal move passes.
	a, err := hanoi.ParseReply("move = [3, 0, 0]\nnext_state = [[3, 2, 1], [], []]", 3)
	require.NoError(t, err)
	assert.Equal(t, hanoi.Move{Disk: 3, From: 0, To: 0}, a.Move)
}

// run drives a task to its end with replies from reply, returning it.
func run(t *testing.T, n int, reply func(prompt string) string) *hanoi.Task {
	t.Helper()
	task, err := hanoi.New(n)
	require.NoError(t, err)
	for !task.Done() {
		a, err := task.Parse(reply(sim.PromptText(task.Messages())))
		require.NoError(t, err, "step %d", task.Steps())
		_, err = task.Advance(a)
		require.NoError(t, err)
	}
	return task
}

func TestRoundTripPerfectOracle(t *testing.T) {
	for _, o := range []hanoi.Oracle{{}, {JSON: true}} {
		task := run(t, 10, func(prompt string) string {
			text, err := o.Correct(sim.Query{Prompt: prompt})
			require.NoError(t, err)
			return text
		})
		assert.True(t, task.Solved())
		assert.Equal(t, 1023, task.Steps())
		assert.Zero(t, task.WrongSteps())
		assert.Zero(t, task.IllegalSteps())
		assert.Equal(t, hanoi.Goal(10), task.State())
		_, err := task.Advance(hanoi.Answer{})
		assert.ErrorIs(t, err, hanoi.ErrDone)
	}
}

func TestAdvanceCountsErrors(t *testing.T) {
	task, err := hanoi.New(3)
	require.NoError(t, err)
	assert.Equal(t, "hanoi:N=3", task.Fingerprint())
	assert.Nil(t, task.Previous())

	// Wrong direction: legal but wrong.
	_, err = task.Advance(hanoi.Answer{Move: hanoi.Move{Disk: 1, From: 0, To: 1}, Next: hanoi.State{{3, 2}, {1}, {}}})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 1, 0}, []int{task.Steps(), task.WrongSteps(), task.IllegalSteps()})
	assert.Equal(t, hanoi.State{{3, 2}, {1}, {}}, task.State())
	assert.Equal(t, &hanoi.Move{Disk: 1, From: 0, To: 1}, task.Previous())

	// The right move for that state (disk 2 to peg 2), but next_state
	// teleports disk 3: wrong and illegal, and the state follows it.
	_, err = task.Advance(hanoi.Answer{Move: hanoi.Move{Disk: 2, From: 0, To: 2}, Next: hanoi.State{{}, {1}, {3, 2}}})
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 1}, []int{task.Steps(), task.WrongSteps(), task.IllegalSteps()})
	assert.Equal(t, hanoi.State{{}, {1}, {3, 2}}, task.State())

	// Not a well-formed answer: refused, nothing changes.
	_, err = task.Advance(hanoi.Answer{Move: hanoi.Move{Disk: 1, From: 1, To: 2}, Next: hanoi.State{{}, {}, {3, 2}}})
	assert.ErrorIs(t, err, hanoi.ErrFormat)
	assert.Equal(t, 2, task.Steps())

	// The rule from here: prev moved disk 2, so disk 1 goes 1 -> 0 (odd n).
	done, err := task.Advance(hanoi.Answer{Move: hanoi.Move{Disk: 1, From: 1, To: 0}, Next: hanoi.State{{1}, {}, {3, 2}}})
	require.NoError(t, err)
	assert.False(t, done)
	assert.Equal(t, 2, task.WrongSteps())
	for !task.Done() {
		s := task.State()
		a, err := hanoi.CorrectAnswer(s, task.Previous())
		if err != nil { // the rule is stuck after errors: any legal move
			m := s.LegalMoves()[0]
			next, _ := s.Apply(m)
			a = hanoi.Answer{Move: m, Next: next}
		}
		_, err = task.Advance(a)
		require.NoError(t, err)
	}
	assert.Equal(t, 7, task.Steps())
	assert.False(t, task.Solved(), "an illegal step was applied")

	_, err = hanoi.New(0)
	assert.ErrorIs(t, err, hanoi.ErrConfig)
	_, err = hanoi.New(hanoi.MaxDisks + 1)
	assert.ErrorIs(t, err, hanoi.ErrConfig)
	var fe *sim.FieldError // a field error, so that a command says it in its flags
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Disks", fe.Fields[0].Name)
	assert.EqualError(t, err, fmt.Sprintf("invalid configuration: hanoi.Task: Disks = %d: use 1 to %d", hanoi.MaxDisks+1, hanoi.MaxDisks))
}

// TestSolvedMeansGoalAfterEveryLegalMove: README.md says `maker hanoi`'s
// `solved` "means every disk ends on peg 2 after exactly 2^N-1 legal
// moves". A run of right moves is solved; a run that reaches the goal in
// 2^N-1 steps, one of them illegal (a move whose next_state it does not
// give), is not. (Fewer legal moves cannot reach the goal, so "exactly"
// needs no case of its own: an early goal is an illegal step.)
func TestSolvedMeansGoalAfterEveryLegalMove(t *testing.T) {
	const n = 3
	play := func(t *testing.T, first *hanoi.Answer) *hanoi.Task {
		task, err := hanoi.New(n)
		require.NoError(t, err)
		if first != nil {
			_, err = task.Advance(*first)
			require.NoError(t, err)
		}
		for !task.Done() {
			a, err := hanoi.CorrectAnswer(task.State(), task.Previous())
			require.NoError(t, err)
			_, err = task.Advance(a)
			require.NoError(t, err)
		}
		return task
	}
	right := play(t, nil)
	assert.True(t, right.Solved())
	assert.Equal(t, hanoi.TotalSteps(n), right.Steps())

	// Step 1's right move is disk 1 from peg 0 to peg 2; this one names peg
	// 1 but gives the right next state, so every later step is right.
	illegal := play(t, &hanoi.Answer{Move: hanoi.Move{Disk: 1, From: 0, To: 1}, Next: hanoi.State{{3, 2}, {}, {1}}})
	require.True(t, illegal.State().Equal(hanoi.Goal(n)), "the goal is reached: %v", illegal.State())
	require.Equal(t, hanoi.TotalSteps(n), illegal.Steps())
	require.Equal(t, 1, illegal.IllegalSteps())
	assert.False(t, illegal.Solved(), "an illegal move on the way")
}

func TestWrongAnswers(t *testing.T) {
	// Along a 4-disk solution, every wrong variant is well formed, not the
	// correct answer, and distinct from the others.
	s := hanoi.Start(4)
	var prev *hanoi.Move
	for m := range hanoi.Moves(4) {
		prompt := sim.PromptText(hanoi.Messages(4, s, prev))
		correctText, err := hanoi.Oracle{}.Correct(sim.Query{Prompt: prompt})
		require.NoError(t, err)
		correct, err := hanoi.ParseReply(correctText, 4)
		require.NoError(t, err)
		assert.Equal(t, m, correct.Move)
		count := hanoi.WrongAnswers(s, prev)
		assert.Equal(t, len(s.LegalMoves())-1+80, count, "other legal moves + 3^4-1 states")
		seen := map[uint64]int{key(t, correct): -1}
		for v := range count {
			text, err := hanoi.Oracle{}.Wrong(sim.Query{Prompt: prompt}, v)
			require.NoError(t, err)
			a, err := hanoi.ParseReply(text, 4)
			require.NoError(t, err, text)
			k := key(t, a)
			prevV, dup := seen[k]
			require.False(t, dup, "variant %d repeats %d (-1: the correct answer): %s", v, prevV, text)
			seen[k] = v
			if v == 0 {
				assert.Equal(t, 1, a.Move.Disk, "variant 0 is a disk-1 mistake")
			}
		}
		again, err := hanoi.Oracle{}.Wrong(sim.Query{Prompt: prompt}, count)
		require.NoError(t, err)
		first, err := hanoi.Oracle{}.Wrong(sim.Query{Prompt: prompt}, 0)
		require.NoError(t, err)
		assert.Equal(t, first, again, "variants wrap around")
		s, err = s.Apply(m)
		require.NoError(t, err)
		prev = &m
	}
	_, err := hanoi.WrongAnswer(hanoi.Start(3), nil, -1)
	assert.Error(t, err)
}

func TestMalformedRefused(t *testing.T) {
	for _, st := range []struct {
		s    hanoi.State
		prev *hanoi.Move
	}{
		{hanoi.Start(3), nil},
		{hanoi.Start(1), nil},
		{hanoi.State{{3}, {2}, {1}}, &hanoi.Move{Disk: 1, From: 1, To: 2}},
		{hanoi.State{{5, 4}, {3, 2}, {1}}, &hanoi.Move{Disk: 2, From: 2, To: 1}},
	} {
		n := st.s.Disks()
		prompt := sim.PromptText(hanoi.Messages(n, st.s, st.prev))
		seen := map[string]bool{}
		for v := range 9 {
			text, err := hanoi.Oracle{}.Malformed(sim.Query{Prompt: prompt}, v)
			require.NoError(t, err)
			_, err = hanoi.ParseReply(text, n)
			assert.Error(t, err, "variant %d: %q", v, text)
			seen[text] = true
		}
		assert.GreaterOrEqual(t, len(seen), 8)
	}
}

func TestOracleRefusesOtherPrompts(t *testing.T) {
	_, err := hanoi.Oracle{}.Correct(sim.Query{Prompt: "What is 2+2?"})
	assert.ErrorIs(t, err, hanoi.ErrPrompt)
	_, err = hanoi.Oracle{}.Wrong(sim.Query{Prompt: "What is 2+2?"}, 0)
	assert.ErrorIs(t, err, hanoi.ErrPrompt)
	_, err = hanoi.Oracle{}.Malformed(sim.Query{Prompt: "What is 2+2?"}, 0)
	assert.ErrorIs(t, err, hanoi.ErrPrompt)
}

func TestOracleAfterErrors(t *testing.T) {
	// A state where the rule is stuck (reachable only after an error): the
	// oracle still answers, with a disk-1 move.
	prompt := sim.PromptText(hanoi.Messages(3, hanoi.Goal(3), &hanoi.Move{Disk: 1, From: 1, To: 2}))
	text, err := hanoi.Oracle{}.Correct(sim.Query{Prompt: prompt})
	require.NoError(t, err)
	assert.Equal(t, "move = [1, 2, 1]\nnext_state = [[], [1], [3, 2]]", text)
}

func TestWithSimulatedModel(t *testing.T) {
	// Every reply of the simulated model over real prompts: valid ones
	// parse (correct ones to the oracle's answer), flagged ones are refused
	// by the parser or cut off.
	model, err := sim.New(hanoi.Oracle{}, sim.Config{Seed: 11, P: 0.8, WrongAnswers: 4, FlagRate: 0.3})
	require.NoError(t, err)
	task, err := hanoi.New(8) // 255 steps: more than the correct replies below
	require.NoError(t, err)
	outcomes := map[string]int{}
	for range 200 {
		msgs := task.Messages()
		resp, err := model.GenerateContent(t.Context(), msgs)
		require.NoError(t, err)
		c := resp.Choices[0]
		outcome := c.GenerationInfo[sim.InfoOutcome].(string)
		outcomes[outcome]++
		a, err := task.Parse(c.Content)
		switch outcome {
		case "correct":
			require.NoError(t, err)
			want, err := hanoi.CorrectAnswer(task.State(), task.Previous())
			require.NoError(t, err)
			assert.Equal(t, want, a)
		case "wrong", "overlong":
			require.NoError(t, err, "a wrong answer is well formed")
		case "cut_off":
			assert.Equal(t, "length", c.StopReason)
		case "malformed":
			assert.Error(t, err, c.Content)
		}
		if outcome == "correct" {
			_, err = task.Advance(a)
			require.NoError(t, err)
		}
	}
	for _, o := range []string{"correct", "wrong", "overlong", "cut_off", "malformed"} {
		assert.Positive(t, outcomes[o], o)
	}
	assert.Zero(t, task.WrongSteps())
	assert.Equal(t, outcomes["correct"], task.Steps())
}

func ExampleCorrectMove() {
	s := hanoi.Start(3)
	var prev *hanoi.Move
	for range 3 {
		m, _ := hanoi.CorrectMove(s, prev)
		s, _ = s.Apply(m)
		prev = &m
		fmt.Println(m, s)
	}
	// Output:
	// [1, 0, 2] [[3, 2], [], [1]]
	// [2, 0, 1] [[3], [2], [1]]
	// [1, 2, 1] [[3], [2, 1], []]
}

func ExampleParseReply() {
	a, err := hanoi.ParseReply("```move = [1, 0, 2]```\n```next_state = [[3, 2], [], [1]]```", 3)
	fmt.Println(a.Move, a.Next, err)
	_, err = hanoi.ParseReply("move = [1, 0, 3]\nnext_state = [[3, 2], [], [1]]", 3)
	fmt.Println(err)
	// Output:
	// [1, 0, 2] [[3, 2], [], [1]] <nil>
	// answer not in the required format: move [1, 0, 3]: pegs are 0, 1 and 2
}
