package match

import (
	"fmt"
	"os"
	"strings"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// langchainModel is a langchaingo client that both chats and embeds: what
// OpenEmbedder and OpenJudge open.
type langchainModel interface {
	llms.Model
	embeddings.EmbedderClient
}

// openModel opens the langchaingo client a model spec names:
// "ollama:MODEL" (an Ollama server at url, else $OLLAMA_HOST, else
// http://127.0.0.1:11434) or "openai:MODEL" (the OpenAI API at url, else
// its default, with $OPENAI_API_KEY or none). embed makes MODEL the
// client's embedding model rather than its chat model. Errors wrap kind.
func openModel(model, url string, embed bool, kind error) (langchainModel, error) {
	provider, name, ok := strings.Cut(model, ":")
	if !ok || name == "" {
		return nil, fmt.Errorf("%w: model %q: give ollama:MODEL or openai:MODEL", kind, model)
	}
	var m langchainModel
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
		if embed {
			opts = []openai.Option{openai.WithEmbeddingModel(name)}
		}
		if url != "" {
			opts = append(opts, openai.WithBaseURL(url))
		}
		if os.Getenv("OPENAI_API_KEY") == "" {
			opts = append(opts, openai.WithToken("none")) // a local server may need none; the API says so itself
		}
		m, err = openai.New(opts...)
	default:
		return nil, fmt.Errorf("%w: model %q: provider %q is not ollama or openai", kind, model, provider)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", kind, model, err)
	}
	return m, nil
}
