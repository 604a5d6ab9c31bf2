package match

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/tmc/langchaingo/embeddings"
)

// Embedder turns texts into vectors: langchaingo's embeddings.Embedder
// (OpenAI, Ollama and the others it speaks) satisfies it. It must be safe
// for concurrent use and, for a run's classes to be reproducible,
// deterministic (the same text, the same vector).
type Embedder interface {
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
}

// ErrEmbedder: an embedder could not be opened, or failed on an answer.
var ErrEmbedder = errors.New("embedder failed")

// OpenEmbedder opens the embedder a model spec names, through
// langchaingo: "ollama:MODEL" (an Ollama server at url, else $OLLAMA_HOST,
// else http://127.0.0.1:11434) or "openai:MODEL" (the OpenAI embeddings
// API at url, else https://api.openai.com/v1, with $OPENAI_API_KEY). It
// calls nothing until the first embedding. Errors wrap ErrEmbedder.
func OpenEmbedder(model, url string) (Embedder, error) {
	client, err := openModel(model, url, true, ErrEmbedder)
	if err != nil {
		return nil, err
	}
	e, err := embeddings.NewEmbedder(client, embeddings.WithStripNewLines(false))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrEmbedder, model, err)
	}
	return e, nil
}

// vectors caches an embedder's vectors by text, so that a text is
// embedded once while the cache holds it. Bounded: when full it starts
// over (a miss costs one more call, never a different answer from a
// deterministic embedder).
type vectors struct {
	embedder Embedder
	mu       sync.Mutex
	byText   map[string][]float32
}

const maxVectors = 1 << 14

// of returns the vectors of texts, embedding the ones not cached in one
// call.
func (v *vectors) of(ctx context.Context, texts ...string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missing []string
	v.mu.Lock()
	for i, t := range texts {
		if vec, ok := v.byText[t]; ok {
			out[i] = vec
		} else if !slices.Contains(missing, t) {
			missing = append(missing, t)
		}
	}
	v.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	got, err := v.embedder.EmbedDocuments(ctx, missing)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEmbedder, err)
	}
	if len(got) != len(missing) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedder, len(got), len(missing))
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.byText == nil || len(v.byText)+len(missing) > maxVectors {
		v.byText = make(map[string][]float32, len(missing))
	}
	for i, t := range missing {
		if len(got[i]) == 0 {
			return nil, fmt.Errorf("%w: an empty vector for %q", ErrEmbedder, t)
		}
		v.byText[t] = got[i]
	}
	for i, t := range texts {
		if out[i] == nil {
			out[i] = v.byText[t]
		}
	}
	return out, nil
}

// Cosine is the cosine similarity of two vectors (0 when either is zero
// or their lengths differ), computed in float64.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
