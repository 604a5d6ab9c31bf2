package match

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// Judge is a discriminator: it decides whether a new answer means the same
// as one of the candidates (earlier classes' answers, in a shuffled order
// the matcher fixes), and which. It returns the candidate's index, or -1
// for none. For a run's classes to be reproducible it must be
// deterministic (a model at temperature 0 is close; a test's fake is
// exact); in a run a decided step's classes are in the journal, so a
// resume never asks again. Safe for concurrent use.
type Judge interface {
	Same(ctx context.Context, answer string, candidates []string) (int, error)
}

// ErrJudge: a judge could not be opened, failed, or answered with neither
// a candidate's number nor "none".
var ErrJudge = errors.New("judge failed")

// JudgeFunc adapts a function to Judge.
type JudgeFunc func(ctx context.Context, answer string, candidates []string) (int, error)

// Same calls f.
func (f JudgeFunc) Same(ctx context.Context, answer string, candidates []string) (int, error) {
	return f(ctx, answer, candidates)
}

// ModelJudge is a Judge that asks model, at temperature 0: the answer and
// the numbered candidates, and replies with a candidate's number or
// "none". A reply that is neither is ErrJudge (the race stops; a guess
// would make the classes the judge's noise). Cost: one model call per
// answer with a key not seen before in its step.
func ModelJudge(model llms.Model) Judge {
	return JudgeFunc(func(ctx context.Context, answer string, candidates []string) (int, error) {
		var b strings.Builder
		b.WriteString("Does the ANSWER mean the same as one of the CANDIDATES, for the purpose of the task? " +
			"Reply with the candidate's number only, or with none.\n\nANSWER:\n")
		b.WriteString(answer)
		b.WriteString("\n\nCANDIDATES:\n")
		for i, c := range candidates {
			fmt.Fprintf(&b, "%d. %s\n", i+1, c)
		}
		reply, err := llms.GenerateFromSinglePrompt(ctx, model, b.String(), llms.WithTemperature(0))
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrJudge, err)
		}
		return judgeReply(reply, len(candidates))
	})
}

// judgeReply reads a judge's reply: a candidate's number (1-based) or
// "none", surrounding white space and punctuation ignored.
func judgeReply(reply string, n int) (int, error) {
	r := strings.Trim(strings.ToLower(strings.TrimSpace(reply)), ".!\"'`*")
	if r == "none" {
		return -1, nil
	}
	i, err := strconv.Atoi(r)
	if err != nil || i < 1 || i > n {
		return 0, fmt.Errorf("%w: reply %q is not a number from 1 to %d or none", ErrJudge, reply, n)
	}
	return i - 1, nil
}

// OpenJudge opens a ModelJudge on the model a spec names, as OpenEmbedder
// does: "ollama:MODEL" or "openai:MODEL", at url or the provider's
// default. Errors wrap ErrJudge.
func OpenJudge(model, url string) (Judge, error) {
	m, err := openModel(model, url, false, ErrJudge)
	if err != nil {
		return nil, err
	}
	return ModelJudge(m), nil
}
