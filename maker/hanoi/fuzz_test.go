package hanoi_test

import (
	"testing"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzParseReply: ParseReply never panics, and whatever it accepts is a
// well-formed answer that reads back the same from both of its spellings.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{
		"move = [1, 0, 2]\nnext_state = [[3, 2], [], [1]]",
		"```move = [1, 0, 2]```\n```next_state = [[3, 2], [], [1]]```",
		`{"move": [1, 0, 2], "next_state": [[3, 2], [], [1]]}`,
		"move = [1, 0, 3]\nnext_state = [[3, 2], [], [1]]",
		"move = [1.0, 0, 2e0]\nnext_state = [[3, 2], [], [1]]",
		"next_state = [[3, 2], [], [1]]\nmove = [2, 0, 1]",
		"move = [[1], 0, 2]\nnext_state = [[[3]], [], [1]]",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a, err := hanoi.ParseReply(text, 3)
		if err != nil {
			return
		}
		require.NoError(t, a.Next.Validate(3))
		for _, again := range []string{a.Text(), a.JSON()} {
			b, err := hanoi.ParseReply(again, 3)
			require.NoError(t, err, again)
			assert.Equal(t, a, b)
		}
		c, err := hanoi.AnswerFromValue(a.Value(), 3)
		require.NoError(t, err)
		assert.Equal(t, a, c)
	})
}
