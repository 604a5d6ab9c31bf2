package modelsfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker/models"
)

func TestParseModelsFile(t *testing.T) {
	t.Setenv("TEAM_KEY", "test")
	lines := "# two servers\n\n  openai:gpt-4.1-mini;key=TEAM_KEY  \r\nopenai:qwen3=0.1/0.3;base=http://127.0.0.1:8000/v1;inflight=4\n"
	got, err := Parse([]byte(lines))
	require.NoError(t, err)
	assert.Equal(t, []string{"openai:gpt-4.1-mini;key=TEAM_KEY", "openai:qwen3=0.1/0.3;base=http://127.0.0.1:8000/v1;inflight=4"}, got)

	js := "[\n  \"sim\",\n  \"anthropic:claude-sonnet-4-5;rpm=50\"\n]\n"
	got, err = Parse([]byte(js))
	require.NoError(t, err)
	assert.Equal(t, []string{"sim", "anthropic:claude-sonnet-4-5;rpm=50"}, got)

	for in, want := range map[string]string{
		"sim\n\nopenai:\n":                   "line 3: \"openai:\"",
		"sim\nopenai:m;rpm=0\n":              "line 2: \"openai:m;rpm=0\": ",
		"# only a comment\n\n":               "no model in the file",
		"":                                   "no model in the file",
		"[]":                                 "no model in the file",
		"[\n \"sim\",\n \"bogus:x\"\n]":      "line 3: \"bogus:x\"",
		"[\n \"sim\",\n 42\n]":               "line 3: ",
		"[\n \"sim\",\n":                     "ends early",
		"[\"sim\"] [\"sim\"]":                "line 1: data after the JSON array",
		"[\n\"sim\" \"sim\"]":                "line 2: ",
		strings.Repeat("sim\n", MaxModels+1): "more than 256 models",
		"openai:m;key=sk-abcdefabcdefabcdefabcdef\n": "line 1: ",
		strings.Repeat("#", MaxBytes+1):              "at most 1048576",
		"[\n  {\"spec\": \"sim\"}\n]":                "line 2: ",
	} {
		_, err := Parse([]byte(in))
		require.Error(t, err, "%q", in)
		assert.True(t, errors.Is(err, models.ErrSpec), "%q: %v", in, err)
		assert.Contains(t, err.Error(), want, "%q", in)
	}
}

// FuzzModelsFile: any file either parses to specs that each pass
// models.CheckSpec, at most MaxModels of them, or is refused with models.ErrSpec;
// never a panic.
func FuzzModelsFile(f *testing.F) {
	for _, s := range []string{"sim\n", "# c\nopenai:m=1/2;base=http://127.0.0.1:1/v1\n", "[\"sim\", \"ollama:tiny\"]", "[\n1]", "[\"sim\"", "openai:m;rpm=0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		specs, err := Parse(data)
		if err != nil {
			if !errors.Is(err, models.ErrSpec) {
				t.Fatalf("%q: %v does not wrap models.ErrSpec", data, err)
			}
			return
		}
		if len(specs) == 0 || len(specs) > MaxModels {
			t.Fatalf("%q: %d specs", data, len(specs))
		}
		for _, s := range specs {
			if err := models.CheckSpec(s); err != nil {
				t.Fatalf("%q: spec %q accepted but models.CheckSpec says %v", data, s, err)
			}
		}
	})
}
