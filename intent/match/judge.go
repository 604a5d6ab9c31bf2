package match

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
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
	provider, name, ok := strings.Cut(model, ":")
	if !ok || name == "" {
		return nil, fmt.Errorf("%w: model %q: give ollama:MODEL or openai:MODEL", ErrJudge, model)
	}
	var m llms.Model
	var err error
	switch provider {
	case "ollama":
		if url == "" {
			url = os.Getenv("OLLAMA_HOST")
		}
		if url == "" {
			url = "http://127.0.0.1:11434"
		}
		if !strings.Contains(url, "://") {
			url = "http://" + url
		}
		m, err = ollama.New(ollama.WithModel(name), ollama.WithServerURL(url))
	case "openai":
		opts := []openai.Option{openai.WithModel(name)}
		if url != "" {
			opts = append(opts, openai.WithBaseURL(url))
		}
		if os.Getenv("OPENAI_API_KEY") == "" {
			opts = append(opts, openai.WithToken("none"))
		}
		m, err = openai.New(opts...)
	default:
		return nil, fmt.Errorf("%w: model %q: provider %q is not ollama or openai", ErrJudge, model, provider)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrJudge, model, err)
	}
	return ModelJudge(m), nil
}
